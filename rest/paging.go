package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/rawjson"
)

// strictQuery checks the query of a StrictQuery route against the
// operation's variables, which are the parameters the route accepts: an
// unknown parameter is a 400 naming it and the accepted ones (nothing is
// silently ignored). Blank values count as not given (a script's
// "?label=&start_time=" filters nothing); a single-valued parameter given
// twice, or in the list syntax name[]=, is a 400. The answer is the query
// without the blank values. Variables filled from the path (pathParams)
// are no query parameters.
func strictQuery(q url.Values, op *operation, pathParams []string) (url.Values, error) {
	defs := make(map[string]bool, len(op.Variables)) // name -> is a list
	names := make([]string, 0, len(op.Variables))
	for _, def := range op.Variables {
		if slices.Contains(pathParams, def.Variable) {
			continue
		}
		name := snake(def.Variable)
		defs[name] = def.Type.Elem != nil
		names = append(names, name)
	}
	out := url.Values{}
	for key, vals := range q {
		name, bracketed := strings.CutSuffix(key, "[]")
		list, known := defs[name]
		if !known {
			return nil, apierr.BadRequestf("unknown query parameter %s (accepted: %s)", key, strings.Join(names, ", "))
		}
		var given []string
		for _, v := range vals {
			if strings.TrimSpace(v) != "" {
				given = append(given, v)
			}
		}
		switch {
		case len(given) == 0:
			continue
		case list:
		case bracketed:
			return nil, apierr.BadRequestf("query parameter %s takes one value: %s=<value>, not %s[]=", name, name, name)
		case len(given) > 1:
			return nil, apierr.BadRequestf("query parameter %s is given more than once", name)
		}
		out[key] = given
	}
	return out, nil
}

// page is the data of a paged operation's only field.
type page struct {
	Items                json.RawMessage
	Total, Page, PerPage int64
}

// readPage reads the page of data, its items as bytes: decoding the data
// would scan all of them again (a page of 1,000 documents of 200 KB, issue
// 16).
func readPage(data []byte) page {
	var p page
	rawjson.Members(rawjson.OnlyValue(data), func(key string, v []byte) bool {
		switch key {
		case "items":
			p.Items = v
		case "total":
			p.Total, _ = strconv.ParseInt(string(v), 10, 64)
		case "page":
			p.Page, _ = strconv.ParseInt(string(v), 10, 64)
		case "per_page":
			p.PerPage, _ = strconv.ParseInt(string(v), 10, 64)
		}
		return true
	})
	return p
}

// pagedBody answers a Paged route: the items array is the body; Per-Page,
// Total and an RFC 8288 Link header (first, prev, next, last, each with the
// request's other query parameters) say where the page lies.
func pagedBody(w http.ResponseWriter, r *http.Request, data json.RawMessage) []byte {
	p := readPage(data)
	if p.PerPage < 1 {
		p.PerPage = 1
	}
	last := max((p.Total+p.PerPage-1)/p.PerPage, 1)
	links := []string{pageLink(r, 1, "first")}
	if p.Page > 1 {
		links = append(links, pageLink(r, min(p.Page-1, last), "prev"))
	}
	if p.Page < last {
		links = append(links, pageLink(r, p.Page+1, "next"))
	}
	links = append(links, pageLink(r, last, "last"))
	h := w.Header()
	h.Set("Per-Page", strconv.FormatInt(p.PerPage, 10))
	h.Set("Total", strconv.FormatInt(p.Total, 10))
	h.Set("Link", strings.Join(links, ", "))
	if len(p.Items) == 0 {
		return []byte("[]")
	}
	return p.Items
}

// pageLink is one Link entry: the request's URL with page set to n.
func pageLink(r *http.Request, n int64, rel string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	q := r.URL.Query()
	q.Set("page", strconv.FormatInt(n, 10))
	u := url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
	return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
}
