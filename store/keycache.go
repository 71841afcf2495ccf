package store

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Found API keys and probes are kept in memory so that most requests
// authenticate without a round trip to PostgreSQL. A cached key or probe is
// as current as the database:
//
//   - triggers on api_keys, users and data_owners (migration 00013), and on
//     clients, registration_keys and capabilities (migration 00026), notify
//     channel AuthChannel when anything authenticating a key or a probe
//     reads changes or goes, in whatever session or server it happens, and
//     every server listening (package listener) empties both caches on the notification (a
//     probe's check-in, which writes last_seen_at, does not notify);
//   - the store's own writes empty the cache before they return
//     (DeleteAPIKey; DisableClient, AssignConfig, UpdateCapability ... for
//     probes), so this server never answers from a stale entry after its
//     own change;
//   - the caches are used only while the listening connection is up: when
//     it drops, they are emptied and every lookup reads the database until
//     the connection is back;
//   - an entry lives authCacheTTL at most, which also bounds how stale a
//     key's last_used_at gets (a lookup that reads the database records the
//     use).
//
// Validity is checked on every request against the cached values: a key's
// valid_from and valid_until (auth.Authenticate), a probe's disabled_at and
// report_until (package clientapi). Unknown digests are not cached: a flood
// of wrong keys or secrets cannot grow a cache.

// AuthChannel is the notification channel of the triggers.
const AuthChannel = "fleetgraph_auth"

const (
	authCacheTTL = 30 * time.Second
	// authCacheSize bounds each cache (evict).
	authCacheSize = 10000
)

// authCache holds what authentication found, V, by digest; its zero value
// is an empty cache that is not live.
type authCache[V any] struct {
	mu sync.Mutex
	// live is set while the listener receives notifications.
	live bool
	// gen counts the times the cache was emptied: a lookup stores what it
	// read only when no change was announced while it read.
	gen     uint64
	entries map[[sha256.Size]byte]cached[V]
}

type cached[V any] struct {
	v  V
	at time.Time
}

func (c *authCache[V]) get(digest []byte, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	if len(digest) != sha256.Size {
		return zero, false
	}
	e, ok := c.entries[[sha256.Size]byte(digest)]
	if !ok || !c.live || now.Sub(e.at) >= authCacheTTL {
		return zero, false
	}
	return e.v, true
}

// generation answers the generation a lookup starts in, and whether what it
// reads may be cached at all.
func (c *authCache[V]) generation() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, c.live
}

// put caches v when the cache was not emptied since generation gen.
func (c *authCache[V]) put(digest []byte, v V, gen uint64, now time.Time) {
	if len(digest) != sha256.Size {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]cached[V]{}
	}
	if len(c.entries) >= authCacheSize {
		c.evict(now)
	}
	c.entries[[sha256.Size]byte(digest)] = cached[V]{v: v, at: now}
}

// evict makes room in a full cache: the entries past their time go, and
// when that is not an eighth of them, as many others (map order: at
// random), so that the busy ones mostly stay.
func (c *authCache[V]) evict(now time.Time) {
	room := authCacheSize / 8
	for d, e := range c.entries {
		if now.Sub(e.at) >= authCacheTTL {
			delete(c.entries, d)
		}
	}
	for d := range c.entries {
		if authCacheSize-len(c.entries) >= room {
			return
		}
		delete(c.entries, d)
	}
}

// changed empties the cache after a change this server made (call it once
// the change is committed).
func (c *authCache[V]) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// flush empties the cache and sets whether it may be used from now on.
func (c *authCache[V]) flush(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.entries)
}

// flushAuth empties both caches on a notification or a change of the
// listener.
func (s *Store) flushAuth(live bool) {
	s.keys.flush(live)
	s.probes.flush(live)
}

// AuthCaches is the caches' subscriber of AuthChannel on the process's
// listener (package listener): they are used while it listens.
func (s *Store) AuthCaches() AuthCaches { return AuthCaches{s} }

// AuthCaches empties the caches of keys and probes on every notification
// and whenever the listener starts or stops listening.
type AuthCaches struct{ s *Store }

// Listening turns the caches on, empty.
func (a AuthCaches) Listening() { a.s.flushAuth(true) }

// Deaf empties the caches and turns them off: lookups read the database.
func (a AuthCaches) Deaf() { a.s.flushAuth(false) }

// Notify empties the caches: something they hold changed.
func (a AuthCaches) Notify(string) { a.s.flushAuth(true) }
