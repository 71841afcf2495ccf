// Package eventhub feeds GraphQL subscriptions from the event stream: the
// process's one listening connection (package listener) tells the Hub of every committed event
// (its id and data owner), the Hub loads the row once through the data
// owner's scoped store and fans it out in memory to that owner's
// subscribers whose role may read it and whose types it matches.
package eventhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/listener"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// readableFrom is the least role that may read each event type; a type not
// listed is read by nobody until it is added (fail closed). Everything the
// stream tells today is readable by viewers (docs/design.md "Roles": viewers
// read everything, webhook deliveries included).
var readableFrom = map[string]model.Role{
	store.EventAnomalyCreated:       model.RoleViewer,
	store.EventAnomalyResolved:      model.RoleViewer,
	store.EventClientRegistered:     model.RoleViewer,
	store.EventClientOffline:        model.RoleViewer,
	store.EventClientOnline:         model.RoleViewer,
	store.EventClientDisabled:       model.RoleViewer,
	store.EventHealthWarning:        model.RoleViewer,
	store.EventHealthCritical:       model.RoleViewer,
	store.EventHealthRecovered:      model.RoleViewer,
	store.EventStudyExecutionFailed: model.RoleViewer,
	store.EventWebhookAutoDisabled:  model.RoleViewer,
	store.EventWebClientsLimited:    model.RoleViewer,
}

// Readable reports whether role may read events of type typ.
func Readable(role model.Role, typ string) bool {
	min, ok := readableFrom[typ]
	return ok && role.AtLeast(min)
}

// Events loads events through the owner-scoped store.
type Events interface {
	EventByID(ctx context.Context, ownerID int64, id string) (store.Event, error)
	EventsAfter(ctx context.Context, ownerID, seq int64, limit int) ([]store.Event, error)
}

// Hub fans the event stream out to subscribers.
type Hub struct {
	events  Events
	log     *slog.Logger
	notices chan store.EventNotice

	mu     sync.Mutex
	owners map[int64]map[*sub]struct{}
	perKey map[int64]int
}

type sub struct {
	owner, key int64
	role       model.Role
	types      []string // empty: all
	ch         chan *model.Event
	lastSeq    int64
	closed     bool
}

// NewHub answers a hub over events; Notice feeds it and Run works it.
func NewHub(events Events, log *slog.Logger) *Hub {
	return &Hub{events: events, log: log, notices: make(chan store.EventNotice, 4096),
		owners: map[int64]map[*sub]struct{}{}, perKey: map[int64]int{}}
}

// The hub is the listener's subscriber of store.EventsChannel (package
// listener): Listening resyncs, Notify loads and fans out the event.

// Listening resyncs every subscriber: notifications may have been missed.
func (h *Hub) Listening() { h.Notice(store.EventNotice{Resync: true}) }

// Deaf: nothing to do until the listener is back (Listening resyncs).
func (h *Hub) Deaf() {}

// Notify takes an event's notification.
func (h *Hub) Notify(payload string) {
	if n, ok := store.ParseEventNotice(payload); ok {
		h.Notice(n)
	}
}

// Notice takes a notification; it never blocks: when the
// hub is that far behind, it drops it and resyncs instead.
func (h *Hub) Notice(n store.EventNotice) {
	select {
	case h.notices <- n:
	default:
		select {
		case h.notices <- store.EventNotice{Resync: true}:
		default: // a resync is surely queued already
		}
	}
}

// Run loads and fans out notified events until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-h.notices:
			if n.Resync {
				h.resync(ctx)
			} else {
				h.deliver(ctx, n)
			}
		}
	}
}

func (h *Hub) deliver(ctx context.Context, n store.EventNotice) {
	if !h.watched(n.DataOwnerID) {
		return
	}
	e, err := h.events.EventByID(ctx, n.DataOwnerID, n.ID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			h.log.Warn("event stream: loading a notified event failed", "event_id", n.ID, "err", err)
		}
		return
	}
	h.fanOut(n.DataOwnerID, []store.Event{e}, false)
}

// resync catches every subscriber up after the listener (re)connected or
// notifications were dropped: the events after the last one it got.
func (h *Hub) resync(ctx context.Context) {
	h.mu.Lock()
	from := map[int64]int64{}
	for owner, subs := range h.owners {
		first := true
		for s := range subs {
			if first || s.lastSeq < from[owner] {
				from[owner], first = s.lastSeq, false
			}
		}
	}
	h.mu.Unlock()
	for owner, seq := range from {
		if seq == 0 {
			continue // subscribed before it saw anything: nothing to catch up from
		}
		es, err := h.events.EventsAfter(ctx, owner, seq, limits.SubscriptionCatchUp)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("event stream: catching up failed", "data_owner_id", owner, "err", err)
			}
			continue
		}
		h.fanOut(owner, es, true)
	}
}

