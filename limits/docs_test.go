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
