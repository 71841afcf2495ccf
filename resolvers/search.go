package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The search core: measurementSearch, anomalyEventSearch and the scroll
// continuation of GraphQL and of POST /measurements/search and
// /anomaly_events/search. A request is parsed into a search.Request (the
// body object with size, from and search_after merged in), checked by
// search.CheckDSL, and run by the configured backend within the caller's
// data owner. Every rejection is a 400 naming what is wrong.

// searchArgs are the arguments of a search field.
type searchArgs struct {
	Body        model.JSON
	IndexScope  *string
	SourceOnly  *bool
	Size, From  *int64
	SearchAfter *model.JSON
	Scroll      *string
}

// heavy admits a data owner's heavy work (a search, an ES|QL query, an
// export listing, a scroll page): refused while the data owner's answers
// are over their rate (ratelimit.AnswerRoom), then given a place of the
// admission gate. done leaves the place and charges what the work read
// (package budget's count) to the data owner's answer bytes.
func (r *Resolver) heavy(ctx context.Context, ownerID int64) (done func(), err error) {
	if err := r.RateLimits.AnswerRoom(ownerID); err != nil {
		return nil, err
	}
	leave, err := r.Heavy.Enter(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	return func() {
		leave()
		r.RateLimits.ChargeAnswer(ctx, ownerID, budget.Settle(ctx))
	}, nil
}

// runSearch answers one search of kind for the caller.
func (r *Resolver) runSearch(ctx context.Context, kind search.Kind, a searchArgs) (model.JSON, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return model.JSON{}, err
	}
	if a.Scroll != nil && *a.Scroll != "" && a.SourceOnly != nil && *a.SourceOnly {
		// The _source array would drop the _scroll_id, leaving the scroll
		// unreachable. (REST streams a scroll and asks for the envelope.)
		return model.JSON{}, apierr.BadRequestf("sourceOnly cannot be used with scroll: the envelope carries the _scroll_id; measurementSearchScroll takes sourceOnly")
	}
	req, err := searchRequest(kind, a)
	if err != nil {
		return model.JSON{}, err
	}
	req.Scope.DataOwnerID, req.Scope.Slug = p.DataOwnerID, p.DataOwnerSlug
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return model.JSON{}, err
	}
	defer done()
	resp, err := r.Search.Search(ctx, req)
	if err != nil {
		return model.JSON{}, searchError(err)
	}
	return searchAnswer(resp, a.SourceOnly), nil
}

// scrollNext answers the next page of one of the caller's scrolls.
func (r *Resolver) scrollNext(ctx context.Context, scrollID string, keepAlive *string, sourceOnly *bool) (model.JSON, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return model.JSON{}, err
	}
	ka, err := scrollKeepAlive(keepAlive)
	if err != nil {
		return model.JSON{}, err
	}
	if ka == "" {
		ka = "1m"
	}
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return model.JSON{}, err
	}
	defer done()
	resp, err := r.Search.ScrollNext(ctx, p.DataOwnerID, scrollID, ka)
	if err != nil {
		return model.JSON{}, searchError(err)
	}
	return searchAnswer(resp, sourceOnly), nil
}

// searchRequest parses the arguments into a checked request (scope kind
// and types set; the caller fills in the data owner).
func searchRequest(kind search.Kind, a searchArgs) (search.Request, error) {
	req := search.Request{Scope: search.Scope{Kind: kind}}
	body, err := searchBody(a.Body.Value)
	if err != nil {
		return req, err
	}
	if a.Size != nil {
		body["size"] = *a.Size
	}
	if a.From != nil {
		body["from"] = *a.From
	}
	if a.SearchAfter != nil && a.SearchAfter.Value != nil {
		body["search_after"] = a.SearchAfter.Value
	}
	if err := checkPaging(body); err != nil {
		return req, err
	}
	if a.IndexScope != nil {
		typ, ok := vocab.IndexScopes[*a.IndexScope]
		if !ok {
			return req, apierr.BadRequestf("index_scope must be one of web, video, network, speedtest, conferencing, gaming")
		}
		req.Scope.Types = []string{typ}
	}
	if req.Scroll, err = scrollKeepAlive(a.Scroll); err != nil {
		return req, err
	}
	if req.Scroll != "" {
		if err := checkScrollPaging(body); err != nil {
			return req, err
		}
	}
	if err := search.CheckDSL(body); err != nil {
		return req, searchError(err)
	}
	req.Body = body
	return req, nil
}

// searchBody reads body: a JSON object, or a string holding one.
func searchBody(v any) (map[string]any, error) {
	if s, ok := v.(string); ok {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, apierr.BadRequestf("body is not valid JSON: %v", err)
		}
		if dec.More() || strings.TrimSpace(s[dec.InputOffset():]) != "" {
			return nil, apierr.BadRequestf("body is not valid JSON: unexpected data after the JSON value")
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, apierr.BadRequestf("body must be a JSON object (or a string holding one)")
	}
	// A copy: the merged paging keys must not change the caller's value.
	out := make(map[string]any, len(m)+3)
	for k, e := range m {
		out[k] = e
	}
	return out, nil
}

