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

// lookupCached waits until looking key up runs no statement (the cache
// holds it and is live), failing after 5 s.
func lookupCached(t *testing.T, e *apitest.Env, key string) store.KeyOwner {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		before := e.Counter.Count()
		k, err := e.Store.KeyByDigest(store.Counted(context.Background()), auth.Digest(key))
		if err != nil {
			t.Fatalf("lookup: %v", err)
		}
		if e.Counter.Count() == before {
			return k
		}
		if time.Now().After(deadline) {
			t.Fatal("the key is still read from the database 5 s after its first use: the cache is not used")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventually polls cond for up to 3 s (far below the cache's 30 s TTL, so
// only a notification can have made it true).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 3 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
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
	lookupCached(t, e, key)

	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE api_keys SET valid_until = $2 WHERE id = $1`, id, past); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the expiry written in another session is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(key))
		return err == nil && k.ValidUntil.Equal(past)
	})
	if r := e.Admin(t, http.MethodGet, "/isps", key, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("expired key answered %d", r.Status)
	}

	viewerKey, _ := o.NewKey(t, apitest.KeyOpts{UserRole: "editor"})
	lookupCached(t, e, viewerKey)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE users SET role = 'viewer' WHERE id = (SELECT user_id FROM api_keys WHERE digest = $1)`,
		auth.Digest(viewerKey)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the user's new role is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(viewerKey))
		return err == nil && k.UserRole != nil && *k.UserRole == "viewer"
	})

	if _, err := e.Store.Pool().Exec(ctx, `DELETE FROM api_keys WHERE digest = $1`, auth.Digest(viewerKey)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the key deleted in another session still authenticates", func() bool {
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
		lookupCached(t, e, key)
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
	lookupCached(t, e, key)

	var killed int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'fleetgraph key cache' AND datname = current_database()`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listeners, want 1", killed)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE api_keys SET valid_until = $2 WHERE id = $1`, id, past); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a change made while the listener was gone is not seen", func() bool {
		k, err := e.Store.KeyByDigest(ctx, auth.Digest(key))
		return err == nil && k.ValidUntil.Equal(past)
	})
	other, _ := o.NewKey(t, apitest.KeyOpts{})
	lookupCached(t, e, other) // the listener came back
}

// TestKeyCacheUnknownKeysNotCached: wrong keys always read the database
// (they cannot fill the cache), and a key created after a miss works.
func TestKeyCacheUnknownKeysNotCached(t *testing.T) {
	e := apitest.Get(t)
	ctx := store.Counted(context.Background())
	unknown := auth.NewKey(auth.KindClientAdmin)
	for range 3 {
		before := e.Counter.Count()
		if _, err := e.Store.KeyByDigest(ctx, auth.Digest(unknown)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
		if e.Counter.Count() == before {
			t.Fatal("an unknown key was answered without reading the database")
		}
	}
}
