// Package es is the Elasticsearch search backend (used when
// ELASTICSEARCH_URL is set) and the indexer that copies the documents table
// into the analytics-production-<data_owner>-... indices.
//
// The server alone names the indices a request reads: Search targets the
// indices of req.Scope and never looks at the body for them. Scroll ids
// given to clients wrap Elasticsearch's own id with the data owner and an
// HMAC under the server secret, so an id of another data owner, or a forged
// one, is refused before anything is sent to Elasticsearch.
package es

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/search"
)

// Backend runs searches on Elasticsearch. It implements search.Backend.
type Backend struct {
	client    esapi.Transport
	pool      *pgxpool.Pool
	scrollKey []byte
	logger    *slog.Logger

	// Timeout bounds each request to Elasticsearch (default
	// limits.ESTimeout).
	Timeout time.Duration
}

var _ search.Backend = (*Backend)(nil)

// New makes a backend for the Elasticsearch at rawURL (credentials may be in
// the URL's user info). secret is the server's secret key; scroll ids are
// signed with a key derived from it. Nothing is sent to Elasticsearch yet.
func New(rawURL string, pool *pgxpool.Pool, secret []byte, logger *slog.Logger) (*Backend, error) {
	if len(secret) == 0 {
		return nil, errors.New("elasticsearch backend: empty secret")
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("elasticsearch backend: invalid ELASTICSEARCH_URL %q", redact(rawURL))
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client, err := newTransport(u)
	if err != nil {
		return nil, fmt.Errorf("elasticsearch backend: %w", err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("fleetgraph/search/es scroll id v1"))
	return &Backend{client: client, pool: pool, scrollKey: mac.Sum(nil), logger: logger, Timeout: limits.ESTimeout}, nil
}

// Client is the Elasticsearch client (for the indexer).
func (b *Backend) Client() esapi.Transport { return b.client }

// newTransport is the low-level client of the Elasticsearch at u: esapi's
// requests run on it. The package go-elasticsearch itself is not imported:
// it also builds the typed API, some 850 packages this server never uses.
// Credentials in u's user info become basic authentication.
func newTransport(u *url.URL) (esapi.Transport, error) {
	addr := *u
	addr.Path = strings.TrimRight(addr.Path, "/")
	addr.User = nil
	opts := []elastictransport.Option{elastictransport.WithURLs(&addr), elastictransport.WithUserAgent("fleetgraph")}
	if u.User != nil {
		password, _ := u.User.Password()
		opts = append(opts, elastictransport.WithBasicAuth(u.User.Username(), password))
	}
	return elastictransport.NewClient(opts...)
}

// Indexer makes the indexer feeding this backend's cluster.
func (b *Backend) Indexer() *Indexer { return NewIndexer(b.client, b.pool, b.logger) }

// withTimeout bounds one request to Elasticsearch.
func (b *Backend) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if b.Timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, b.Timeout)
}

