package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// KeyStore finds a key, or a probe's secret, by its digest.
type KeyStore interface {
	KeyByDigest(ctx context.Context, digest []byte) (store.KeyOwner, error)
	ProbeByDigest(ctx context.Context, digest []byte) (store.Probe, error)
	// Database names the database the keys are looked up in (name, host
	// and port; store.Store.Database).
	Database() string
}

// Authenticate resolves a presented key into a Principal. It fails with
// ErrUnauthenticated for unknown, not yet valid or expired keys. A key
// with the probe- prefix is a probe secret, looked up among the clients.
func Authenticate(ctx context.Context, keys KeyStore, key string, now time.Time) (*Principal, error) {
	if key == "" {
		return nil, ErrUnauthenticated
	}
	if strings.HasPrefix(key, string(KindProbe)+"-") {
		return authenticateProbe(ctx, keys, key)
	}
	k, err := keys.KeyByDigest(ctx, Digest(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, unknownKey(keys, key)
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	if now.Before(k.ValidFrom) || !now.Before(k.ValidUntil) || k.UserID == nil || k.UserRole == nil {
		return nil, ErrUnauthenticated
	}
	role := model.Role(*k.UserRole)
	if k.EffectiveRole != nil {
		role = role.Min(model.Role(*k.EffectiveRole))
	}
	return &Principal{
		DataOwnerID:   k.DataOwnerID,
		DataOwnerSlug: k.DataOwnerSlug,
		UserID:        *k.UserID,
		KeyID:         k.KeyID,
		Kind:          Kind(k.Kind),
		Role:          role,
		UserRole:      model.Role(*k.UserRole),
	}, nil
}

// unknownKey is the 401 of a key that is not in the database. A key of
// fleetgraph's form (a kind's prefix) that is not there was most likely
// made on another database, by a bootstrap or serve --demo run with another
// DATABASE_URL: the answer names the server's database (name, host and
// port; never a user, a password or anything of a data owner) and what to
// do. Anything else is the plain 401.
func unknownKey(keys KeyStore, key string) error {
	kind, _, ok := strings.Cut(key, "-")
	if !ok || !slices.Contains([]Kind{KindClientAdmin, KindClientAnalytics, KindExport}, Kind(kind)) {
		return ErrUnauthenticated
	}
	return apierr.Errorf(apierr.ErrUnauthenticated, "unknown API key: this server's database (%s) holds no such %s key. "+
		"A key printed by fleetgraph bootstrap or serve --demo is in the database that command used: run it with the "+
		"server's --database-url (DATABASE_URL), or send a key this server made", keys.Database(), kind)
}

// authenticateProbe resolves a probe secret: the caller is the client,
// acting for its data owner with no user and no role.
func authenticateProbe(ctx context.Context, keys KeyStore, key string) (*Principal, error) {
	p, err := keys.ProbeByDigest(ctx, Digest(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate probe: %w", err)
	}
	return &Principal{DataOwnerID: p.DataOwnerID, DataOwnerSlug: p.DataOwnerSlug, Kind: KindProbe, Probe: &p}, nil
}

// ErrorWriter writes an authentication failure in the interface's own
// shape; apierr.Describe tells its status, code and message.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// Middleware authenticates every request with the key in X-API-KEY (or,
// when bearer is set, Authorization: Bearer) and admits only keys of the
// given kinds. Missing or bad keys fail with ErrUnauthenticated (401); keys
// of another kind with ErrForbidden (403).
func Middleware(keys KeyStore, bearer bool, fail ErrorWriter, kinds ...Kind) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("X-API-KEY")
			v, hasBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if key == "" && bearer && hasBearer {
				key = strings.TrimSpace(v)
			}
			if key == "" && hasBearer && !bearer {
				fail(w, r, errBearerNotRead)
				return
			}
			p, err := Authenticate(r.Context(), keys, key, time.Now())
			switch {
			case err != nil:
				fail(w, r, err)
				return
			case !slices.Contains(kinds, p.Kind):
				fail(w, r, wrongKind(p.Kind, kinds))
				return
			}
			next.ServeHTTP(w, r.WithContext(With(r.Context(), p)))
		})
	}
}

// errBearerNotRead is the 401 of a request to a REST API that sent its key
// only as Authorization: Bearer.
var errBearerNotRead = apierr.Errorf(apierr.ErrUnauthenticated,
	"missing API key: send it in the X-API-KEY header (Authorization: Bearer is read on /graphql only)")

// wrongKind is the 403 answered for a key of kind got where only keys of
// the kinds want are taken: it names the kinds and how to get the right key.
func wrongKind(got Kind, want []Kind) error {
	names := make([]string, len(want))
	how := make([]string, len(want))
	for i, k := range want {
		names[i], how[i] = withArticle(k), howToGet[k]
	}
	return apierr.Errorf(apierr.ErrForbidden, "%s cannot be used here: this API takes %s; %s",
		withArticle(got), strings.Join(names, " or "), strings.Join(how, "; "))
}

// howToGet tells how a key of each kind is made.
var howToGet = map[Kind]string{
	KindClientAdmin: "fleetgraph bootstrap prints one, and an admin creates more with " +
		"POST /client_admin_api/v1/client_admin_api_keys or the clientAdminApiKeyCreate mutation",
	KindExport: "fleetgraph bootstrap prints one, and an admin creates more with " +
		"POST /client_admin_api/v1/export_api_keys or the exportApiKeyCreate mutation",
	KindClientAnalytics: "an admin creates one with " +
		"POST /client_admin_api/v1/client_analytics_api_keys or the clientAnalyticsApiKeyCreate mutation",
	KindProbe: "a probe gets its secret once, from POST /client_api/v1/register with a registration key",
}

// withArticle is "a client_admin key", "an export key", "a probe secret".
func withArticle(k Kind) string {
	noun := string(k) + " key"
	if k == KindProbe {
		noun = "probe secret"
	}
	if k != "" && strings.ContainsRune("aeiou", rune(k[0])) {
		return "an " + noun
	}
	return "a " + noun
}
