// Package auth decides who is calling: it turns an API key into a Principal
// (data owner, user, role, key kind), carries it in the request context, and
// holds the key and secret primitives (random keys with kind prefixes,
// SHA-256 digests, AES-GCM sealing of secrets that must be readable again).
// REST, the export API, GraphQL and the client API all authenticate
// through Middleware: API keys by their digest in api_keys, probe secrets
// (the client API's per-client secrets) by theirs on the client.
package auth

import (
	"context"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Kind is the kind of an API key; its string is also the key's prefix.
type Kind string

const (
	KindClientAdmin     Kind = "client_admin"
	KindClientAnalytics Kind = "client_analytics"
	KindExport          Kind = "export"
	// KindProbe is a probe's per-client secret, made when it registers
	// through the client API; it works there only.
	KindProbe Kind = "probe"
)

// Sentinel errors, the classes of apierr's table.
var (
	ErrUnauthenticated error = apierr.ErrUnauthenticated
	ErrForbidden       error = apierr.ErrForbidden
)

// Principal is the authenticated caller of one request.
type Principal struct {
	DataOwnerID   int64
	DataOwnerSlug string
	UserID        int64
	KeyID         int64
	Kind          Kind
	// Role is the creator's role capped by the key's effective_role.
	Role model.Role
	// UserRole is the creator's own role, uncapped.
	UserRole model.Role
	// Probe is the client a probe secret belongs to (Kind probe only; such
	// a caller has no user and no role).
	Probe *store.Probe
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the caller, or nil when the request is not authenticated.
func From(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// Require returns the caller when it has at least role min; a caller
// below it gets a 403 that names the role needed.
func Require(ctx context.Context, min model.Role) (*Principal, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrUnauthenticated
	}
	if !p.Role.AtLeast(min) {
		return nil, apierr.Errorf(apierr.ErrForbidden, "this operation needs the %s role or higher", min)
	}
	return p, nil
}
