package clientapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/respond"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// reported is the answer of a report: how many documents were accepted
// (stored, or already stored as sent) and refused, and one entry per
// refused document.
type reported struct {
	Accepted int         `json:"accepted"`
	Refused  int         `json:"refused"`
	Errors   []itemError `json:"errors"`
}

// itemError is the refusal of one document: its position (index among the
// documents from 0; line too for NDJSON), its id when it has one, a status
// as if it had been sent alone, the rule it broke and why.
type itemError struct {
	Index   int    `json:"index"`
	Line    int    `json:"line,omitempty"`
	ID      string `json:"id,omitempty"`
	Status  int    `json:"status"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// item is one document of a report.
type item struct {
	raw     []byte
	line    int // NDJSON line, 0 for array items
	doc     store.Document
	refusal *itemError
}

func (it *item) refuse(status int, rule, msg string) {
	if it.refusal == nil {
		it.refusal = &itemError{Line: it.line, ID: it.doc.DocID, Status: status, Rule: rule, Message: msg}
	}
}

// report stores the documents of one kind a probe (or a client analytics
// key, for web clients) sends: a JSON array or NDJSON. Each document is
// parsed and checked on its own; the accepted ones are stored as
// "fleetgraph import" stores them (importer.Store), the refused ones
// answered per item. 200 when every document was accepted, 207 when some
// were, 422 when none was.
func (a *API) report(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := auth.From(r.Context())
		if err := refuseReporter(p, time.Now()); err != nil {
			a.fail(w, r, err)
			return
		}
		items, err := readItems(r)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		for i := range items {
			it := &items[i]
			if it.doc, err = store.ParseDocument(kind, it.raw); err != nil {
				it.refuse(http.StatusUnprocessableEntity, "document", err.Error())
			}
		}
		if p.Probe != nil {
			admitProbe(p.Probe, kind, items)
		} else if err := a.admitWebClients(r, p.DataOwnerID, items); err != nil {
			a.fail(w, r, err)
			return
		}
		out, err := a.store(r, p.DataOwnerID, items)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		status := http.StatusOK
		switch {
		case out.Accepted == 0 && allStatus(out.Errors, http.StatusTooManyRequests):
			status = http.StatusTooManyRequests
		case out.Accepted == 0:
			status = http.StatusUnprocessableEntity
		case out.Refused > 0:
			status = http.StatusMultiStatus
		}
		respond.JSON(w, status, out)
	}
}

// allStatus tells whether every refusal of errs has status.
func allStatus(errs []itemError, status int) bool {
	for _, e := range errs {
		if e.Status != status {
			return false
		}
	}
	return len(errs) > 0
}

// refuseReporter: a disabled probe, or one past its registration key's
// usage limit, reports nothing (403).
func refuseReporter(p *auth.Principal, now time.Time) error {
	if p.Probe == nil {
		return nil
	}
	if err := refuseDisabled(p.Probe); err != nil {
		return err
	}
	if u := p.Probe.ReportUntil; u != nil && !now.Before(*u) {
		return apierr.Errorf(apierr.ErrForbidden, "this client's usage limit ended at %s: its registration key's "+
			"usage_limit_days allow no reports after it", u.UTC().Format(time.RFC3339))
	}
	return nil
}

// readItems splits the body into documents: a JSON array, or NDJSON (one
// document per line, blank lines skipped). A body that is not read (too
// large), a malformed array, no documents or more than
// limits.MaxReportDocuments are refused as a whole.
func readItems(r *http.Request) ([]item, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	var items []item
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		var docs []json.RawMessage
		if err := json.Unmarshal(t, &docs); err != nil {
			return nil, apierr.BadRequestf("malformed JSON array: %v (send a JSON array of documents, or NDJSON: one document per line)", err)
		}
		for _, d := range docs {
			items = append(items, item{raw: d})
		}
	} else {
		for n, line := range bytes.Split(raw, []byte("\n")) {
			if line = bytes.TrimSuffix(line, []byte("\r")); len(bytes.TrimSpace(line)) > 0 {
				items = append(items, item{raw: line, line: n + 1})
			}
		}
	}
	switch {
	case len(items) == 0:
		return nil, apierr.BadRequestf("the body holds no documents: send a JSON array of documents, or NDJSON (one document per line)")
	case len(items) > limits.MaxReportDocuments:
		return nil, apierr.BadRequestf("the body holds %d documents; a report takes at most %d: send them in several requests",
			len(items), limits.MaxReportDocuments)
	}
	return items, nil
}

// admitProbe refuses the documents a probe may not report: those naming
// another client, and measurements its capability does not allow.
func admitProbe(p *store.Probe, kind string, items []item) {
	for i := range items {
		it := &items[i]
		if it.refusal != nil {
			continue
		}
		if cu := it.doc.ClientUUID; cu == nil || *cu != p.UUID {
			it.refuse(http.StatusUnprocessableEntity, "client_uuid",
				fmt.Sprintf("client_uuid must be this probe's own UUID %s", p.UUID))
			continue
		}
		if kind == vocab.KindMeasurement {
			if rule, msg := capabilityRefusal(p, it.doc); rule != "" {
				it.refuse(http.StatusUnprocessableEntity, rule, msg)
			}
		}
	}
}

// capabilityRefusal names the rule of the probe's capability a measurement
// breaks ("" when it breaks none), and says why. A type or subject in a
// forbidden_* list, or outside a non-empty allowed_* list, is refused;
// types compare as document types, subjects as study.subject.
func capabilityRefusal(p *store.Probe, d store.Document) (rule, msg string) {
	c := p.Capability
	name := "its capability"
	if p.CapabilityName != nil {
		name = fmt.Sprintf("capability %q", *p.CapabilityName)
	}
	typ, subject := "", ""
	if d.Type != nil {
		typ = *d.Type
	}
	if d.Subject != nil {
		subject = *d.Subject
	}
	switch {
	case slices.Contains(c.ForbiddenMeasurementTypes, typ):
		return "forbidden_measurement_types", fmt.Sprintf("measurement type %s is forbidden by %s", typ, name)
	case subject != "" && slices.Contains(c.ForbiddenMeasurementSubjects, subject):
		return "forbidden_measurement_subjects", fmt.Sprintf("subject %s is forbidden by %s", subject, name)
	case len(c.AllowedMeasurementTypes) > 0 && !slices.Contains(c.AllowedMeasurementTypes, typ):
		return "allowed_measurement_types", fmt.Sprintf("measurement type %s is not among the types %s allows (%v)",
			typ, name, c.AllowedMeasurementTypes)
	case len(c.AllowedMeasurementSubjects) > 0 && !slices.Contains(c.AllowedMeasurementSubjects, subject):
		if subject == "" {
			return "allowed_measurement_subjects", fmt.Sprintf("the measurement names no study.subject, and %s allows only %v",
				name, c.AllowedMeasurementSubjects)
		}
		return "allowed_measurement_subjects", fmt.Sprintf("subject %s is not among the subjects %s allows (%v)",
			subject, name, c.AllowedMeasurementSubjects)
	}
	return "", ""
}

// admitWebClients checks the clients a client analytics key's documents
// name: missing ones are made (type web), within the data owner's bound on
// new web clients (ratelimit.Limiter.WebClients: past it, 429); another
// data owner's client, a registered probe (it reports with its own secret)
// and a disabled client are refused.
func (a *API) admitWebClients(r *http.Request, ownerID int64, items []item) error {
	var uuids []string
	for _, it := range items {
		if it.refusal == nil && it.doc.ClientUUID != nil && !slices.Contains(uuids, *it.doc.ClientUUID) {
			uuids = append(uuids, *it.doc.ClientUUID)
		}
	}
	if len(uuids) == 0 {
		return nil
	}
	bound := a.RateLimits.WebClientBound()
	clients, limit, err := a.Store.EnsureWebClients(r.Context(), ownerID, uuids, bound.DefaultLimit(), bound.BoundPeriod())
	if err != nil {
		return err
	}
	byUUID := map[string]store.ReportingClient{}
	limited := 0
	for _, c := range clients {
		byUUID[c.UUID] = c
		if c.Limited {
			limited++
		}
	}
	a.RateLimits.WebClientsRefused(limited)
	for i := range items {
		it := &items[i]
		if it.refusal != nil || it.doc.ClientUUID == nil {
			continue
		}
		switch c := byUUID[*it.doc.ClientUUID]; {
		case c.Limited:
			it.refuse(http.StatusTooManyRequests, "client_uuid", fmt.Sprintf("client %s is not made: the client analytics keys "+
				"of this data owner may create %d new clients per %s, and did (its analytics_new_clients setting, "+
				"else FLEETGRAPH_ANALYTICS_NEW_CLIENTS)", c.UUID, limit, bound.BoundPeriod()))
		case c.Foreign:
			it.refuse(http.StatusUnprocessableEntity, "client_uuid", store.ErrForeignClient.Error())
		case c.Registered:
			it.refuse(http.StatusUnprocessableEntity, "client_uuid",
				"client_uuid names a registered probe: a probe reports with its own secret")
		case c.DisabledAt != nil:
			it.refuse(http.StatusForbidden, "client_disabled", "client "+c.UUID+" is disabled")
		}
	}
	return nil
}

// store stores the accepted documents as "fleetgraph import" does
// (importer.Store, grouped with concurrent reports by the writer) and
// counts.
func (a *API) store(r *http.Request, ownerID int64, items []item) (reported, error) {
	var docs []store.Document
	var at []int // index in items of each doc
	for i, it := range items {
		if it.refusal == nil {
			docs, at = append(docs, it.doc), append(at, i)
		}
	}
	bad, err := a.writes.write(r.Context(), a.Store, ownerID, docs)
	if err != nil {
		return reported{}, err
	}
	for i, err := range bad {
		switch {
		case errors.Is(err, errIDInGroup):
			items[at[i]].refuse(http.StatusConflict, "id", err.Error())
		case errors.Is(err, store.ErrTakenID):
			// Reporting is idempotent on the id for the client that
			// owns it; no client replaces another's documents.
			items[at[i]].refuse(http.StatusConflict, "id", fmt.Sprintf("id %q is another client's document", items[at[i]].doc.DocID))
		case errors.Is(err, store.ErrForeignClient):
			items[at[i]].refuse(http.StatusUnprocessableEntity, "client_uuid", err.Error())
		default:
			items[at[i]].refuse(http.StatusUnprocessableEntity, "document", err.Error())
		}
	}
	out := reported{Errors: []itemError{}}
	for i, it := range items {
		if it.refusal == nil {
			out.Accepted++
			continue
		}
		e := *it.refusal
		e.Index = i
		out.Errors = append(out.Errors, e)
	}
	out.Refused = len(out.Errors)
	return out, nil
}
