// Package listener holds the process's one LISTEN connection to PostgreSQL
// and tells its subscribers, each on the channel it subscribed to: the
// caches of API keys and probes (store, channel fleetgraph_auth) and the
// subscriptions' event hub (stream, channel fleetgraph_events). No
// subscriber depends on another: each is told when the connection starts
// listening, when it drops and of every notification on its channel.
//
// The connection is its own, outside the pool, named Application in
// pg_stat_activity; it reconnects RetryAfter after it drops, until Close.
package listener

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Application names the listening connection in pg_stat_activity.
const Application = "fleetgraph listener"

// RetryAfter is how long the listener waits before reconnecting.
const RetryAfter = time.Second

// Subscriber is told of one channel. Its methods run on the listener and
// must not block.
type Subscriber interface {
	// Listening: the connection listens from now on (at start and after
	// every reconnection); notifications may have been missed before it.
	Listening()
	// Deaf: the connection dropped; nothing is told until Listening.
	Deaf()
	// Notify: a notification of the channel, with its payload.
	Notify(payload string)
}

// Listener is the one listening connection and its subscribers.
type Listener struct {
	cfg  *pgx.ConnConfig
	mu   sync.Mutex
	subs map[string][]Subscriber
	stop func()
}

// New answers a listener connecting as cfg says (a copy is used, named
// Application, without cfg's tracer: the listener runs no request's
// statements). Subscribe, then Start.
func New(cfg *pgx.ConnConfig) *Listener {
	c := cfg.Copy()
	c.RuntimeParams["application_name"] = Application
	c.Tracer = nil
	return &Listener{cfg: c, subs: map[string][]Subscriber{}}
}

// Subscribe has s told of channel's notifications (call before Start).
func (l *Listener) Subscribe(channel string, s Subscriber) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		panic("listener: Subscribe after Start")
	}
	l.subs[channel] = append(l.subs[channel], s)
}

// Start listens until Close, reconnecting when the connection drops.
func (l *Listener) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l.mu.Lock()
	l.stop = func() { cancel(); <-done }
	l.mu.Unlock()
	go func() {
		defer close(done)
		for {
			l.listen(ctx)
			l.each(Subscriber.Deaf)
			select {
			case <-ctx.Done():
				return
			case <-time.After(RetryAfter):
			}
		}
	}()
}

// Close stops listening (the subscribers were told Deaf) and waits for it.
func (l *Listener) Close() {
	l.mu.Lock()
	stop := l.stop
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// listen receives notifications until the connection fails or ctx ends.
func (l *Listener) listen(ctx context.Context) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close(context.Background()) }()
	for channel := range l.subs {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			return
		}
	}
	l.each(Subscriber.Listening)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		for _, s := range l.subs[n.Channel] {
			s.Notify(n.Payload)
		}
	}
}

func (l *Listener) each(f func(Subscriber)) {
	for _, subs := range l.subs {
		for _, s := range subs {
			f(s)
		}
	}
}
