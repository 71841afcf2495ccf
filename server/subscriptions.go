package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/eventhub"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/resolvers"
)

// Subscriptions (the events of package eventhub) are served on /graphql
// beside POST: over WebSocket (GET with Upgrade, graphql-transport-ws) and
// over Server-Sent Events (POST with Accept: text/event-stream). Both run
// without the request deadline, which would end every stream after it, and
// with the server's read and write time-outs lifted for their connection;
// keep-alives every keepAlive show a dead peer instead.

// keepAlive is the ping (WebSocket) and comment (SSE) interval.
const keepAlive = 15 * time.Second

// reauthEvery is how often a stream's key is checked again: a key revoked,
// expired or demoted ends its streams within it.
const reauthEvery = 30 * time.Second

type streamHandlers struct {
	webSocket, sse http.Handler
}

func subscriptions(es graphql.ExecutableSchema, res *resolvers.Resolver, o options) streamHandlers {
	newServer := func(t graphql.Transport, observe obs.GraphQL) *handler.Server {
		h := handler.New(es)
		h.AddTransport(t)
		h.Use(observe)
		h.Use(extension.Introspection{})
		h.Use(newInputLimits(limits.DefaultGraphQL))
		h.SetParserTokenLimit(limits.DefaultGraphQL.Tokens)
		h.SetValidationRulesFn(cappedRules(limits.DefaultGraphQL.Errors))
		configure(h, res, extension.FixedComplexityLimit(limits.Complexity))
		return h
	}
	ws := newServer(transport.Websocket{
		// The key travels in connection_init, not in cookies, so another
		// site's page cannot ride a user's credentials: every origin may
		// connect (dashboards are served from their own origins).
		Implementation:        transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{OriginPatterns: []string{"*"}}},
		InitFunc:              webSocketInit(res.Store),
		InitTimeout:           10 * time.Second,
		KeepAlivePingInterval: keepAlive,
	}, obs.GraphQL{Tracer: o.tracing.Tracer()}) // no operation label: one connection runs many operations at once
	sse := newServer(transport.SSE{KeepAlivePingInterval: keepAlive}, obs.GraphQL{Metrics: o.metrics, Tracer: o.tracing.Tracer()})
	sseChain := chi.Chain(limitBody, auth.Middleware(res.Store, true, graphqlAuthError, auth.KindClientAdmin), stayAuthenticated(res.Store),
		loaders.Middleware(res.Store))
	return streamHandlers{
		webSocket: longLived(ws),
		sse:       longLived(sseChain.Handler(sse)),
	}
}

// longLived lifts the server's read and write time-outs for a stream's
// connection.
func longLived(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		next.ServeHTTP(w, r)
	})
}

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func isEventStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// webSocketInit authenticates a WebSocket connection by the key in its
// connection_init payload: apiKey, X-API-KEY or Authorization: Bearer.
// Only admin keys are taken, as on POST /graphql.
func webSocketInit(keys auth.KeyStore) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		key := payload.GetString("apiKey")
		if key == "" {
			key = payload.GetString("X-API-KEY")
		}
		if key == "" {
			key = payload.GetString("x-api-key")
		}
		if key == "" {
			key = strings.TrimSpace(strings.TrimPrefix(payload.Authorization(), "Bearer "))
		}
		p, err := auth.Authenticate(ctx, keys, key, time.Now())
		if err == nil && p.Kind != auth.KindClientAdmin {
			err = apierr.Errorf(apierr.ErrForbidden, "an admin key (client_admin-...) is needed for subscriptions")
		}
		if err != nil {
			return refuseConnection(ctx, err)
		}
		ctx = eventhub.WithConnection(auth.With(ctx, p))
		ctx, cancel := context.WithCancel(ctx)
		go watchKey(ctx, cancel, keys, key, p)
		return ctx, nil, nil
	}
}

// refuseConnection closes a connection whose init failed as the
// graphql-transport-ws protocol says: 4403 Forbidden, with the reason
// (a bad key is no transient failure a client should retry).
func refuseConnection(ctx context.Context, err error) (context.Context, *transport.InitPayload, error) {
	_, msg, _ := apierr.Describe(err)
	ctx = transport.WithWebsocketCloseCode(ctx, 4403)
	return transport.AppendCloseReason(ctx, closeReason(msg)), nil, errors.New(msg)
}

// maxCloseReason is the most bytes a WebSocket close frame's reason may
// hold (RFC 6455: 125 bytes of payload, 2 of them the code); a longer one
// makes the frame invalid and the client sees 1006 instead of 4403.
const maxCloseReason = 123

// closeReason is msg cut to a close frame's reason: its first sentence when
// that fits, else its first bytes, on a character boundary, and "…".
func closeReason(msg string) string {
	if len(msg) <= maxCloseReason {
		return msg
	}
	if i := strings.Index(msg, ". "); i > 0 && i+1 <= maxCloseReason {
		return msg[:i+1]
	}
	cut := maxCloseReason - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// stayAuthenticated ends an SSE stream when its key stops being valid.
func stayAuthenticated(keys auth.KeyStore) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			go watchKey(ctx, cancel, keys, requestKey(r), auth.From(ctx))
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

func requestKey(r *http.Request) string {
	if k := r.Header.Get("X-API-KEY"); k != "" {
		return k
	}
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(v)
}

// watchKey checks the key every reauthEvery and cancels the stream when it
// no longer authenticates as it did (revoked, expired, another role).
func watchKey(ctx context.Context, cancel context.CancelFunc, keys auth.KeyStore, key string, was *auth.Principal) {
	t := time.NewTicker(reauthEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, err := auth.Authenticate(ctx, keys, key, time.Now())
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, auth.ErrUnauthenticated) || (err == nil && (p.Role != was.Role || p.DataOwnerID != was.DataOwnerID)) {
			cancel()
			return
		}
	}
}
