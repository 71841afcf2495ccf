package search

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// A search request as the APIs take it: measurementSearch,
// anomalyEventSearch, the scroll continuation and the export API's
// /search. The arguments are parsed into a Request (the body object with
// size, from and search_after merged in) and checked by CheckDSL; every
// rejection is a 400 naming what is wrong. The answer is the envelope or,
// with sourceOnly, the hits' _source documents.

// Args are the arguments of a search field of the API (GraphQL and REST).
type Args struct {
	Body        model.JSON
	IndexScope  *string
	SourceOnly  *bool
	Size, From  *int64
	SearchAfter *model.JSON
	Scroll      *string
}

// NewRequest parses the arguments into a checked request (scope kind
// and types set; the caller fills in the data owner).
func NewRequest(kind Kind, a Args) (Request, error) {
	req := Request{Scope: Scope{Kind: kind}}
	body, err := ParseBody(a.Body.Value)
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
	if req.Scroll, err = ParseKeepAlive(a.Scroll); err != nil {
		return req, err
	}
	if req.Scroll != "" {
		if err := checkScrollPaging(body); err != nil {
			return req, err
		}
	}
	if err := CheckDSL(body); err != nil {
		return req, AsBadRequest(err)
	}
	req.Body = body
	return req, nil
}

// ParseBody reads body: a JSON object, or a string holding one.
func ParseBody(v any) (map[string]any, error) {
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
	size, ok, err := IntKey(body, "size")
	if err != nil {
		return err
	}
	if !ok {
		size = limits.SearchSize
		body["size"] = size
	}
	if size < 0 || size > limits.MaxSearchSize {
		return apierr.BadRequestf("size must be between 0 and %d", limits.MaxSearchSize)
	}
	from, _, err := IntKey(body, "from")
	if err != nil {
		return err
	}
	if from < 0 {
		return apierr.BadRequestf("from must not be negative")
	}
	if from+size > limits.MaxSearchSize {
		return apierr.BadRequestf("from + size must not exceed %d", limits.MaxSearchSize)
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
	if size, _, _ := IntKey(body, "size"); size == 0 {
		return apierr.BadRequestf("size must be more than 0 with scroll")
	}
	if from, _, _ := IntKey(body, "from"); from > 0 {
		return apierr.BadRequestf("from cannot be used with scroll")
	}
	if sa, ok := body["search_after"]; ok && sa != nil {
		return apierr.BadRequestf("search_after cannot be used with scroll")
	}
	return nil
}

// IntKey reads an integer of the body (JSON numbers of any Go type; 1e3
// and 10.0 are integers too; a string holding a decimal integer is read
// as that integer and replaced by it in body).
func IntKey(body map[string]any, key string) (int64, bool, error) {
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

// ParseKeepAlive checks a scroll keep-alive (an Elasticsearch time value),
// at most limits.MaxScroll; nil or "" is no scroll.
func ParseKeepAlive(s *string) (string, error) {
	if s == nil || *s == "" {
		return "", nil
	}
	n, unit, ok := ParseTimeValue(*s)
	if !ok {
		return "", apierr.BadRequestf("scroll must be a time such as 1m or 30s")
	}
	if n <= 0 || n > int64(limits.MaxScroll/unit) {
		return "", apierr.BadRequestf("scroll must be more than 0 and at most %s", TimeValue(limits.MaxScroll))
	}
	return *s, nil
}

// AsBadRequest turns a refusal of the search package into a 400.
func AsBadRequest(err error) error {
	if errors.Is(err, ErrBadRequest) {
		return &apierr.BadRequest{Msg: err.Error()}
	}
	return err
}

// Answer is the envelope, or with sourceOnly the _source documents.
func Answer(resp Response, sourceOnly *bool) model.JSON {
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
