package search

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/limits"
)

// Fuzzers of the scope checks. Run one briefly with, e.g.:
//
//	go test ./search -run '^$' -fuzz '^FuzzCheckESQL$' -fuzztime 60s
//	go test ./search -run '^$' -fuzz '^FuzzCheckDSL$' -fuzztime 60s
//
// Both check that the checks never panic and that whatever they accept
// passes an independent, deliberately simple re-reading (the oracles below).
// Seed corpora: the f.Add lists plus testdata/fuzz/<FuzzName>/.

func FuzzCheckDSL(f *testing.F) {
	for _, b := range acceptedDSL {
		f.Add([]byte(b))
	}
	for _, c := range refusedDSL {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var body map[string]any
		if json.Unmarshal(data, &body) != nil {
			return
		}
		err := CheckDSL(body)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("CheckDSL(%s) = %T %v, want a *BadRequestError", data, err, err)
			}
			return
		}
		if bad := dslOracle(body, true, 0); bad != "" {
			t.Fatalf("CheckDSL accepted %s, but it holds %s", data, bad)
		}
	})
}

// dslOracleKeys are keys the simple re-scan refuses anywhere.
var dslOracleKeys = []string{
	"script", "_script", "stored_script", "scripted_metric", "bucket_script", "bucket_selector",
	"script_score", "script_fields", "runtime_mappings", "indexed_shape", "percolate", "pit",
	"indices_boost", "query_vector_builder", "wrapper", "template", "preference", "routing",
	"target_index", "ruleset_ids", "ruleset_id",
}

// dslOracle returns what forbidden construct v holds ("" when none).
func dslOracle(v any, top bool, depth int) string { return dslOracleUnder(v, "", top, depth) }

// dslOracleUnder is dslOracle for v found under key parent (array elements
// keep their array's key).
func dslOracleUnder(v any, parent string, top bool, depth int) string {
	if depth > limits.MaxDSLDepth+1 {
		return "too deep a body"
	}
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			lk := strings.ToLower(k)
			if slices.Contains(dslOracleKeys, lk) {
				return "key " + k
			}
			if lk == "_index" && !oracleIndexField(t, k, c, parent) {
				return "key " + k + " under " + parent
			}
			if top && (lk == "id" || lk == "source" || lk == "params" || lk == "index") {
				return "top-level key " + k
			}
			if lk == "index" {
				// The shape of a document reference: an index name (of any
				// JSON type but an object) beside an id or a path.
				if _, isMap := c.(map[string]any); !isMap {
					for k2 := range t {
						if l2 := strings.ToLower(k2); l2 == "id" || l2 == "path" {
							return "index reference " + k
						}
					}
				}
			}
			if bad := dslOracleUnder(c, lk, false, depth+1); bad != "" {
				return bad
			}
		}
	case []any:
		for _, c := range t {
			if bad := dslOracleUnder(c, parent, false, depth+1); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// oracleIndexField reports whether the key k of obj, found under parent,
// is the _index metadata field where Elasticsearch reads it as a field: the
// one field of a term, terms, prefix or wildcard query or a sort key, with
// no document reference beside it or inside it (its value a scalar, a list
// of scalars or an object of scalar options that name no index, id or
// path).
func oracleIndexField(obj map[string]any, k string, v any, parent string) bool {
	if k != "_index" || !slices.Contains([]string{"term", "terms", "prefix", "wildcard", "sort"}, parent) {
		return false
	}
	refKeys := []string{"index", "_index", "id", "_id", "path", "routing", "type", "doc", "like", "unlike", "docs"}
	for k2 := range obj {
		if k2 != k && slices.Contains(refKeys, strings.ToLower(k2)) {
			return false
		}
	}
	scalar := func(x any) bool {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
		return true
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if !scalar(e) {
				return false
			}
		}
	case map[string]any:
		for ok, ov := range t {
			if slices.Contains(refKeys, strings.ToLower(ok)) || !scalar(ov) {
				return false
			}
		}
	}
	return true
}

