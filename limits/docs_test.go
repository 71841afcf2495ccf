package limits_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
)

// TestConfigurationTableHasEveryLimitSetting: every bound of limits.Table
// that a setting changes has its row in the table of docs/configuration.md,
// under its flag, and the default the row shows is the declared one.
func TestConfigurationTableHasEveryLimitSetting(t *testing.T) {
	rows := tableRows(t, "../docs/configuration.md")
	settings := 0
	for _, l := range limits.Table {
		if l.Env == "" {
			continue
		}
		settings++
		row, ok := rows["`"+l.Env+"`"]
		if !ok {
			t.Errorf("%s (%s) is not in docs/configuration.md's table", l.Env, l.Name)
			continue
		}
		if len(row) < 3 {
			t.Errorf("docs/configuration.md: the row of %s has %d cells, want variable, flag, default, meaning", l.Env, len(row))
			continue
		}
		if flag := "`--" + l.Flag + "`"; !strings.Contains(row[1], flag) {
			t.Errorf("docs/configuration.md: %s's flag is %q, want %s", l.Env, row[1], flag)
		}
		documented, err := parseDefault(row[2], l.Default)
		if err != nil {
			t.Errorf("docs/configuration.md: %s's default %q: %v", l.Env, row[2], err)
			continue
		}
		if documented != declared(l.Default) {
			t.Errorf("docs/configuration.md: %s's default is %v, but limits.%s is %v", l.Env, documented, l.Name, declared(l.Default))
		}
	}
	if settings < 10 {
		t.Fatalf("limits.Table has %d settings; the check found nothing to check", settings)
	}
}

// TestDecisionsTableOfGraphQLLimits: the table of the limits of a /graphql
// document in docs/decisions.md shows limits.DefaultGraphQL, each limit
// under its extensions.limit name, and its prose the cap on validation
// errors.
func TestDecisionsTableOfGraphQLLimits(t *testing.T) {
	rows := tableRows(t, "../docs/decisions.md")
	raw, err := os.ReadFile("../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, l := range limits.Table {
		field, ok := strings.CutPrefix(l.Name, "GraphQL.")
		if !ok {
			continue
		}
		checked++
		want := l.Default.(int)
		if field == "Errors" {
			m := regexp.MustCompile(`Validation errors are capped at ([0-9,]+) per document`).FindSubmatch(raw)
			if m == nil || number(string(m[1])) != want {
				t.Errorf("docs/decisions.md does not say that validation errors are capped at %d per document (%s)", want, m)
			}
			continue
		}
		name := "`" + strings.ToLower(field[:1]) + field[1:] + "`"
		row, ok := rows[name]
		if !ok || len(row) < 2 {
			t.Errorf("%s (limits.DefaultGraphQL.%s) is not in docs/decisions.md's table of /graphql limits", name, field)
			continue
		}
		if got := number(row[1]); got != want {
			t.Errorf("docs/decisions.md: %s is %q, but limits.DefaultGraphQL.%s is %d", name, row[1], field, want)
		}
	}
	if checked != 9 {
		t.Errorf("checked %d limits of a /graphql document, want the 9 fields of limits.GraphQL", checked)
	}
}

