// Package auth decides who is calling: it turns an API key into a Principal
// (data owner, user, role, key kind), carries it in the request context, and
// holds the key and secret primitives (random keys with kind prefixes,
// SHA-256 digests, AES-GCM sealing of secrets that must be readable again).
// REST, the export API and GraphQL all authenticate through Middleware.
package auth

import (
	"context"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
)

// Kind is the kind of an API key; its string is also the key's prefix.
type Kind string

const (
	KindClientAdmin     Kind = "client_admin"
	KindClientAnalytics Kind = "client_analytics"
	KindExport          Kind = "export"
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

// Require returns the caller when it has at least role min.
func Require(ctx context.Context, min model.Role) (*Principal, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrUnauthenticated
	}
	if !p.Role.AtLeast(min) {
		return nil, ErrForbidden
	}
	return p, nil
}
