package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// KeyStore finds a key by its digest.
type KeyStore interface {
	KeyByDigest(ctx context.Context, digest []byte) (store.KeyOwner, error)
}

// Authenticate resolves a presented key into a Principal. It fails with
// ErrUnauthenticated for unknown, not yet valid or expired keys.
func Authenticate(ctx context.Context, keys KeyStore, key string, now time.Time) (*Principal, error) {
	if key == "" {
		return nil, ErrUnauthenticated
	}
	k, err := keys.KeyByDigest(ctx, Digest(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
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

// ErrorWriter writes an authentication failure in the interface's own
// shape; apierr.Describe tells its status, code and message.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// Middleware authenticates every request with the key in X-API-KEY (or,
// when bearer is set, Authorization: Bearer) and admits only keys of kind.
// Missing or bad keys fail with ErrUnauthenticated (401); keys of another
// kind with ErrForbidden (403).
func Middleware(keys KeyStore, kind Kind, bearer bool, fail ErrorWriter) func(http.Handler) http.Handler {
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
			case p.Kind != kind:
				fail(w, r, wrongKind(p.Kind, kind))
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
// kind want are taken: it names both kinds and how to get the right key.
func wrongKind(got, want Kind) error {
	return apierr.Errorf(apierr.ErrForbidden, "%s key cannot be used here: this API takes %s key; %s",
		withArticle(got), withArticle(want), howToGet[want])
}

// howToGet tells how a key of each kind is made.
var howToGet = map[Kind]string{
	KindClientAdmin: "fleetgraph bootstrap prints one, and an admin creates more with " +
		"POST /client_admin_api/v1/client_admin_api_keys or the clientAdminApiKeyCreate mutation",
	KindExport: "fleetgraph bootstrap prints one, and an admin creates more with " +
		"POST /client_admin_api/v1/export_api_keys or the exportApiKeyCreate mutation",
	KindClientAnalytics: "an admin creates one with " +
		"POST /client_admin_api/v1/client_analytics_api_keys or the clientAnalyticsApiKeyCreate mutation",
}

// withArticle is "a client_admin", "an export".
func withArticle(k Kind) string {
	if k != "" && strings.ContainsRune("aeiou", rune(k[0])) {
		return "an " + string(k)
	}
	return "a " + string(k)
}