func (h *Hub) watched(owner int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.owners[owner]) > 0
}

// fanOut sends es to the owner's subscribers that may read them; in a
// catch-up, only what each has not had yet.
func (h *Hub) fanOut(owner int64, es []store.Event, catchingUp bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.owners[owner] {
		for _, e := range es {
			if s.closed || (catchingUp && e.Seq <= s.lastSeq) {
				continue
			}
			if !Readable(s.role, e.Type) || (len(s.types) > 0 && !slices.Contains(s.types, e.Type)) {
				continue
			}
			select {
			case s.ch <- toModel(e):
				s.lastSeq = max(s.lastSeq, e.Seq)
			default:
				h.log.Warn("event stream: a subscriber lagged too far behind and was ended", "data_owner_id", owner, "key_id", s.key)
				h.removeLocked(s)
			}
		}
	}
}

func toModel(e store.Event) *model.Event {
	return &model.Event{ID: e.ID, Type: e.Type, Timestamp: e.OccurredAt, Data: model.JSON{Value: e.Data}, Seq: e.Seq}
}

// ErrTooMany is the refusal of a subscription over a limit.
var ErrTooMany = apierr.Errorf(apierr.ErrTooManyRequests, "too many subscriptions: at most %d per API key and %d per connection; end one first",
	limits.SubscriptionsPerKey, limits.SubscriptionsPerConnection)

// Caller is who subscribes.
type Caller struct {
	DataOwnerID, KeyID int64
	Role               model.Role
}

// Subscribe answers the caller's events of types (all when empty) from now
// on, until ctx ends (then the channel is closed).
func (h *Hub) Subscribe(ctx context.Context, c Caller, types []string) (<-chan *model.Event, error) {
	for _, t := range types {
		if _, ok := readableFrom[t]; !ok {
			return nil, apierr.FieldErrors{"types": {fmt.Sprintf("%q is not an event type (see webhookEventTypes)", t)}}.Err()
		}
	}
	conn := connFrom(ctx)
	h.mu.Lock()
	if h.perKey[c.KeyID] >= limits.SubscriptionsPerKey || (conn != nil && !conn.take()) {
		h.mu.Unlock()
		return nil, ErrTooMany
	}
	s := &sub{owner: c.DataOwnerID, key: c.KeyID, role: c.Role, types: types, ch: make(chan *model.Event, limits.SubscriberLag)}
	if h.owners[c.DataOwnerID] == nil {
		h.owners[c.DataOwnerID] = map[*sub]struct{}{}
	}
	h.owners[c.DataOwnerID][s] = struct{}{}
	h.perKey[c.KeyID]++
	h.mu.Unlock()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.removeLocked(s)
		if conn != nil {
			conn.give()
		}
	}()
	return s.ch, nil
}

// removeLocked ends s (h.mu held); ending it twice is nothing.
func (h *Hub) removeLocked(s *sub) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	delete(h.owners[s.owner], s)
	if len(h.owners[s.owner]) == 0 {
		delete(h.owners, s.owner)
	}
	if h.perKey[s.key]--; h.perKey[s.key] <= 0 {
		delete(h.perKey, s.key)
	}
}

// Subscribers answers how many subscriptions are open (for tests and
// metrics).
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, subs := range h.owners {
		n += len(subs)
	}
	return n
}

// Connection counts one WebSocket connection's subscriptions.
type Connection struct {
	mu sync.Mutex
	n  int
}

func (c *Connection) take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= limits.SubscriptionsPerConnection {
		return false
	}
	c.n++
	return true
}

func (c *Connection) give() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
}

type connKey struct{}

// WithConnection marks ctx as a WebSocket connection's, whose
// subscriptions count against limits.SubscriptionsPerConnection.
func WithConnection(ctx context.Context) context.Context {
	return context.WithValue(ctx, connKey{}, &Connection{})
}

func connFrom(ctx context.Context) *Connection {
	c, _ := ctx.Value(connKey{}).(*Connection)
	return c
}

// Start makes the process's hub, told by l, working until ctx ends.
func Start(ctx context.Context, st *store.Store, l *listener.Listener, log *slog.Logger) *Hub {
	h := NewHub(st, log)
	l.Subscribe(store.EventsChannel, h)
	go h.Run(ctx)
	return h
}
