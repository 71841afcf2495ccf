package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Paging of the export listings.
const (
	ExportDefaultPerPage = 100
	ExportMaxPerPage     = 1000
)

// Types the export listings accept per endpoint (docs/design.md's vocabulary
// adds conferencing and gaming measurements to the spec's four).
var (
	exportMeasurementTypes = vocab.MeasurementTypes
	exportEventBundleTypes = vocab.EventBundleTypes
)

// exportListing is the parsed request of one export listing.
type exportListing struct {
	filter        store.ExportFilter
	page, perPage int64
}

// exportKind says what one listing accepts.
type exportKind struct {
	// byMeasurement: measurement_id is accepted; self: it names the document itself.
	byMeasurement, self bool
	types               []string // allowed types; nil: any
	typeRequired        bool
}

var (
	exportMeasurements    = exportKind{byMeasurement: true, self: true, types: exportMeasurementTypes}
	exportClientReports   = exportKind{byMeasurement: true}
	exportEventBundles    = exportKind{byMeasurement: true, types: exportEventBundleTypes, typeRequired: true}
	exportNetworkRequests = exportKind{byMeasurement: true}
	exportUserFeedbacks   = exportKind{}
	exportClientsKind     = exportKind{}
)

// parseExportListing turns the common parameters, type and paging into a
// store filter, or a 400 naming the bad parameter. measurement_id, when
// given, overrides every other filter.
func parseExportListing(k exportKind, f *gqlmodel.ExportFilter, typ *string, page, perPage *int64) (exportListing, error) {
	var l exportListing
	var err error
	if l.page, l.perPage, err = parsePaging(page, perPage); err != nil {
		return l, err
	}
	l.filter.Limit, l.filter.Offset = l.perPage, (l.page-1)*l.perPage
	if f == nil {
		f = &gqlmodel.ExportFilter{}
	}
	if f.MeasurementID != nil {
		if !k.byMeasurement {
			return l, apierr.BadRequestf("measurement_id is not a parameter of this listing")
		}
		id := strings.TrimSpace(*f.MeasurementID)
		if id == "" {
			return l, apierr.BadRequestf("measurement_id must not be empty")
		}
		if k.self {
			l.filter.DocID = &id
		} else {
			l.filter.MeasurementID = &id
		}
		return l, nil
	}
	if l.filter.Start, err = parseExportTimeParam("start_time", f.StartTime); err != nil {
		return l, err
	}
	if l.filter.End, err = parseExportTimeParam("end_time", f.EndTime); err != nil {
		return l, err
	}
	if l.filter.Start != nil && l.filter.End != nil && l.filter.Start.After(*l.filter.End) {
		return l, apierr.BadRequestf("start_time must not be after end_time")
	}
	if f.ClientUUID != nil {
		u, err := uuid.Parse(strings.TrimSpace(*f.ClientUUID))
		if err != nil {
			return l, apierr.BadRequestf("client_uuid must be a UUID")
		}
		l.filter.ClientUUID = ptr(u.String())
	} else {
		l.filter.Tags = nonEmpty(f.Tags)
	}
	if f.Label != nil && *f.Label != "" {
		l.filter.Label = f.Label
	}
	if l.filter.Type, err = parseExportType(k, typ); err != nil {
		return l, err
	}
	return l, nil
}

func parsePaging(page, perPage *int64) (int64, int64, error) {
	p, pp := int64(1), int64(ExportDefaultPerPage)
	if page != nil {
		if *page < 1 {
			return 0, 0, apierr.BadRequestf("page must be 1 or more")
		}
		p = *page
	}
	if perPage != nil {
		if *perPage < 1 || *perPage > ExportMaxPerPage {
			return 0, 0, apierr.BadRequestf("per_page must be between 1 and %d", ExportMaxPerPage)
		}
		pp = *perPage
	}
	if p > math.MaxInt64/pp {
		return 0, 0, apierr.BadRequestf("page is too large")
	}
	return p, pp, nil
}

func parseExportType(k exportKind, typ *string) (*string, error) {
	if typ == nil || strings.TrimSpace(*typ) == "" {
		if k.typeRequired {
			return nil, apierr.BadRequestf("type is required: one of %s", strings.Join(k.types, ", "))
		}
		return nil, nil
	}
	t := strings.TrimSpace(*typ)
	if k.types == nil {
		return &t, nil
	}
	for _, ok := range k.types {
		if t == ok {
			return &t, nil
		}
	}
	return nil, apierr.BadRequestf("type must be one of %s", strings.Join(k.types, ", "))
}

