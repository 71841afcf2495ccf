package fleetprocs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// receiver is the webhook endpoint: it answers 200 to every delivery and
// counts the deliveries of each event id.
type receiver struct {
	url  string
	srv  *http.Server
	mu   sync.Mutex
	got  map[string]int // event id → deliveries
	reqs int
}

func newReceiver(addr string) (*receiver, error) {
	ln, err := freeListener(addr)
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	rc := &receiver{url: "http://" + ln.Addr().String() + "/hook", got: map[string]int{}}
	rc.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			ID string `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &env) != nil || env.ID == "" {
			http.Error(w, "no event id", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.got[env.ID]++
		rc.reqs++
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *receiver) close() { _ = rc.srv.Close() }

// delivered answers a copy of the deliveries per event id and the requests.
func (rc *receiver) delivered() (map[string]int, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.got))
	for k, v := range rc.got {
		out[k] = v
	}
	return out, rc.reqs
}

// subscription is `subscription { events { id } }` over WebSocket
// (graphql-transport-ws) on one process, from one start of it.
type subscription struct {
	proc  *process
	pid   int
	conn  *websocket.Conn
	after int64 // the events owed to it: seq above this (-1: not yet known)
	mu    sync.Mutex
	got   map[string]bool
	ended string // why it ended, if it did
}

type subscriptions struct {
	mu  sync.Mutex
	all []*subscription
}

func (ss *subscriptions) open(ctx context.Context, p *process, key string) error {
	conn, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return fmt.Errorf("subscription on process %d: %w", p.n, err)
	}
	conn.SetReadLimit(1 << 20)
	type message struct {
		ID      string         `json:"id,omitempty"`
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload,omitempty"`
	}
	initCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := wsjson.Write(initCtx, conn, message{Type: "connection_init", Payload: map[string]any{"apiKey": key}}); err != nil {
		conn.CloseNow()
		return err
	}
	var ack message
	if err := wsjson.Read(initCtx, conn, &ack); err != nil || ack.Type != "connection_ack" {
		conn.CloseNow()
		return fmt.Errorf("subscription on process %d: connection_init answered %+v, %v", p.n, ack, err)
	}
	if err := wsjson.Write(initCtx, conn, message{ID: "1", Type: "subscribe",
		Payload: map[string]any{"query": `subscription { events { id } }`}}); err != nil {
		conn.CloseNow()
		return err
	}
	s := &subscription{proc: p, pid: p.pid(), conn: conn, after: -1, got: map[string]bool{}}
	ss.mu.Lock()
	ss.all = append(ss.all, s)
	ss.mu.Unlock()
	go s.read(context.WithoutCancel(ctx))
	return nil
}

func (s *subscription) read(ctx context.Context) {
	for {
		var m struct {
			Type    string `json:"type"`
			Payload struct {
				Data struct {
					Events struct {
						ID string `json:"id"`
					} `json:"events"`
				} `json:"data"`
			} `json:"payload"`
		}
		if err := wsjson.Read(ctx, s.conn, &m); err != nil {
			s.end(err.Error())
			return
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, s.conn, map[string]string{"type": "pong"})
		case "next":
			s.mu.Lock()
			s.got[m.Payload.Data.Events.ID] = true
			s.mu.Unlock()
		case "error", "complete":
			s.end(fmt.Sprintf("%s message", m.Type))
			return
		}
	}
}

func (s *subscription) end(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == "" {
		s.ended = strings.TrimSpace(why)
	}
}

// received answers a copy of the event ids received.
func (s *subscription) received() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.got))
	for k := range s.got {
		out[k] = true
	}
	return out
}

// allHaveOne reports whether every subscription whose start is not known
// yet has an event (and then knows it).
func (ss *subscriptions) allHaveOne() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.all {
		s.mu.Lock()
		n := len(s.got)
		s.mu.Unlock()
		if n == 0 {
			return false
		}
	}
	return true
}

// settle sets after to seq of every subscription that has an event but no
// start yet: it was listening before that seq was read, so every event
// above it was committed while it listened.
func (ss *subscriptions) settle(seq int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range ss.all {
		s.mu.Lock()
		if s.after < 0 && len(s.got) > 0 {
			s.after = seq
		}
		s.mu.Unlock()
	}
}

func (ss *subscriptions) list() []*subscription {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]*subscription(nil), ss.all...)
}

func (ss *subscriptions) closeAll() {
	for _, s := range ss.list() {
		_ = s.conn.CloseNow()
	}
}