// checkPaging checks size, from and search_after of the merged body and
// sets the default size.
func checkPaging(body map[string]any) error {
	size, ok, err := intKey(body, "size")
	if err != nil {
		return err
	}
	if !ok {
		size = search.DefaultSize
		body["size"] = size
	}
	if size < 0 || size > search.MaxSize {
		return apierr.BadRequestf("size must be between 0 and %d", search.MaxSize)
	}
	from, _, err := intKey(body, "from")
	if err != nil {
		return err
	}
	if from < 0 {
		return apierr.BadRequestf("from must not be negative")
	}
	if from+size > search.MaxSize {
		return apierr.BadRequestf("from + size must not exceed %d", search.MaxSize)
	}
	if sa, ok := body["search_after"]; ok && sa != nil {
		if _, isList := sa.([]any); !isList {
			return apierr.BadRequestf("search_after must be an array (the sort values of the last hit)")
		}
	}
	return nil
}

// checkScrollPaging refuses what a scroll cannot page with (as
// Elasticsearch does), the same on both backends: a scroll walks every
// hit from the first, size at a time.
func checkScrollPaging(body map[string]any) error {
	if size, _, _ := intKey(body, "size"); size == 0 {
		return apierr.BadRequestf("size must be more than 0 with scroll")
	}
	if from, _, _ := intKey(body, "from"); from > 0 {
		return apierr.BadRequestf("from cannot be used with scroll")
	}
	if sa, ok := body["search_after"]; ok && sa != nil {
		return apierr.BadRequestf("search_after cannot be used with scroll")
	}
	return nil
}

// intKey reads an integer of the body (JSON numbers of any Go type; 1e3
// and 10.0 are integers too; a string holding a decimal integer is read
// as that integer and replaced by it in body).
func intKey(body map[string]any, key string) (int64, bool, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	var n int64
	var err error
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case json.Number:
		if n, err = x.Int64(); err != nil {
			var f float64
			if f, err = x.Float64(); err == nil {
				n, err = integral(f)
			}
		}
	case float64:
		n, err = integral(x)
	case string: // "10", as Elasticsearch accepts
		if n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			body[key] = n
		}
	default:
		err = errors.New("not a number")
	}
	if err != nil {
		return 0, false, apierr.BadRequestf("%s must be an integer", key)
	}
	return n, true, nil
}

// integral is f as an integer, if it is one (and fits).
func integral(f float64) (int64, error) {
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, errors.New("not an integer")
	}
	return int64(f), nil
}

var durationRe = regexp.MustCompile(`^([0-9]+)(d|h|m|s|ms)$`)

// scrollKeepAlive checks a scroll keep-alive (Elasticsearch time units),
// at most search.MaxScroll; nil or "" is no scroll.
func scrollKeepAlive(s *string) (string, error) {
	if s == nil || *s == "" {
		return "", nil
	}
	m := durationRe.FindStringSubmatch(*s)
	if m == nil {
		return "", apierr.BadRequestf("scroll must be a time such as 1m or 30s")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second, "ms": time.Millisecond}[m[2]]
	max, _ := time.ParseDuration(search.MaxScroll)
	if err != nil || n <= 0 || n > int64(max/unit) {
		return "", apierr.BadRequestf("scroll must be more than 0 and at most %s", search.MaxScroll)
	}
	return *s, nil
}

// searchError turns a refusal of the search package into a 400.
func searchError(err error) error {
	if errors.Is(err, search.ErrBadRequest) {
		return &apierr.BadRequest{Msg: err.Error()}
	}
	return err
}

// searchAnswer is the envelope, or with sourceOnly the _source documents.
func searchAnswer(resp search.Response, sourceOnly *bool) model.JSON {
	if sourceOnly == nil || !*sourceOnly {
		return model.JSON{Value: resp}
	}
	return model.JSON{Value: sourceDocuments(resp)}
}

// sourceDocuments lists the _source of every hit of a search envelope.
func sourceDocuments(resp map[string]any) []any {
	out := []any{}
	hits, _ := resp["hits"].(map[string]any)
	list, _ := hits["hits"].([]any)
	for _, h := range list {
		if hit, ok := h.(map[string]any); ok {
			out = append(out, hit["_source"])
		}
	}
	return out
}

// maxResolveIDs caps anomaly ids per resolve request (spec "Limits").
const maxResolveIDs = 500

// distinctIDs is ids without repeats, in first-seen order: requested in
// a resolve answer counts the distinct ids asked for, so updated equals
// requested exactly when every one of them was an active episode.
func distinctIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Measurement documents and their client reports.