// nonEmpty drops blank entries (tags=a,,b) and returns nil for none.
func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func parseExportTimeParam(name string, raw *string) (*time.Time, error) {
	if raw == nil {
		return nil, nil
	}
	t, err := ParseExportTime(*raw)
	if err != nil {
		return nil, apierr.BadRequestf("%s must be an ISO 8601 time (e.g. 2024-05-01T12:00:00Z, 2024-05-01) or epoch seconds or milliseconds", name)
	}
	return &t, nil
}

// exportTimeLayouts are the time formats the export API accepts; times
// without a zone are UTC.
var exportTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02",
	"2006-01-02T15:04:05.999999999 MST",
	time.RFC1123Z,
	time.RFC1123,
	// ISO 8601's basic format.
	"20060102T150405.999999999Z0700",
	"20060102T150405.999999999Z07",
	"20060102T150405.999999999",
	"20060102T1504Z0700",
	"20060102T1504",
	"20060102",
}

var (
	epochPattern = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	// basicDate is ISO 8601's basic date (20240501), not epoch seconds.
	basicDate = regexp.MustCompile(`^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$`)
	// lowerISO is an ISO 8601 time written with a lower-case t (and z).
	lowerISO = regexp.MustCompile(`^\d{4}-?\d{2}-?\d{2}t`)
	// A "+" of an unencoded offset arrives as a space: 2024-05-01T12:00:00 02:00.
	lostPlus = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$`)
)

// ParseExportTime reads a time in any of the accepted formats: ISO 8601
// extended or basic (a T, t or a space between date and time, optional
// seconds, fractions and zone: Z, ±hh, ±hhmm, ±hh:mm), a date alone
// (midnight UTC; 2024-05-01 or 20240501), RFC 1123, or epoch seconds (up
// to 11 digits, fractions allowed; 8 digits that form a date are the basic
// date) or milliseconds (12 digits or more). Times without a zone are UTC.
func ParseExportTime(raw string) (time.Time, error) {
	s := strings.TrimSpace(raw)
	if lowerISO.MatchString(s) {
		s = strings.ToUpper(s)
	}
	if epochPattern.MatchString(s) && !basicDate.MatchString(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return time.Time{}, err
		}
		if digits := strings.TrimPrefix(strings.SplitN(s, ".", 2)[0], "-"); len(digits) >= 12 {
			return time.UnixMilli(int64(f)).UTC(), nil
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	if m := lostPlus.FindStringSubmatch(s); m != nil {
		s = m[1] + "+" + m[2]
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, layout := range exportTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised time %q", raw)
}

// exportDocuments runs one parsed listing over the data owner's documents
// of kind, shaping each stored document with conv.
func (r *queryResolver) exportDocuments(ctx context.Context, kind string, l exportListing,
	conv func(store.ExportDocument) (model.JSON, error)) (*gqlmodel.ExportDocumentPage, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return nil, err
	}
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return nil, err
	}
	defer done()
	docs, total, err := r.Store.ExportDocuments(ctx, p.DataOwnerID, kind, l.filter)
	if err != nil {
		return nil, err
	}
	items := make([]model.JSON, len(docs))
	for i, d := range docs {
		if items[i], err = conv(d); err != nil {
			return nil, fmt.Errorf("export %s: %w", kind, err)
		}
	}
	return &gqlmodel.ExportDocumentPage{Items: items, Total: total, Page: l.page, PerPage: l.perPage}, nil
}

// asStored answers the document as stored.
func asStored(d store.ExportDocument) (model.JSON, error) {
	return model.JSON{Value: rawjson.Compact(d.Doc)}, nil
}

// withClientObject gives a user feedback its client as {"uuid": ...}.
func withClientObject(d store.ExportDocument) (model.JSON, error) {
	doc, err := decodeObject(d.Doc)
	if err != nil {
		return model.JSON{}, err
	}
	if _, ok := doc["client"].(map[string]any); !ok && d.ClientUUID != nil {
		// Stored with a top-level client_uuid (the import accepts both):
		// answered in the spec's shape, client {uuid}.
		doc["client"] = map[string]any{"uuid": *d.ClientUUID}
		delete(doc, "client_uuid")
	}
	return model.JSON{Value: doc}, nil
}

// networkRequestPruned lists, per JSON path of a network request, the
// fields the export spec omits.
var networkRequestPruned = []struct {
	path   []string
	fields []string
}{
	{[]string{"data"}, []string{"initiator", "redirectHasExtraInfo", "hasUserGesture"}},
	{[]string{"data", "request"}, []string{"mixedContentType", "initialPriority", "referrerPolicy", "isSameSite"}},
	{[]string{"network_response", "data"}, []string{"hasExtraInfo"}},
	{[]string{"network_response", "data", "response"}, []string{"securityState", "securityDetails", "alternateProtocolUsage"}},
}

// prunedNetworkRequest drops the request and response fields the export
// spec omits. Beside the spec's client_time, client_time_skewed, data and
// network_response, every item carries id, client_uuid and created_at (from
// the indexed columns when the document lacks them, so every item of every
// listing has them) and measurement_id when the request belongs to a
// measurement (absent, not null, otherwise): they say which request, client
// and measurement a line is about.
func prunedNetworkRequest(d store.ExportDocument) (model.JSON, error) {
	doc, err := decodeObject(d.Doc)
	if err != nil {
		return model.JSON{}, err
	}
	fill := func(key string, v any) {
		if cur, ok := doc[key]; !ok || cur == nil {
			doc[key] = v
		}
	}
	fill("id", d.DocID)
	if d.ClientUUID != nil {
		fill("client_uuid", *d.ClientUUID)
	}
	fill("created_at", d.CreatedAt.UTC().Format(time.RFC3339Nano))
	if d.MeasurementID != nil {
		fill("measurement_id", *d.MeasurementID)
	} else if doc["measurement_id"] == nil {
		delete(doc, "measurement_id")
	}
	for _, p := range networkRequestPruned {
		obj := doc
		for _, key := range p.path {
			obj, _ = obj[key].(map[string]any)
		}
		for _, f := range p.fields {
			delete(obj, f)
		}
	}
	return model.JSON{Value: doc}, nil
}

func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode document: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// Search parameters of the export API's /search besides body: the Lucene
// query string and its options, and the search parameters merged into the
// body. Parameters that choose indices are refused: the server alone picks
// the data owner's measurement indices.
var (
	exportQueryStringParams = map[string]string{"q": "query", "df": "default_field", "default_operator": "default_operator",
		"analyzer": "analyzer", "lenient": "lenient", "analyze_wildcard": "analyze_wildcard"}
	exportIndexParams = map[string]bool{"index": true, "indices": true, "allow_no_indices": true, "expand_wildcards": true,
		"ignore_unavailable": true, "ignore_throttled": true, "routing": true, "preference": true, "ccs_minimize_roundtrips": true}
	// Parameters that Elasticsearch also takes in the body: merged into it
	// (winning over the body's own), where the backend answers them or
	// refuses them by name as it does in a body.
	exportBodyBoolParams = map[string]bool{"version": true, "seq_no_primary_term": true, "track_scores": true, "explain": true}
	exportBodyListParams = map[string]bool{"stored_fields": true, "docvalue_fields": true, "stats": true}
	// Execution hints and output options that change no result: checked,
	// then without effect here (human and error_trace, like pretty, only
	// change how Elasticsearch prints).
	exportHintBoolParams = map[string]bool{"request_cache": true, "allow_partial_search_results": true,
		"human": true, "error_trace": true, "pretty": true}
	exportHintIntParams = map[string]bool{"batched_reduce_size": true, "max_concurrent_shard_requests": true,
		"pre_filter_shard_size": true}
)

// exportSearchArgs are the parsed arguments of the export API's /search.
type exportSearchArgs struct {
	search.Args
	// totalAsInt: rest_total_hits_as_int, hits.total as a number.
	totalAsInt bool
}

// parseExportSearch reads the export API's search request object: body
// (object or JSON string) next to search parameters, which arrive as JSON
// values (POST) or strings (GET query parameters).
func parseExportSearch(v any) (exportSearchArgs, error) {
	var a exportSearchArgs
	obj, ok := v.(map[string]any)
	if !ok {
		return a, apierr.BadRequestf("the search request must be a JSON object")
	}
	body, qs, top := any(nil), map[string]any{}, map[string]any{}
	for key, val := range obj {
		var err error
		switch {
		case key == "body":
			body = val
		case exportQueryStringParams[key] != "":
			qs[exportQueryStringParams[key]], err = exportQueryStringValue(key, val)
		case key == "size" || key == "from":
			var n int64
			if n, err = exportIntParam(key, val); key == "size" {
				a.Size = &n
			} else {
				a.From = &n
			}
		case key == "scroll":
			s, isString := val.(string)
			if !isString {
				return a, apierr.BadRequestf("scroll must be a time such as 1m")
			}
			a.Scroll = &s
		case key == "source_only" || key == "sourceOnly":
			var b bool
			b, err = exportBoolParam(key, val)
			a.SourceOnly = &b
		case key == "search_after":
			var sa any
			sa, err = exportJSONParam(key, val)
			a.SearchAfter = &model.JSON{Value: sa}
		case key == "sort":
			top["sort"], err = exportSortParam(val)
		case key == "_source":
			top["_source"], err = exportSourceParam(val)
		case key == "_source_includes" || key == "_source_excludes":
			top[key], err = exportListParam(key, val)
		case key == "track_total_hits":
			top[key], err = exportTrackTotalHits(val)
		case exportBodyBoolParams[key]:
			top[key], err = exportBoolParam(key, val)
		case key == "stored_fields" && val == "_none_":
			top[key] = val // no stored fields and no _source
		case exportBodyListParams[key]:
			top[key], err = exportListParam(key, val)
		case key == "timeout":
			s, isString := val.(string)
			if !isString || strings.TrimSpace(s) == "" {
				return a, apierr.BadRequestf("timeout must be a time such as 30s")
			}
			top[key] = s
		case key == "terminate_after":
			var n int64
			if n, err = exportIntParam(key, val); err == nil && n < 0 {
				err = apierr.BadRequestf("terminate_after must not be negative")
			}
			top[key] = n
		case exportHintBoolParams[key]:
			if val != "" { // ?pretty: a flag without a value
				_, err = exportBoolParam(key, val)
			}
		case exportHintIntParams[key]:
			var n int64
			if n, err = exportIntParam(key, val); err == nil && n < 1 {
				err = apierr.BadRequestf("%s must be 1 or more", key)
			}
		case key == "search_type":
			if val != "query_then_fetch" && val != "dfs_query_then_fetch" {
				err = apierr.BadRequestf("search_type must be query_then_fetch or dfs_query_then_fetch")
			}
		case key == "rest_total_hits_as_int":
			var b bool
			b, err = exportBoolParam(key, val)
			a.totalAsInt = b
		case key == "typed_keys" || key == "filter_path":
			return a, apierr.BadRequestf("%s is not supported", key)
		case exportIndexParams[key]:
			return a, apierr.BadRequestf("%s is not accepted: the server chooses the index (the data owner's measurements)", key)
		default:
			return a, apierr.BadRequestf("unsupported search parameter %s", key)
		}
		if err != nil {
			return a, err
		}
	}
	if body == nil {
		return a, apierr.BadRequestf("body is required (a Query DSL object or a string holding one)")
	}
	b, err := search.ParseBody(body)
	if err != nil {
		return a, err
	}
	if err := mergeExportParams(b, qs, top); err != nil {
		return a, err
	}
	if a.totalAsInt {
		if err := totalAsIntTracking(b); err != nil {
			return a, err
		}
	}
	// The merged body (q included) must pass the scope check of the search
	// package before anything runs.
	if err := search.CheckDSL(b); err != nil {
		return a, search.AsBadRequest(err)
	}
	a.Body = model.JSON{Value: b}
	return a, nil
}

// totalAsNumber turns hits.total {value, relation} of a search envelope
// into its value, as Elasticsearch's rest_total_hits_as_int does.
func totalAsNumber(out model.JSON) model.JSON {
	env, ok := out.Value.(map[string]any)
	if !ok {
		return out
	}
	hits, ok := env["hits"].(map[string]any)
	if !ok {
		return out
	}
	switch total, ok := hits["total"].(map[string]any); {
	case ok:
		hits["total"] = total["value"]
	case hits["total"] == nil:
		hits["total"] = -1 // track_total_hits false, as Elasticsearch answers it
	}
	return out
}

// totalAsIntTracking applies rest_total_hits_as_int to the body's
// track_total_hits as Elasticsearch does: exact when absent; true and
// false are kept (false answers hits.total -1); a count to track up to is
// refused, since the total as a number must be exact.
func totalAsIntTracking(body map[string]any) error {
	switch v := body["track_total_hits"].(type) {
	case nil:
		body["track_total_hits"] = true
	case bool:
	default:
		if fmt.Sprint(v) == strconv.Itoa(math.MaxInt32) {
			return nil // Elasticsearch's "accurate"
		}
		return apierr.BadRequestf("[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got %v", v)
	}
	return nil
}

// mergeExportParams puts the top-level parameters into the body (they win
// over the body's own keys, as in Elasticsearch) and ANDs the query string
// with the body's query.
func mergeExportParams(body, qs, top map[string]any) error {
	inc, hasInc := top["_source_includes"]
	exc, hasExc := top["_source_excludes"]
	delete(top, "_source_includes")
	delete(top, "_source_excludes")
	if hasInc || hasExc {
		src := map[string]any{}
		if hasInc {
			src["includes"] = inc
		}
		if hasExc {
			src["excludes"] = exc
		}
		top["_source"] = src
	}
	for k, v := range top {
		body[k] = v
	}
	if len(qs) == 0 {
		return nil
	}
	if _, ok := qs["query"]; !ok {
		return apierr.BadRequestf("df, default_operator, analyzer, lenient and analyze_wildcard need q")
	}
	clause := map[string]any{"query_string": qs}
	if q, ok := body["query"]; ok && q != nil {
		body["query"] = map[string]any{"bool": map[string]any{"must": []any{q, clause}}}
	} else {
		body["query"] = clause
	}
	return nil
}

func exportQueryStringValue(key string, v any) (any, error) {
	switch key {
	case "lenient", "analyze_wildcard":
		return exportBoolParam(key, v)
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return nil, apierr.BadRequestf("%s must be a string", key)
}

func exportIntParam(key string, v any) (int64, error) {
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, apierr.BadRequestf("%s must be an integer", key)
		}
		return n, nil
	}
	n, ok, err := search.IntKey(map[string]any{key: v}, key)
	if err == nil && !ok {
		err = apierr.BadRequestf("%s must be an integer", key)
	}
	return n, err
}

func exportBoolParam(key string, v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		if p, err := strconv.ParseBool(b); err == nil {
			return p, nil
		}
	}
	return false, apierr.BadRequestf("%s must be true or false", key)
}

// exportJSONParam reads a JSON value given as such or as a JSON string (GET).
func exportJSONParam(key string, v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return nil, apierr.BadRequestf("%s must be JSON", key)
	}
	return out, nil
}

// exportSortParam reads sort: a DSL sort value, or the URL form
// "field:asc,other:desc,third".
func exportSortParam(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return exportJSONParam("sort", t)
	}
	var out []any
	for _, part := range strings.Split(s, ",") {
		field, order, hasOrder := strings.Cut(strings.TrimSpace(part), ":")
		switch {
		case field == "":
			return nil, apierr.BadRequestf("sort must be field[:asc|desc],...")
		case !hasOrder:
			out = append(out, field)
		case order == "asc" || order == "desc":
			out = append(out, map[string]any{field: order})
		default:
			return nil, apierr.BadRequestf("sort order of %s must be asc or desc", field)
		}
	}
	return out, nil
}

// exportSourceParam reads _source: a DSL value, true/false or "a,b".
func exportSourceParam(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b, nil
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return exportJSONParam("_source", t)
	}
	return exportListParam("_source", s)
}

func exportListParam(key string, v any) (any, error) {
	switch x := v.(type) {
	case string:
		var out []any
		for _, f := range strings.Split(x, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out, nil
	case []any:
		return x, nil
	}
	return nil, apierr.BadRequestf("%s must be a list of fields", key)
}

func exportTrackTotalHits(v any) (any, error) {
	if s, ok := v.(string); ok {
		if b, err := strconv.ParseBool(s); err == nil {
			return b, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		return nil, apierr.BadRequestf("track_total_hits must be true, false or a number")
	}
	return v, nil
}

// exportSearchParams collects exportSearch's arguments under their REST
// names for parseExportSearch.
type exportSearchParams map[string]any

func (s exportSearchParams) str(key string, v *string) {
	if v != nil {
		s[key] = *v
	}
}

func (s exportSearchParams) boolean(key string, v *bool) {
	if v != nil {
		s[key] = *v
	}
}

func (s exportSearchParams) integer(key string, v *int64) {
	if v != nil {
		s[key] = *v
	}
}

func (s exportSearchParams) json(key string, v *model.JSON) {
	if v != nil && v.Value != nil {
		s[key] = v.Value
	}
}

func (s exportSearchParams) list(key string, v []string) {
	if v != nil {
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = e
		}
		s[key] = l
	}
}

// merge adds the other parameters (an object); one given twice is refused.
func (s exportSearchParams) merge(other *model.JSON) error {
	if other == nil || other.Value == nil {
		return nil
	}
	m, ok := other.Value.(map[string]any)
	if !ok {
		return apierr.BadRequestf("otherParams must be an object")
	}
	for k, v := range m {
		if _, dup := s[k]; dup {
			return apierr.BadRequestf("%s is given twice", k)
		}
		s[k] = v
	}
	return nil
}
