package listener_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/listener"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// recorder is a subscriber that writes down what it is told.
type recorder struct {
	mu   sync.Mutex
	told []string
}

func (r *recorder) add(s string) { r.mu.Lock(); defer r.mu.Unlock(); r.told = append(r.told, s) }

func (r *recorder) Listening()            { r.add("listening") }
func (r *recorder) Deaf()                 { r.add("deaf") }
func (r *recorder) Notify(payload string) { r.add(payload) }

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.told)
}

// waitFor waits until r was told want, in order, failing after 5 s.
func (r *recorder) waitFor(t *testing.T, name string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Equal(r.got(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s was told %q, want %q", name, r.got(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestListenerTellsEachSubscriberItsChannel(t *testing.T) {
	ctx := context.Background()
	db, st, err := testdb.Create(ctx, "fleetgraph_listener", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	t.Cleanup(st.Close)
	notify := func(channel, payload string) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
			t.Fatal(err)
		}
	}

	l := listener.New(st.Pool().Config().ConnConfig)
	keys, probes, events := &recorder{}, &recorder{}, &recorder{}
	l.Subscribe("fleetgraph_test_auth", keys)
	l.Subscribe("fleetgraph_test_auth", probes)
	l.Subscribe("fleetgraph_test_events", events)
	l.Start()
	t.Cleanup(l.Close)
	for name, r := range map[string]*recorder{"keys": keys, "probes": probes, "events": events} {
		r.waitFor(t, name, "listening")
	}

	t.Run("each subscriber receives its channel's notifications only", func(t *testing.T) {
		notify("fleetgraph_test_auth", "a1")
		notify("fleetgraph_test_events", "e1")
		notify("fleetgraph_test_other", "nobody's")
		keys.waitFor(t, "keys", "listening", "a1")
		probes.waitFor(t, "probes", "listening", "a1")
		events.waitFor(t, "events", "listening", "e1")
	})

	t.Run("a lost connection reconnects", func(t *testing.T) {
		var killed int
		if err := st.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, listener.Application).Scan(&killed); err != nil {
			t.Fatal(err)
		}
		if killed != 1 {
			t.Fatalf("terminated %d listening connections, want 1", killed)
		}
		events.waitFor(t, "events", "listening", "e1", "deaf", "listening")
		keys.waitFor(t, "keys", "listening", "a1", "deaf", "listening")
		notify("fleetgraph_test_events", "e2")
		notify("fleetgraph_test_auth", "a2")
		events.waitFor(t, "events", "listening", "e1", "deaf", "listening", "e2")
		keys.waitFor(t, "keys", "listening", "a1", "deaf", "listening", "a2")
		probes.waitFor(t, "probes", "listening", "a1", "deaf", "listening", "a2")
	})

	t.Run("Close stops listening", func(t *testing.T) {
		l.Close()
		events.waitFor(t, "events", "listening", "e1", "deaf", "listening", "e2", "deaf")
		deadline := time.Now().Add(5 * time.Second)
		for {
			var n int
			if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE application_name = $1 AND datname = current_database()`, listener.Application).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d listening connections 5 s after Close", n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}
