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
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/ratelimit"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Base is the API's path.
const Base = "/client_api/v1"

// Limits of a request.
const (
	// MaxBodyBytes caps a request body (after gzip decompression): a 413.
	MaxBodyBytes = 8 << 20
	// MaxDocuments caps the documents of one report: a 400.
	MaxDocuments = 1000
)

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

// Mount adds the routes to r (mounted at Base): every path of the API,
// and who may call it.
func (a *API) Mount(r chi.Router) {
	probe := auth.Middleware(a.Store, false, a.authError, auth.KindProbe)
	reporter := auth.Middleware(a.Store, false, a.authError, auth.KindProbe, auth.KindClientAnalytics)
	rate := a.RateLimits.Middleware(a.authError)

	r.Post("/register", a.register)
	r.With(probe, rate).Get("/config", a.config)
	for path, kind := range reportKinds {
		r.With(reporter, rate).Post(path, a.report(kind))
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
	rest.WriteJSON(w, class.Status, rest.ErrorBody{Message: msg, Errors: fields})
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
