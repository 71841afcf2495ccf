package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// documentJSON decodes a stored JSON document for the graph.
func documentJSON(raw []byte) model.JSON {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return model.JSON{}
	}
	return model.JSON{Value: v}
}

// documentClientUUID is the client_uuid a document names, lower-cased.
func documentClientUUID(d model.JSON) (string, bool) {
	m, _ := d.Value.(map[string]any)
	u, ok := m["client_uuid"].(string)
	return strings.ToLower(u), ok && u != ""
}

// measurementPaging parses Client.measurements' arguments into a store
// filter and a page size (1 to 100). The cursor is the page's last
// (created_at, document id), opaque to callers: made of what the caller
// can read anyway (no row ids, which count every data owner's documents),
// and only a position, so one from another client or data owner reads
// nothing but the client's own measurements past it.
func measurementPaging(filter *gqlmodel.MeasurementFilter, first *int64, after *string) (store.MeasurementFilter, int, error) {
	var f store.MeasurementFilter
	if filter != nil {
		f.Type, f.Subject, f.Since, f.Until = filter.Type, filter.Subject, filter.Since, filter.Until
		// gqlgen's Time decodes "" as the zero time: not a time asked for.
		for name, t := range map[string]*time.Time{"filter.since": f.Since, "filter.until": f.Until} {
			if t != nil && t.IsZero() {
				return f, 0, apierr.Invalid(name, "must be an RFC 3339 time, e.g. 2026-11-01T06:00:00Z")
			}
		}
		if f.Since != nil && f.Until != nil && f.Since.After(*f.Until) {
			return f, 0, apierr.Invalid("filter.since", "must not be after filter.until")
		}
		// A blank type or subject names nothing: a mistake, not a filter.
		for name, v := range map[string]*string{"filter.type": f.Type, "filter.subject": f.Subject} {
			if v != nil && strings.TrimSpace(*v) == "" {
				return f, 0, apierr.Invalid(name, "must not be blank (leave it out to match every value)")
			}
		}
	}
	limit := int64(20)
	if first != nil {
		limit = *first
	}
	if limit < 1 || limit > 100 {
		return f, 0, apierr.Invalid("first", "must be between 1 and 100")
	}
	if after != nil && *after != "" {
		t, id, err := parseCursor(*after)
		if err != nil {
			return f, 0, apierr.Invalid("after", "is not a cursor of this connection")
		}
		f.AfterTime, f.AfterID = &t, &id
	}
	return f, int(limit), nil
}

// MeasurementPage is the loader page of Client.measurements' arguments (one
// row more than the page size, to tell whether there is a next page) and the
// page size.
func MeasurementPage(filter *gqlmodel.MeasurementFilter, first *int64, after *string) (string, int, error) {
	f, limit, err := measurementPaging(filter, first, after)
	if err != nil {
		return "", 0, err
	}
	return loaders.PageArgs{Filter: f, Limit: limit + 1}.Key(), limit, nil
}

func measurementConnection(rows []store.MeasurementPage, limit int) *model.MeasurementConnection {
	conn := &model.MeasurementConnection{Edges: []model.MeasurementEdge{}, PageInfo: &model.PageInfo{}}
	if len(rows) > limit {
		rows = rows[:limit]
		conn.PageInfo.HasNextPage = true
	}
	for _, m := range rows {
		conn.Edges = append(conn.Edges, model.MeasurementEdge{Cursor: makeCursor(m.CreatedAt, m.DocID),
			Node: &model.Measurement{ID: m.DocID, Document: documentJSON(m.Doc)}})
	}
	if n := len(conn.Edges); n > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &conn.Edges[0].Cursor, &conn.Edges[n-1].Cursor
	}
	return conn
}

func makeCursor(t time.Time, docID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(t.UTC().Format(time.RFC3339Nano) + "|" + docID))
}

func parseCursor(c string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", err
	}
	if !utf8.Valid(raw) {
		return time.Time{}, "", errors.New("not UTF-8")
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" || len(id) > store.MaxIDLen {
		return time.Time{}, "", errors.New("no document id")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return t, id, err
}

func clientReportOf(d store.Document) model.ClientReport {
	return model.ClientReport{ID: d.DocID, Type: d.Type, Document: documentJSON(d.Doc)}
}