// Search runs req over the indices of req.Scope. Indices that do not exist
// (yet) are no error: ignore_unavailable and allow_no_indices make a data
// owner without documents get an empty answer, as on the embedded backend.
func (b *Backend) Search(ctx context.Context, req search.Request) (search.Response, error) {
	indices, err := scopeIndices(req.Scope)
	if err != nil {
		return nil, err
	}
	body := req.Body
	if body == nil {
		body = map[string]any{}
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, search.Badf("search body is not JSON: %v", err)
	}
	yes := true
	sr := esapi.SearchRequest{
		Index:             indices,
		Body:              bytes.NewReader(buf),
		IgnoreUnavailable: &yes,
		AllowNoIndices:    &yes,
	}
	if req.Scroll != "" {
		d, err := parseKeepAlive(req.Scroll)
		if err != nil {
			return nil, err
		}
		sr.Scroll = d
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	res, err := sr.Do(ctx, b.client)
	if err != nil {
		return nil, upstream("search", err)
	}
	out, err := decode(ctx, res, "search")
	if err != nil {
		return nil, err
	}
	if req.Scroll != "" {
		b.endScroll(ctx, out)
	}
	b.wrapScrollID(req.Scope.DataOwnerID, out)
	return out, nil
}

// endScroll clears the scroll of a page without hits: the scroll is done,
// and Elasticsearch would otherwise keep its search context until the
// keep-alive runs out. The page then carries no _scroll_id. A failure to
// clear only leaves the context to expire.
func (b *Backend) endScroll(ctx context.Context, out map[string]any) {
	id, ok := out["_scroll_id"].(string)
	if !ok || id == "" {
		return
	}
	hits, _ := out["hits"].(map[string]any)
	if list, _ := hits["hits"].([]any); len(list) > 0 {
		return
	}
	delete(out, "_scroll_id")
	buf, err := json.Marshal(map[string]any{"scroll_id": []string{id}})
	if err != nil {
		return
	}
	res, err := esapi.ClearScrollRequest{Body: bytes.NewReader(buf)}.Do(ctx, b.client)
	if err != nil {
		b.logger.Warn("elasticsearch: clear scroll failed", "err", err)
		return
	}
	defer drain(res)
	if res.IsError() && res.StatusCode != http.StatusNotFound {
		b.logger.Warn("elasticsearch: clear scroll failed", "err", esError(res, "clear scroll"))
	}
}

// ScrollNext continues a scroll made by Search for the same data owner.
func (b *Backend) ScrollNext(ctx context.Context, dataOwnerID int64, scrollID, keepAlive string) (search.Response, error) {
	esID, ok := b.unwrapScrollID(dataOwnerID, scrollID)
	if !ok {
		return nil, search.Badf("unknown or expired scroll_id")
	}
	body := map[string]any{"scroll_id": esID}
	if keepAlive != "" {
		if _, err := parseKeepAlive(keepAlive); err != nil {
			return nil, err
		}
		body["scroll"] = keepAlive
	}
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	res, err := esapi.ScrollRequest{Body: bytes.NewReader(buf)}.Do(ctx, b.client)
	if err != nil {
		return nil, upstream("scroll", err)
	}
	if res.StatusCode == http.StatusNotFound {
		drain(res)
		return nil, search.Badf("unknown or expired scroll_id")
	}
	out, err := decode(ctx, res, "scroll")
	if err != nil {
		return nil, err
	}
	b.endScroll(ctx, out)
	b.wrapScrollID(dataOwnerID, out)
	return out, nil
}

// PrecheckESQL refuses nothing: Elasticsearch parses its own queries.
func (b *Backend) PrecheckESQL(string) error { return nil }

// ESQL runs a query the caller has checked with search.CheckESQL and
// returns one object per row, keyed by column name. A FROM whose indices
// do not exist yet (a data owner without documents of that kind) answers no
// rows, as on the embedded backend, where Elasticsearch 8 refuses the query
// ("Unknown index").
func (b *Backend) ESQL(ctx context.Context, dataOwnerID int64, slug, query string) ([]map[string]any, error) {
	// The caller has run search.CheckESQL; narrow the spec's <prefix>*
	// pattern so it cannot reach a data owner whose slug extends this one.
	buf, err := json.Marshal(map[string]any{"query": search.ESQLForElasticsearch(query, slug)})
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.withTimeout(ctx)
	defer cancel()
	res, err := esapi.EsqlQueryRequest{Body: bytes.NewReader(buf), Format: "json"}.Do(ctx, b.client)
	if err != nil {
		return nil, upstream("esql", err)
	}
	if res.IsError() {
		defer drain(res)
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		if onlyMissingIndices(raw, slug) {
			return []map[string]any{}, nil
		}
		return nil, esErrorBody(res.StatusCode, raw, "esql")
	}
	out, err := decode(ctx, res, "esql")
	if err != nil {
		return nil, err
	}
	return esqlRows(out)
}

// unknownIndex is how ES|QL's verifier reports a FROM naming no index.
var unknownIndex = regexp.MustCompile(`^line \d+:\d+: Unknown index \[([^\]]*)\]$`)

// onlyMissingIndices reports whether an ES|QL error says nothing but that
// indices of the data owner that could exist do not: a wildcard pattern, or
// a name of one of the data owner's kinds (and types). A name that can
// never exist stays an error, as on the embedded backend.
func onlyMissingIndices(raw []byte, slug string) bool {
	var body struct {
		Error struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
			Index  string `json:"index"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return false
	}
	var names []string
	switch body.Error.Type {
	case "index_not_found_exception":
		names = []string{body.Error.Index}
	case "verification_exception":
		lines := strings.Split(strings.TrimSpace(body.Error.Reason), "\n")
		if len(lines) != 2 || lines[0] != "Found 1 problem" {
			return false
		}
		m := unknownIndex.FindStringSubmatch(lines[1])
		if m == nil {
			return false
		}
		names = strings.Split(m[1], ",")
	default:
		return false
	}
	included := false
	for _, name := range names {
		name = strings.TrimSpace(name)
		if strings.HasPrefix(name, "-") {
			continue // an exclusion (the lookup indices) makes nothing missing
		}
		if name == "" {
			return false
		}
		included = true
		name, _, _ = strings.Cut(name, "::")
		if strings.Contains(name, "*") {
			if !strings.HasPrefix(name, search.IndexPrefix(slug)) {
				return false
			}
			continue
		}
		if _, _, ok := search.ParseIndex(slug, name); !ok {
			return false
		}
	}
	return included
}

// esqlRows turns {"columns": [{"name": ...}], "values": [[...]]} into
// objects keyed by column name.
func esqlRows(out map[string]any) ([]map[string]any, error) {
	cols, _ := out["columns"].([]any)
	names := make([]string, len(cols))
	for i, c := range cols {
		m, _ := c.(map[string]any)
		name, ok := m["name"].(string)
		if !ok {
			return nil, errors.New("esql: elasticsearch answered a column without a name")
		}
		names[i] = name
	}
	values, _ := out["values"].([]any)
	rows := make([]map[string]any, 0, len(values))
	for _, v := range values {
		vals, ok := v.([]any)
		if !ok || len(vals) != len(names) {
			return nil, errors.New("esql: elasticsearch answered a row that does not match its columns")
		}
		row := make(map[string]any, len(names))
		for i, name := range names {
			row[name] = vals[i]
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// slugToken and typeToken are what a slug and a (lower-cased) document type
// may look like in an index name. Slugs have no "-" (migration 00003), so
// analytics-production-<slug>-<kind>* reaches no other data owner's
// indices; a type must not add another expression (",") or a wildcard.
var (
	slugToken = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)
	typeToken = regexp.MustCompile(`^[a-z0-9_.-]+$`)
)

// scopeIndices are the index expressions of a scope: exactly
// search.Scope.Indices, once slug, kind and types are known to be safe.
func scopeIndices(s search.Scope) ([]string, error) {
	if !slugToken.MatchString(s.Slug) || search.IndexName(s.Slug, s.Kind, "") == search.IndexPrefix(s.Slug)+"-" {
		return nil, fmt.Errorf("search: invalid scope (data owner %q, kind %q)", s.Slug, s.Kind)
	}
	for _, t := range s.Types {
		if !typeToken.MatchString(strings.ToLower(t)) {
			return nil, search.Badf("invalid document type %q", t)
		}
	}
	return s.Indices(), nil
}

// parseKeepAlive checks an Elasticsearch time value (1m, 30s, 500ms ...)
// and the contract's maximum.
func parseKeepAlive(s string) (time.Duration, error) {
	n, unit, ok := search.ParseTimeValue(s)
	if !ok || n <= 0 || n > int64(limits.MaxScroll/unit) {
		return 0, search.Badf("invalid scroll keep-alive %q: a time value of at most %s", s, search.TimeValue(limits.MaxScroll))
	}
	return time.Duration(n) * unit, nil
}

// Scroll ids: fgs1.<data owner id>.<base64url ES scroll id>.<base64url mac>.
const scrollPrefix = "fgs1."

func (b *Backend) scrollMAC(payload string) []byte {
	m := hmac.New(sha256.New, b.scrollKey)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func (b *Backend) wrapScrollID(owner int64, out map[string]any) {
	id, ok := out["_scroll_id"].(string)
	if !ok || id == "" {
		return
	}
	payload := scrollPrefix + strconv.FormatInt(owner, 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(id))
	out["_scroll_id"] = payload + "." + base64.RawURLEncoding.EncodeToString(b.scrollMAC(payload))
}

func (b *Backend) unwrapScrollID(owner int64, id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, scrollPrefix)
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || parts[0] != strconv.FormatInt(owner, 10) {
		return "", false
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, b.scrollMAC(scrollPrefix+parts[0]+"."+parts[1])) {
		return "", false
	}
	esID, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || len(esID) == 0 {
		return "", false
	}
	return string(esID), true
}

// decode reads a response: the JSON object of a 2xx, a BadRequestError with
// Elasticsearch's reason for a client error, a plain error otherwise.
func decode(ctx context.Context, res *esapi.Response, op string) (map[string]any, error) {
	defer drain(res)
	if res.IsError() {
		return nil, esError(res, op)
	}
	dec := json.NewDecoder(budget.Reader(ctx, res.Body))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		if errors.Is(err, apierr.ErrBadRequest) { // over the answer's budget
			return nil, err
		}
		return nil, fmt.Errorf("elasticsearch %s: decode response: %w", op, err)
	}
	return out, nil
}

func esError(res *esapi.Response, op string) error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return esErrorBody(res.StatusCode, raw, op)
}

// esErrorBody is the error of an Elasticsearch error answer: a
// BadRequestError for what the request got wrong, search.ErrUnavailable (a
// 503) for the cluster's own failures, a plain error (a 500) for the
// credentials the server was given; the details go to the log only.
func esErrorBody(status int, raw []byte, op string) error {
	reason := errorReason(raw)
	switch {
	case status >= 400 && status < 500 &&
		status != http.StatusUnauthorized && status != http.StatusForbidden &&
		status != http.StatusProxyAuthRequired && status != http.StatusRequestTimeout &&
		status != http.StatusTooManyRequests:
		if reason == "" {
			reason = http.StatusText(status)
		}
		return search.Badf("elasticsearch rejected the %s: %s", op, reason)
	}
	if reason == "" {
		reason = strings.TrimSpace(string(raw[:min(len(raw), 500)]))
	}
	if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout {
		// The cluster's own trouble: worth trying again later.
		return fmt.Errorf("elasticsearch %s: status %d: %s: %w", op, status, reason, search.ErrUnavailable)
	}
	// The credentials the server was given: its own fault.
	return fmt.Errorf("elasticsearch %s: status %d: %s", op, status, reason)
}

// errorReason picks the most telling reason of an Elasticsearch error body:
// the first root cause ("all shards failed" says little), else the error.
func errorReason(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil || len(body.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(body.Error, &s) == nil {
		return s
	}
	type cause struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}
	var e struct {
		cause
		RootCause []cause `json:"root_cause"`
	}
	if json.Unmarshal(body.Error, &e) != nil {
		return ""
	}
	c := e.cause
	if len(e.RootCause) > 0 && e.RootCause[0].Reason != "" {
		c = e.RootCause[0]
	}
	if c.Type == "" {
		return c.Reason
	}
	return c.Type + ": " + c.Reason
}

// upstream is a request that got no answer (connection refused, time-out):
// the backend is unavailable.
func upstream(op string, err error) error {
	return fmt.Errorf("elasticsearch %s: %w: %w", op, search.ErrUnavailable, err)
}

func drain(res *esapi.Response) {
	if res != nil && res.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
	}
}

// redact hides the password of a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