// TestDocumentedBounds: the bounds the prose of the docs states (a page, a
// search, ES|QL, persisted queries, subscriptions, the share of the
// database, lists of ids, the AI assistant) are the declared ones. Each sentence is found by its words,
// each number in it compared with a declaration: a changed default fails
// here until the sentence says it.
func TestDocumentedBounds(t *testing.T) {
	slots, perOwner := limits.AdmissionSlots(8)
	for _, c := range []struct {
		doc, sentence string
		want          []any // an int, or a time.Duration, per group of sentence
	}{
		{"design.md", "`per_page` default ([0-9,]+), at most ([0-9,]+)\\. Searches: `size` defaults to ([0-9,]+), at most ([0-9,]+); " +
			"a scroll keeps alive at most ([0-9a-z]+)\\.",
			[]any{limits.ListPerPage, limits.MaxListPerPage, limits.SearchSize, limits.MaxSearchSize, limits.MaxScroll}},
		{"decisions.md", "`size` ([0-9,]+) by default, at most ([0-9,]+) \\(also `from \\+ size`\\); scroll keep-alive at most `([0-9a-z]+)`, " +
			"at most ([0-9,]+) open scrolls per data owner",
			[]any{limits.SearchSize, limits.MaxSearchSize, limits.MaxScroll, limits.MaxOpenScrolls}},
		{"decisions.md", "listings page with `page`/`per_page` \\(([0-9,]+), at most ([0-9,]+);",
			[]any{limits.ExportPerPage, limits.MaxExportPerPage}},
		{"export-api.md", "`per_page` \\(default ([0-9,]+), 1 to ([0-9,]+)\\)", []any{limits.ExportPerPage, limits.MaxExportPerPage}},
		{"decisions.md", "Paging: `page` \\(from 1, at most ([0-9,]+)\\) and `per_page` \\(default ([0-9,]+), 1 to ([0-9,]+)\\)",
			[]any{limits.MaxListPage, limits.ListPerPage, limits.MaxListPerPage}},
		{"admin-api.md", "`per_page` \\(default ([0-9,]+), at most ([0-9,]+); else 400\\)", []any{limits.ListPerPage, limits.MaxListPerPage}},
		{"decisions.md", "`clientIds` 1 to ([0-9,]+) integer ids", []any{limits.MaxConnectionClients}},
		{"search.md", "Query DSL at most ([0-9,]+) clauses, ([0-9,]+) levels, ([0-9,]+) values, ([0-9,]+) sort keys, ([0-9,]+) `terms` values, " +
			"`query_string`/`simple_query_string` ([0-9,]+) bytes and ([0-9,]+) levels of parentheses, ([0-9,]+) aggregations ([0-9,]+) deep, " +
			"([0-9,]+) buckets in an answer",
			[]any{limits.MaxDSLClauses, limits.MaxDSLDepth, limits.MaxDSLNodes, limits.MaxDSLSortKeys, limits.MaxDSLTermsValues,
				limits.MaxQueryStringLength, limits.MaxQueryStringDepth, limits.MaxDSLAggs, limits.MaxDSLAggDepth, limits.MaxAggBuckets}},
		{"decisions.md", "`nodes\\(ids:\\)` takes at most ([0-9,]+) ids", []any{limits.MaxNodes}},
		{"decisions.md", "([0-9,]+) expression nodes per query \\(`MaxQueryNodes`\\), ([0-9,]+) tokens and ([0-9,]+) KiB",
			[]any{limits.MaxQueryNodes, limits.MaxESQLTokens, limits.MaxESQLBytes >> 10}},
		{"decisions.md", "at most ([0-9,]+) queries and ([0-9,]+) KiB, its least recently used out first, none over ([0-9,]+) KiB",
			[]any{limits.PersistedQueriesPerOwner, limits.PersistedQueryOwnerBytes >> 10, limits.PersistedQueryMaxBytes >> 10}},
		{"decisions.md", "the shares of the ([0-9,]+) most recently active data owners are kept \\(([0-9,]+) MiB at most\\)",
			[]any{limits.PersistedQueryOwners, limits.PersistedQueryOwners * limits.PersistedQueryOwnerBytes >> 20}},
		{"decisions.md", "At most ([0-9,]+) subscriptions per WebSocket connection and ([0-9,]+) per API key per process " +
			"\\(`TOO_MANY_REQUESTS`\\); a subscriber ([0-9,]+) events behind",
			[]any{limits.SubscriptionsPerConnection, limits.SubscriptionsPerKey, limits.SubscriberLag}},
		{"decisions.md", "the events after the last one it got, at most ([0-9,]+)\\)", []any{limits.SubscriptionCatchUp}},
		{"admin-api.md", "`client_ids` \\(1 to ([0-9,]+)\\)", []any{limits.MaxGroupMembers}},
		{"admin-api.md", "resolve anomaly episodes by id \\(1 to ([0-9,]+)\\)", []any{limits.MaxResolveAnomalies}},
		{"admin-api.md", "at most ([0-9,]+) documents\\), `get_client`", []any{limits.MaxAIToolHits}},
		{"admin-api.md", "The model gets the newest ([0-9,]+) user and assistant messages within ([0-9,]+) characters .*? " +
			"earlier tool results at most ([0-9,]+) characters each, data parts such as an explanation's context ([0-9,]+)\\), " +
			"at most ([0-9,]+) model calls and ([0-9,]+) tool calls per answer .*? tool results of at most ([0-9,]+) KiB .*? " +
			"at most ([0-9,]+) output tokens and ([0-9,]+) s per model call, ([0-9,]+) messages per conversation",
			[]any{limits.MaxAIContextMessages, limits.MaxAIContextChars, limits.MaxAIToolPartChars, limits.MaxAIDataPartChars,
				limits.MaxAISteps, limits.MaxAIToolCalls, limits.MaxAIToolResultBytes >> 10, limits.AIOutputTokens,
				int(limits.AICallTimeout / time.Second), limits.MaxAIConversationMessages}},
		{"admin-api.md", "reserves its output limit \\(([0-9,]+) tokens, ([0-9,]+) for a title\\)",
			[]any{limits.AIOutputTokens, limits.AITitleTokens}},
		{"decisions.md", "\\(P = 8 here: ([0-9]+) and ([0-9]+)\\)\\. Work over its share waits up to ([0-9]+) s",
			[]any{slots, perOwner, int(limits.AdmissionWait / time.Second)}},
	} {
		raw, err := os.ReadFile("../docs/" + c.doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(raw)), " ") // a sentence may break across lines
		m := regexp.MustCompile(c.sentence).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("docs/%s does not say %q", c.doc, c.sentence)
			continue
		}
		for i, want := range c.want {
			switch want := want.(type) {
			case time.Duration:
				if got, err := time.ParseDuration(m[i+1]); err != nil || got != want {
					t.Errorf("docs/%s: %q says %s, but the declared bound is %s", c.doc, m[0], m[i+1], want)
				}
			default:
				if got := number(m[i+1]); got != want {
					t.Errorf("docs/%s: %q says %s, but the declared bound is %v", c.doc, m[0], m[i+1], want)
				}
			}
		}
	}
}