func FuzzCheckESQL(f *testing.F) {
	for _, q := range acceptedESQL {
		f.Add(q)
	}
	for _, c := range refusedESQL {
		if len(c.q) < 4096 {
			f.Add(c.q)
		}
	}
	f.Fuzz(func(t *testing.T, query string) {
		err := CheckESQL(query, "acme", testLookups)
		if _, ierr := ESQLIndices(query); err == nil && ierr != nil {
			t.Fatalf("CheckESQL accepted %q but ESQLIndices failed: %v", query, ierr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("CheckESQL(%q) = %T %v, want a *BadRequestError", query, err, err)
			}
			return
		}
		if bad := esqlOracle(query, "acme", testLookups); bad != "" {
			t.Fatalf("CheckESQL accepted %q, but %s", query, bad)
		}
		// What one data owner may read, a data owner whose slug extends
		// it (or that it extends) may not.
		for _, other := range []string{"acme_eu", "acmeeu", "acm"} {
			if CheckESQL(query, other, testLookups) == nil {
				t.Fatalf("CheckESQL accepted %q for acme and for %s", query, other)
			}
		}
		// What Elasticsearch receives: still accepted, read the same way by
		// the oracle, and no FROM pattern reaches another data owner's
		// index, not even one whose slug starts with "acme".
		es := ESQLForElasticsearch(query, "acme")
		if err := CheckESQL(es, "acme", testLookups); err != nil {
			t.Fatalf("ESQLForElasticsearch(%q) = %q, refused: %v", query, es, err)
		}
		if bad := esqlOracleStrict(es, "acme", testLookups); bad != "" {
			t.Fatalf("CheckESQL accepted %q, sent as %q, but %s", query, es, bad)
		}
		names, err := ESQLIndices(es)
		if err != nil {
			t.Fatalf("ESQLIndices(%q): %v", es, err)
		}
		for _, n := range names {
			if f := foreignMatch(n); f != "" {
				t.Fatalf("CheckESQL accepted %q, sent as %q: %s reaches %s", query, es, n, f)
			}
		}
	})
}

// foreignIndices are index names of other data owners (slugs that share a
// prefix with "acme") and other indices of the cluster.
var foreignIndices = func() []string {
	out := []string{".security", "other", "logs-2026.11.01", "analytics-production-acme", "analytics-production-"}
	for _, slug := range []string{"acme_eu", "acmeeu", "acme2", "acm", "bob", "a"} {
		for _, k := range Kinds {
			out = append(out, IndexName(slug, k, ""), IndexName(slug, k, "VideoMeasurement"))
		}
		out = append(out, IndexPrefix(slug)+"-lookup-isps", IndexPrefix(slug)+"-"+LookupClientsToken)
	}
	return out
}()

// foreignMatch returns the first foreign index the FROM expression n (as
// ESQLIndices returns it) matches, "" when none.
func foreignMatch(n string) string {
	n = strings.TrimPrefix(n, "-") // an exclusion of a foreign index is refused too
	n, _, _ = strings.Cut(n, "::")
	if rest, ok := strings.CutPrefix(n, "<"); ok {
		static, _, _ := strings.Cut(strings.TrimSuffix(rest, ">"), "{")
		n = static + "*"
	}
	for _, f := range foreignIndices {
		if GlobMatch(n, f) {
			return f
		}
	}
	return ""
}

// otok is a token of the oracle's re-reading.
type otok struct {
	s      string
	quoted bool
}

// oracleSegments splits a query at pipes into tokens, dropping comments
// (non-nested) and keeping strings and backtick identifiers whole.
func oracleSegments(q string) [][]otok {
	var segs [][]otok
	var seg []otok
	var word strings.Builder
	flush := func() {
		if word.Len() > 0 {
			seg = append(seg, otok{s: word.String()})
			word.Reset()
		}
	}
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case strings.HasPrefix(q[i:], "//"):
			// Elasticsearch ends a line comment at '\r' or '\n'.
			flush()
			j := strings.IndexAny(q[i:], "\r\n")
			if j < 0 {
				i = len(q)
			} else {
				i += j
			}
		case strings.HasPrefix(q[i:], "/*"):
			flush()
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += 2 + j + 1
			}
		case strings.HasPrefix(q[i:], `"""`):
			flush()
			j := strings.Index(q[i+3:], `"""`)
			if j < 0 {
				j = len(q) - i - 3
			}
			seg = append(seg, otok{s: q[i+3 : i+3+j], quoted: true})
			i += 3 + j + 2
		case c == '"' || c == '`':
			flush()
			j := i + 1
			for j < len(q) && q[j] != c {
				if c == '"' && q[j] == '\\' {
					j++
				}
				j++
			}
			seg = append(seg, otok{s: q[i+1 : min(j, len(q))], quoted: true})
			i = j
		case c == '|':
			flush()
			segs = append(segs, seg)
			seg = nil
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',':
			flush()
		case c == '(' || c == ')':
			flush()
			seg = append(seg, otok{s: string(c)})
		default:
			word.WriteByte(c)
		}
	}
	flush()
	return append(segs, seg)
}

