// Package search answers Elasticsearch Query DSL and ES|QL requests over a
// data owner's documents, through one of two backends chosen at start: the
// embedded PostgreSQL backend (search/pg, translating requests to SQL with
// placeholders only) or Elasticsearch (search/es). The server alone chooses
// the indices a request may read; Check and CheckESQL refuse, before
// anything runs, every construct that could reach another index.
package search

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Kind is a document kind; its string is the kind column of documents.
type Kind string

const (
	KindMeasurement    Kind = vocab.KindMeasurement
	KindClientReport   Kind = vocab.KindClientReport
	KindEventBundle    Kind = vocab.KindEventBundle
	KindNetworkRequest Kind = vocab.KindNetworkRequest
	KindUserFeedback   Kind = vocab.KindUserFeedback
	KindAnomalyEvent   Kind = vocab.KindAnomalyEvent
	KindSystemStatus   Kind = vocab.KindSystemStatus
)

// Kinds lists every kind.
var Kinds = []Kind{KindMeasurement, KindClientReport, KindEventBundle, KindNetworkRequest,
	KindUserFeedback, KindAnomalyEvent, KindSystemStatus}

// indexToken is how a kind appears in index names.
var indexToken = map[Kind]string{
	KindMeasurement: "measurements", KindClientReport: "client_reports", KindEventBundle: "event_bundles",
	KindNetworkRequest: "network_requests", KindUserFeedback: "user_feedbacks",
	KindAnomalyEvent: "anomaly_events", KindSystemStatus: "system_status_records",
}

// IndexPrefix is the part all of a data owner's indices share.
func IndexPrefix(slug string) string { return "analytics-production-" + slug }

// IndexName is the index of one kind (and, for typed kinds, one type) of a
// data owner: analytics-production-<slug>-<kind>[-<type>], lower case.
func IndexName(slug string, kind Kind, typ string) string {
	name := IndexPrefix(slug) + "-" + indexToken[kind]
	if typ != "" {
		name += "-" + strings.ToLower(typ)
	}
	return name
}

// ParseIndex splits one of the data owner's concrete index names into kind
// and lower-cased type ("" when the name has none).
func ParseIndex(slug, index string) (Kind, string, bool) {
	rest, ok := strings.CutPrefix(index, IndexPrefix(slug)+"-")
	if !ok {
		return "", "", false
	}
	for kind, tok := range indexToken {
		if rest == tok {
			return kind, "", true
		}
		if t, ok := strings.CutPrefix(rest, tok+"-"); ok && t != "" {
			return kind, t, true
		}
	}
	return "", "", false
}

// Scope is what the server lets one request read: one data owner's
// documents of one kind, optionally of some types only.
type Scope struct {
	DataOwnerID int64
	Slug        string
	Kind        Kind
	// Types, when not empty, restricts to these document types (exact names,
	// e.g. "VideoMeasurement").
	Types []string
}

// Indices names the Elasticsearch indices (patterns) of the scope.
func (s Scope) Indices() []string {
	if len(s.Types) == 0 {
		return []string{IndexName(s.Slug, s.Kind, "") + "*"}
	}
	out := make([]string, len(s.Types))
	for i, t := range s.Types {
		out[i] = IndexName(s.Slug, s.Kind, t)
	}
	return out
}

// Request is one Query DSL search. Body is the parsed DSL object; the
// top-level Size, From and SearchAfter of the REST APIs have already been
// merged into it.
type Request struct {
	Scope Scope
	Body  map[string]any
	// Scroll, when set, is the keep-alive of a scroll (at most
	// limits.MaxScroll).
	Scroll string
}

// Response is an Elasticsearch search response envelope, as JSON values.
type Response = map[string]any

// TimeValue writes d as an Elasticsearch time value in its largest whole
// unit (limits.MaxScroll: 5m).
func TimeValue(d time.Duration) string {
	for _, u := range []struct {
		unit   time.Duration
		suffix string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(d), 10) + "nanos"
}

// timeValueRe is an Elasticsearch time value: a whole number and a unit,
// with the spaces Elasticsearch trims around them.
var timeValueRe = regexp.MustCompile(`^\s*(\d+)\s*(d|h|m|s|ms|micros|nanos)\s*$`)

// timeUnits are the units of Elasticsearch time values.
var timeUnits = map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second,
	"ms": time.Millisecond, "micros": time.Microsecond, "nanos": time.Nanosecond}

