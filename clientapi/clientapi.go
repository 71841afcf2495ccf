// Package clientapi is fleetgraph's own API for the probes, at
// /client_api/v1 (docs/client-api.md): a probe registers with a
// registration key and gets a client UUID and a per-client secret (register.go),
// fetches its configs with an ETag (config.go) and reports its documents,
// which are checked against its capability and stored by the importer's
// code path (report.go). Client analytics keys report for web-embedded
// clients that do not register. Authentication is auth.Middleware's; this
// package holds the handlers and the one table of its routes.
package clientapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/respond"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Base is the API's path.
const Base = "/client_api/v1"

// API answers the client API's requests.
type API struct {
	Store  *store.Store
	Sealer *auth.Sealer // opens the service credentials a delivered config names
	Logger *slog.Logger
	// RateLimits limits each probe's requests (nil: no limit).
	RateLimits *ratelimit.Limiter
	writes     writer // groups concurrent reports' documents (writer.go)
	// registering admits registrations to the database (register.go).
	registering lane
}

// registrationLane is how many registrations run in the database at once:
// the registrations of one key take turns on its row (the count of
// registrations left) anyway, and more of them waiting there would hold
// pool connections that check-ins and reports need.
const registrationLane = 2

// lane admits at most n requests at once to a piece of work; the others
// wait in the server, holding no database connection. The zero lane is
// made on first use with registrationLane places.
type lane struct {
	once  sync.Once
	slots chan struct{}
}

// enter waits for a place (false when ctx ends first); leave gives it back.
func (l *lane) enter(ctx context.Context) bool {
	l.once.Do(func() { l.slots = make(chan struct{}, registrationLane) })
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *lane) leave() { <-l.slots }

// reportKinds maps the report paths onto the document kinds they store.
var reportKinds = map[string]string{
	"/measurements":          vocab.KindMeasurement,
	"/client_reports":        vocab.KindClientReport,
	"/event_bundles":         vocab.KindEventBundle,
	"/network_requests":      vocab.KindNetworkRequest,
	"/user_feedbacks":        vocab.KindUserFeedback,
	"/system_status_records": vocab.KindSystemStatus,
}

// route is one path of the API: who may call it, what it takes and what
// it answers. Mount serves the table and OpenAPI describes it.
type route struct {
	method, path, summary string
	// kinds may call it (auth.Middleware); none: no key (the
	// registration key is in the body).
	kinds []auth.Kind
	// body is the JSON request body's Go type (nil: no body); report
	// routes take a JSON array or NDJSON of documents instead.
	body   any
	report bool
	// status is the success's status, answer its body's Go type.
	status int
	answer any
	handle func(*API) http.HandlerFunc
}

// routes is the table of the API's routes: every path, and who may call it.
func routes() []route {
	rs := []route{
		{method: http.MethodPost, path: "/register", summary: "Register a probe: a registration key for a client UUID and its secret (shown once)",
			body: registrationBody{}, status: http.StatusCreated, answer: registered{},
			handle: func(a *API) http.HandlerFunc { return a.register }},
		{method: http.MethodGet, path: "/config", summary: "Check in and fetch the probe's configs (ETag; 304 when If-None-Match names it)",
			kinds: []auth.Kind{auth.KindProbe}, status: http.StatusOK, answer: checkIn{},
			handle: func(a *API) http.HandlerFunc { return a.config }},
	}
	paths := make([]string, 0, len(reportKinds))
	for path := range reportKinds {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	for _, path := range paths {
		kind := reportKinds[path]
		rs = append(rs, route{method: http.MethodPost, path: path, summary: "Report " + kind + " documents",
			kinds: []auth.Kind{auth.KindProbe, auth.KindClientAnalytics}, report: true, status: http.StatusOK, answer: reported{},
			handle: func(a *API) http.HandlerFunc { return a.report(kind) }})
	}
	return rs
}

// Mount adds the routes to r (mounted at Base).
func (a *API) Mount(r chi.Router) {
	rate := a.RateLimits.Middleware(a.authError)
	for _, rt := range routes() {
		if len(rt.kinds) == 0 {
			r.Method(rt.method, rt.path, rt.handle(a))
			continue
		}
		r.With(auth.Middleware(a.Store, false, a.authError, rt.kinds...), rate).Method(rt.method, rt.path, rt.handle(a))
	}
}

// authError answers an authentication failure.
func (a *API) authError(w http.ResponseWriter, r *http.Request, err error) { a.fail(w, r, err) }

// fail answers err in the REST APIs' error shape; an internal error's
// cause goes to the log only.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	class, msg, fields := apierr.Describe(err)
	if class == apierr.ErrInternal && !apierr.Canceled(err) {
		a.Logger.ErrorContext(r.Context(), "client api", "path", r.URL.Path, "error", err)
	}
	respond.JSON(w, class.Status, respond.ErrorBody{Message: msg, Errors: fields})
}

// refuseDisabled is the 403 of a disabled probe.
func refuseDisabled(p *store.Probe) error {
	if p.DisabledAt == nil {
		return nil
	}
	reason := ""
	if p.DisabledReason != nil && *p.DisabledReason != "" {
		reason = ": " + *p.DisabledReason
	}
	return apierr.Errorf(apierr.ErrForbidden, "this client is disabled%s", reason)
}