// tableRows reads the rows of the Markdown tables of path, by the text of
// their first cell and of each backquoted name in it (a row of two
// variables is found by either): all its cells, trimmed, escaped pipes (\|)
// kept as pipes.
func tableRows(t *testing.T, path string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		line = strings.ReplaceAll(strings.Trim(line, "|"), `\|`, "\x00")
		var cells []string
		for c := range strings.SplitSeq(line, "|") {
			cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
		}
		rows[cells[0]] = cells
		for _, name := range regexp.MustCompile("`[^`]+`").FindAllString(cells[0], -1) {
			rows[name] = cells
		}
	}
	return rows
}

// parseDefault reads a documented default as a value of declared's type:
// the first backquoted word of the cell, or its first word.
func parseDefault(cell string, declaredAs any) (any, error) {
	word, _, _ := strings.Cut(strings.TrimSpace(cell), " ")
	if m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(cell); m != nil {
		word = m[1]
	}
	switch declaredAs.(type) {
	case time.Duration:
		return time.ParseDuration(word)
	case int, int64:
		n, err := strconv.ParseInt(word, 10, 64)
		return n, err
	case limits.Rate:
		return ratelimit.ParseRate(word)
	case limits.ByteRate:
		return ratelimit.ParseByteRate(word)
	}
	return nil, fmt.Errorf("a default of type %T is not read", declaredAs)
}

// declared is a default as parseDefault reads it.
func declared(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case limits.Rate:
		return ratelimit.Rate(v)
	case limits.ByteRate:
		return ratelimit.ByteRate(v)
	}
	return v
}

// number reads "10,000" as 10000 (-1 when it is not a number).
func number(s string) int {
	n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
	if err != nil {
		return -1
	}
	return n
}