// ParseTimeValue reads s as an Elasticsearch time value (30s, 1m, 500ms,
// 2d, 10micros), the one reading of them: the scroll keep-alives, a
// search's timeout and a histogram's interval. It answers the number and
// the length of its unit, each caller checking its own bounds (the number
// may be 0, and its product with the unit may not fit a time.Duration);
// ok is false when s is not a time value or its number is above 10^12.
func ParseTimeValue(s string) (n int64, unit time.Duration, ok bool) {
	m := timeValueRe.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > 1e12 {
		return 0, 0, false
	}
	return n, timeUnits[m[2]], true
}

// Backend runs searches for one deployment.
type Backend interface {
	// Search runs a DSL request and returns the envelope (with _scroll_id
	// when req.Scroll is set).
	Search(ctx context.Context, req Request) (Response, error)
	// ScrollNext continues a scroll of the data owner; an id of another data
	// owner, expired or unknown, is ErrBadRequest.
	ScrollNext(ctx context.Context, dataOwnerID int64, scrollID, keepAlive string) (Response, error)
	// ESQL runs a piped query already checked by CheckESQL; one object per row.
	ESQL(ctx context.Context, dataOwnerID int64, slug, query string) ([]map[string]any, error)
	// PrecheckESQL refuses, without reading anything, a query this
	// backend would refuse whatever the data (a BadRequestError): callers
	// ask before they wait for a place to run it (package admission).
	PrecheckESQL(query string) error
}

// BadRequestError is a request the backends refuse (unsupported clause,
// index outside the scope, malformed DSL): a 400 naming what is wrong. It
// is apierr's one BadRequest type, under the name the backends use.
type BadRequestError = apierr.BadRequest

// ErrBadRequest matches every BadRequestError with errors.Is.
var ErrBadRequest error = apierr.ErrBadRequest

// ErrUnavailable marks a failure of the search backend itself (Elasticsearch
// down, overloaded or not answering in time): a 503 to the caller, who may
// try again; the details go to the log only.
var ErrUnavailable = apierr.Sentinel(apierr.ErrUnavailable, "search backend unavailable")

// UnavailableError is an ErrUnavailable whose message is meant for the
// caller (a search that exceeded its time limit: narrowing it helps); Err,
// the cause, goes to the log only.
type UnavailableError struct {
	Msg string
	Err error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

// PublicMessage is what the caller reads: Msg, without the cause.
func (e *UnavailableError) PublicMessage() string { return e.Msg }

// Unwrap is ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// ErrTooManyScrolls is a scroll refused because its data owner already has
// limits.MaxOpenScrolls open (a 429, as Elasticsearch answers too many scroll
// contexts): finish or let expire the open ones.
var ErrTooManyScrolls = apierr.Sentinel(apierr.ErrTooManyRequests, "too many open scrolls")

// Badf makes a BadRequestError.
func Badf(format string, args ...any) error {
	return &BadRequestError{Msg: sprintf(format, args...)}
}

// The known lookup index of ES|QL LOOKUP JOIN.
//
// Every data owner has exactly one lookup index,
// analytics-production-<slug>-lookup-clients (LookupIndices), holding one
// document per client the data owner OWNS (clients.data_owner_id = the data
// owner; clients shared with it by another data owner are not included),
// with exactly the fields LookupClientFields, in that order:
//
//   - client_uuid: keyword, the client's UUID (lower case, canonical form):
//     the join key, and the only one (LOOKUP JOIN ... ON client_uuid);
//   - client_label: keyword, clients.label, or null;
//   - client_extra_label: keyword, clients.extra_label, or null;
//   - client_type: keyword, clients.type;
//   - client_tags: keyword array, clients.tags, or null when the client has
//     no tags (NULL or empty);
//   - client_created_at: date, clients.created_at as an RFC 3339 UTC string
//     with milliseconds (2026-11-01T06:00:00.000Z), like other ES|QL dates.
//
// The embedded backend (search/pg) answers LOOKUP JOIN from the clients
// table directly; on Elasticsearch the indexer maintains this index (index
// mode "lookup") with these fields. The index serves LOOKUP JOIN only: a
// FROM naming it is refused (CheckESQL), and wildcard FROM patterns do not
// read it on either backend (see ESQLForElasticsearch).
const LookupClientsToken = "lookup-clients"

// LookupClientFields are the fields of a lookup-clients document, in order
// (see LookupClientsToken).
var LookupClientFields = []string{
	"client_uuid", "client_label", "client_extra_label", "client_type", "client_tags", "client_created_at",
}

// LookupIndices lists the known lookup indices of a data owner: the one
// lookup-clients index (see LookupClientsToken).
func LookupIndices(slug string) []string {
	return []string{IndexPrefix(slug) + "-" + LookupClientsToken}
}
