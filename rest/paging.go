package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// page is the data of a paged operation's only field.
type page struct {
	Items   json.RawMessage `json:"items"`
	Total   int64           `json:"total"`
	Page    int64           `json:"page"`
	PerPage int64           `json:"per_page"`
}

// pagedBody answers a Paged route: the items array is the body; Per-Page,
// Total and an RFC 8288 Link header (first, prev, next, last, each with the
// request's other query parameters) say where the page lies.
func pagedBody(w http.ResponseWriter, r *http.Request, data json.RawMessage) []byte {
	var one map[string]page
	_ = json.Unmarshal(data, &one) // our own executor's output
	var p page
	for _, v := range one {
		p = v
	}
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
