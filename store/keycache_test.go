package store_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// lookupCached waits until looking secret up (a key, or a probe's secret,
// with lookup) runs no statement (the cache holds it and is live), failing
// after 5 s.
func lookupCached[V any](t *testing.T, e *apitest.Env, lookup func(context.Context, []byte) (V, error), secret string) V {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		before := e.Counter.Count()
		v, err := lookup(store.Counted(context.Background()), auth.Digest(secret))
		if err != nil {
			t.Fatalf("lookup: %v", err)
		}
		if e.Counter.Count() == before {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatal("still read from the database 5 s after its first use: the cache is not used")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killListener terminates the caches' listening connection.
func killListener(t *testing.T, e *apitest.Env) {
	t.Helper()
	var killed int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'fleetgraph listener' AND datname = current_database()`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listeners, want 1", killed)
	}
}

// TestKeyCacheSeesChangesMadeElsewhere: a key changed or removed in another
// session (another server, an operator's psql) is seen at once by the
// server that cached it, through the triggers' notification.
func TestKeyCacheSeesChangesMadeElsewhere(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keycache")
	ctx := context.Background()
	key, id := o.NewKey(t, apitest.KeyOpts{})
	lookupCached(t, e, e.Store.KeyByDigest, key)

	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE api_keys SET valid_until = $2 WHERE id = $1`, id, past); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "the expiry written in another session is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(key))
		return err == nil && k.ValidUntil.Equal(past)
	})
	if r := e.Admin(t, http.MethodGet, "/isps", key, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("expired key answered %d", r.Status)
	}

	viewerKey, _ := o.NewKey(t, apitest.KeyOpts{UserRole: "editor"})
	lookupCached(t, e, e.Store.KeyByDigest, viewerKey)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE users SET role = 'viewer' WHERE id = (SELECT user_id FROM api_keys WHERE digest = $1)`,
		auth.Digest(viewerKey)); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "the user's new role is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(viewerKey))
		return err == nil && k.UserRole != nil && *k.UserRole == "viewer"
	})

	if _, err := e.Store.Pool().Exec(ctx, `DELETE FROM api_keys WHERE digest = $1`, auth.Digest(viewerKey)); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "the key deleted in another session still authenticates", func() bool {
		_, err := e.Store.KeyByDigest(ctx, auth.Digest(viewerKey))
		return errors.Is(err, store.ErrNotFound)
	})
}

// TestKeyCacheOwnDeleteIsImmediate: a key deleted through the store stops
// working before DeleteAPIKey returns, without waiting for a notification.
func TestKeyCacheOwnDeleteIsImmediate(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keycachedel")
	ctx := context.Background()
	for range 20 {
		key, id := o.NewKey(t, apitest.KeyOpts{})
		lookupCached(t, e, e.Store.KeyByDigest, key)
		if err := e.Store.DeleteAPIKey(ctx, o.ID, string(auth.KindClientAdmin), id); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.KeyByDigest(ctx, auth.Digest(key)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted key looked up: %v", err)
		}
	}
}

// TestKeyCacheSurvivesListenerLoss: when the listening connection is
// killed, changes made meanwhile are still seen (the cache is emptied and
// bypassed until the listener is back), and the cache is used again once
// it reconnects.
func TestKeyCacheSurvivesListenerLoss(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "keycachekill")
	ctx := context.Background()
	key, id := o.NewKey(t, apitest.KeyOpts{})
	lookupCached(t, e, e.Store.KeyByDigest, key)

	killListener(t, e)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE api_keys SET valid_until = $2 WHERE id = $1`, id, past); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "a change made while the listener was gone is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(key))
		return err == nil && k.ValidUntil.Equal(past)
	})
	other, _ := o.NewKey(t, apitest.KeyOpts{})
	lookupCached(t, e, e.Store.KeyByDigest, other) // the listener came back
}

// TestAuthCacheUnknownSecretsNotCached: wrong keys and probe secrets
// always read the database (they cannot fill the caches).
func TestAuthCacheUnknownSecretsNotCached(t *testing.T) {
	e := apitest.Get(t)
	ctx := store.Counted(context.Background())
	lookups := map[auth.Kind]func(context.Context, []byte) error{
		auth.KindClientAdmin: func(ctx context.Context, d []byte) error { _, err := e.Store.KeyByDigest(ctx, d); return err },
		auth.KindProbe:       func(ctx context.Context, d []byte) error { _, err := e.Store.ProbeByDigest(ctx, d); return err },
	}
	for kind, lookup := range lookups {
		unknown := auth.NewKey(kind)
		for range 3 {
			before := e.Counter.Count()
			if err := lookup(ctx, auth.Digest(unknown)); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("unknown %s secret: %v", kind, err)
			}
			if e.Counter.Count() == before {
				t.Fatalf("an unknown %s secret was answered without reading the database", kind)
			}
		}
	}
}
