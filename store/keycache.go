package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Found keys are kept in memory so that most requests authenticate without
// a round trip to PostgreSQL. A cached key is as current as the database:
//
//   - triggers on api_keys, users and data_owners (migration 00013) notify
//     channel authChannel when anything a key's authentication depends on
//     changes or goes, in whatever session or server it happens, and every
//     server listening empties its cache on the notification;
//   - the store's own writes empty the cache before they return
//     (DeleteAPIKey), so this server never answers from a stale entry after
//     its own change;
//   - the cache is used only while the listening connection is up: when it
//     drops, the cache is emptied and every lookup reads the database until
//     the connection is back;
//   - an entry lives keyCacheTTL at most, which also bounds how stale
//     last_used_at gets (a lookup that reads the database records the use).
//
// Validity in time (valid_from, valid_until) is checked on every request
// against the cached times (auth.Authenticate). Unknown digests are not
// cached: a flood of wrong keys cannot grow the cache.

// authChannel is the notification channel of the triggers.
const authChannel = "fleetgraph_auth"

// keyCacheApplication names the listening connection in pg_stat_activity.
const keyCacheApplication = "fleetgraph key cache"

const (
	keyCacheTTL  = 30 * time.Second
	keyCacheSize = 10000
	// listenRetry is how long the listener waits before reconnecting.
	listenRetry = time.Second
)

type keyCache struct {
	mu sync.Mutex
	// live is set while the listener receives notifications.
	live bool
	// gen counts the times the cache was emptied: a lookup stores what it
	// read only when no change was announced while it read.
	gen     uint64
	entries map[[sha256.Size]byte]cachedKey
}

type cachedKey struct {
	k  KeyOwner
	at time.Time
}

func (c *keyCache) get(digest []byte, now time.Time) (KeyOwner, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[[sha256.Size]byte(digest)]
	if !ok || !c.live || now.Sub(e.at) >= keyCacheTTL {
		return KeyOwner{}, false
	}
	return e.k, true
}

// generation answers the generation a lookup starts in, and whether what it
// reads may be cached at all.
func (c *keyCache) generation() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, c.live
}

// put caches k when the cache was not emptied since generation gen.
func (c *keyCache) put(digest []byte, k KeyOwner, gen uint64, now time.Time) {
	if len(digest) != sha256.Size {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	if len(c.entries) >= keyCacheSize {
		clear(c.entries)
	}
	c.entries[[sha256.Size]byte(digest)] = cachedKey{k: k, at: now}
}

// changed empties the cache after a change this server made.
func (c *keyCache) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// flush empties the cache and sets whether it may be used from now on.
func (c *keyCache) flush(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.entries)
}

// CacheKeys turns on the key cache: it listens for the triggers'
// notifications on a connection of its own (outside the pool) until the
// store is closed, reconnecting when the connection drops. The connection
// also listens for the event stream (OnEvents).
func (s *Store) CacheKeys() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.stopListen = func() { cancel(); <-done }
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = keyCacheApplication
	cfg.Tracer = nil // the listener is not a request's statement
	go func() {
		defer close(done)
		for {
			s.listen(ctx, cfg)
			s.keys.flush(false)
			select {
			case <-ctx.Done():
				return
			case <-time.After(listenRetry):
			}
		}
	}()
}

// listen receives notifications until the connection fails or ctx ends.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ctx, "LISTEN "+authChannel+"; LISTEN "+eventsChannel); err != nil {
		return
	}
	// Listening from here on: whatever changes later is announced.
	s.keys.flush(true)
	s.tellEvents(EventNotice{Resync: true})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		if n.Channel == eventsChannel {
			s.eventNotice(n.Payload)
			continue
		}
		s.keys.flush(true)
	}
}

// The same listening connection carries the event stream's notifications
// (channel fleetgraph_events, migration 00016): one LISTEN connection per
// process, whatever listens in memory.

// EventNotice is one notification of the event stream: an event of the
// data owner was committed. Resync (no event) says the listener has just
// (re)connected, so that notifications may have been missed before it.
type EventNotice struct {
	ID          string `json:"id"`
	DataOwnerID int64  `json:"data_owner_id"`
	Resync      bool   `json:"-"`
}

// OnEvents has fn told of every event notification while CacheKeys'
// listener runs (fn must not block: it runs on the listener).
func (s *Store) OnEvents(fn func(EventNotice)) { s.onEvents.Store(&fn) }

func (s *Store) tellEvents(n EventNotice) {
	if fn := s.onEvents.Load(); fn != nil {
		(*fn)(n)
	}
}

func (s *Store) eventNotice(payload string) {
	var n EventNotice
	if err := json.Unmarshal([]byte(payload), &n); err != nil || n.ID == "" || n.DataOwnerID == 0 {
		return // not one of the trigger's
	}
	s.tellEvents(n)
}