// esqlOracle returns why an accepted query reads outside the data owner's
// indices ("" when it does not): every name after FROM must be the prefix
// or continue it with '-'; every LOOKUP JOIN target must also be known.
func esqlOracle(q, slug string, lookups []string) string {
	prefix := IndexPrefix(slug)
	return esqlOracleIn(q, lookups, func(name string) bool {
		return name == prefix || name == prefix+"*" || strings.HasPrefix(name, prefix+"-")
	})
}

// esqlOracleStrict is esqlOracle for a query as sent to Elasticsearch: every
// name must continue the prefix with '-' (the spec's prefix* is gone).
func esqlOracleStrict(q, slug string, lookups []string) string {
	prefix := IndexPrefix(slug)
	return esqlOracleIn(q, lookups, func(name string) bool { return strings.HasPrefix(name, prefix+"-") })
}

func esqlOracleIn(q string, lookups []string, in func(string) bool) string {
	segs := oracleSegments(q)
	if len(segs[0]) == 0 || segs[0][0].quoted || !strings.EqualFold(segs[0][0].s, "from") {
		return "it does not begin with FROM"
	}
	for _, t := range segs[0][1:] {
		if !t.quoted && strings.EqualFold(t.s, "metadata") {
			break
		}
		parts := []string{t.s}
		if t.quoted {
			parts = strings.Split(t.s, ",")
		}
		for _, p := range parts {
			p = strings.TrimPrefix(p, "-")
			p, _, _ = strings.Cut(p, "::")
			if rest, ok := strings.CutPrefix(p, "<"); ok {
				p, _, _ = strings.Cut(rest, "{")
			}
			if !in(p) {
				return "FROM names " + p
			}
		}
	}
	for si, seg := range segs {
		for j, t := range seg {
			if t.quoted {
				continue
			}
			lw := strings.ToLower(t.s)
			if lw == "from" && ((j == 0 && si > 0) || (j > 0 && seg[j-1].s == "(")) {
				return "it has a second FROM"
			}
			if lw == "lookup" && j+2 < len(seg) && !seg[j+1].quoted && strings.EqualFold(seg[j+1].s, "join") {
				target := seg[j+2].s
				if !in(target) || !slices.Contains(lookups, target) {
					return "it joins " + target
				}
			}
		}
	}
	return ""
}

// The oracles must see the escapes they stand guard against.
func TestOraclesSeeEscapes(t *testing.T) {
	for _, q := range []string{
		"ROW a = 1",
		"FROM analytics-production-bob-measurements",
		"FROM analytics-production-acme2-measurements",
		`FROM "analytics-production-acme-measurements,other"`,
		"FROM analytics-production-acme-measurements, -other",
		"FROM <other-{now/d}>",
		"FROM analytics-production-acme-measurements | FROM other",
		"FROM analytics-production-acme-measurements | WHERE x IN ( FROM other )",
		"FROM analytics-production-acme-measurements | LOOKUP JOIN other ON x",
		"FROM analytics-production-acme-measurements | LOOKUP JOIN analytics-production-acme-measurements ON x",
		"FROM analytics-production-acme-measurements | FORK (LOOKUP JOIN other ON x)",
	} {
		if esqlOracle(q, "acme", testLookups) == "" {
			t.Errorf("esqlOracle misses %q", q)
		}
	}
	for _, q := range acceptedESQL {
		if bad := esqlOracle(q, "acme", testLookups); bad != "" {
			t.Errorf("esqlOracle(%q): %s", q, bad)
		}
	}
	for _, b := range []string{
		`{"query": {"terms": {"u": {"index": "other", "id": "1", "path": "p"}}}}`,
		`{"aggs": {"a": {"aggs": {"b": {"avg": {"script": "1"}}}}}}`,
		`{"query": {"more_like_this": {"like": [{"_index": "other", "_id": "1"}]}}}`,
		`{"pit": {"id": "x"}}`,
		`{"id": "template"}`,
		`{"sort": [{"_script": {}}]}`,
		`{"query": {"pinned": {"docs": [{"_index": "other", "_id": "1"}]}}}`,
		`{"query": {"terms": {"term": {"_index": "other", "id": "1", "path": "p"}}}}`,
		`{"query": {"terms": {"_index": {"index": "other", "id": "1", "path": "p"}}}}`,
		`{"query": {"match": {"_index": "other"}}}`,
		`{"query": {"term": {"_INDEX": "other"}}}`,
		`{"_index": "other"}`,
	} {
		if dslOracle(mustJSON(t, b), true, 0) == "" {
			t.Errorf("dslOracle misses %s", b)
		}
	}
	for _, b := range acceptedDSL {
		if bad := dslOracle(mustJSON(t, b), true, 0); bad != "" {
			t.Errorf("dslOracle(%s): %s", b, bad)
		}
	}
}
