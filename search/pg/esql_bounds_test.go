package pg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/esql"
)

// Requests over the size limits answer 400, naming the limit, before any
// SQL is built: fast, whatever PostgreSQL would have made of them.
func TestESQLOverLimitsIsAFast400(t *testing.T) {
	f := esqlFixtures(t)
	from := "FROM $P-measurements | EVAL x = statistic_values.bitrate"
	cols := make([]string, 2000)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d = statistic_values.bitrate + %d", i, i)
	}
	cases := []struct{ name, q, limit string }{
		{"300 chained EVALs", from + strings.Repeat(" | EVAL x = x + statistic_values.stalls", 300), "MaxCommands"},
		{"2,000 EVAL columns", "FROM $P-measurements | EVAL " + strings.Join(cols, ", "), "MaxEvalColumns"},
		{"5,000 nested parentheses", "FROM $P-measurements | EVAL x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000), "nested"},
		{"a 3,000-term sum", "FROM $P-measurements | EVAL x = 1" + strings.Repeat(" + statistic_values.stalls", 3000), "MaxExprDepth"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := f.query(t, c.q)
			elapsed := time.Since(start)
			var bad *search.BadRequestError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.limit) {
				t.Fatalf("want a 400 naming %s, got %v", c.limit, err)
			}
			// Refused before SQL is built: the chain's planning took
			// minutes; a loaded test machine may take a second or two.
			if elapsed > 2*time.Second {
				t.Errorf("answered in %s, want a fast refusal", elapsed)
			}
		})
	}
}

// A chain that uses its previous value twice doubles at every step: the
// fences (esql_inline.go) keep the answer and the planning time.
func TestESQLSelfDoublingChainAnswers(t *testing.T) {
	f := esqlFixtures(t)
	q := "FROM $P-measurements | WHERE id == \"m1\" | EVAL x = statistic_values.bitrate::long" +
		strings.Repeat(" | EVAL x = x + x", 40) + " | KEEP x"
	start := time.Now()
	rows, err := f.query(t, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0]["x"] != int64(1000)<<40 {
		t.Fatalf("rows %v, want x = %d", rows, int64(1000)<<40)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s", d)
	}
}

// Planning stays bounded over generated queries of every size up to the
// limits: chains of EVAL commands or of columns of one EVAL, each step
// using earlier columns once or several times, with WHERE, SORT and STATS
// over the result. Each statement is planned by the real PostgreSQL
// (EXPLAIN VERBOSE, which plans without running and prints every
// expression of the plan). What is asserted is the plan's size, which
// does not depend on how busy the machine is: an expression re-expanded
// at every step would double it per step, while the fenced one grows
// linearly. The time is logged, and bounded only loosely (a plan that
// takes seconds on a busy machine is not what the test is about).
func TestESQLPlanningStaysBounded(t *testing.T) {
	f := esqlFixtures(t)
	rng := rand.New(rand.NewPCG(11, 1))
	shapes := []func(n int) string{
		func(n int) string { return esqlChain(n, "x = x + statistic_values.stalls", " | EVAL ") },
		func(n int) string { return esqlChain(n, "x = x + x", " | EVAL ") },
		func(n int) string { return esqlChain(n, "x = x * 2 + x - statistic_values.stalls", ", ") },
		func(n int) string { return esqlChain(n, "x = CASE(x > 0, x, -x) + LENGTH(TO_STRING(x))", ", ") },
		func(n int) string {
			return esqlChain(n, "x = x + statistic_values.stalls", ", ") + " | WHERE x > 1 AND x < x * 2 | SORT x, x + 1 | STATS m = MAX(x + x) BY y = x - x"
		},
	}
	sizes := []int{limits.MaxCommands - 2, limits.MaxEvalColumns - 2}
	for range 6 {
		sizes = append(sizes, 1+rng.IntN(min(limits.MaxCommands, limits.MaxEvalColumns)-2))
	}
	worst, largest := time.Duration(0), 0.0
	for i, shape := range shapes {
		for _, n := range sizes {
			q := strings.ReplaceAll(shape(n), "$P", f.p)
			d, plan := esqlPlanSize(t, f, q)
			perStep := float64(plan) / float64(n)
			worst, largest = max(worst, d), max(largest, perStep)
			if perStep > maxPlanBytesPerStep {
				t.Errorf("shape %d, %d steps: a plan of %d bytes, %.0f per step (at most %d)", i, n, plan, perStep, maxPlanBytesPerStep)
			}
			if d > 10*time.Second {
				t.Errorf("shape %d, %d steps: planned in %s", i, n, d)
			}
		}
	}
	t.Logf("slowest planning: %s; largest plan: %.0f bytes per step", worst, largest)
}

// esqlChain is a pipeline of n steps joined by sep (" | EVAL " for one
// command each, ", " for columns of one EVAL).
func esqlChain(n int, step, sep string) string {
	return "FROM $P-measurements | EVAL x = statistic_values.bitrate | EVAL " + strings.Repeat(step+sep, n-1) + step
}

// maxPlanBytesPerStep bounds the EXPLAIN VERBOSE text of a step: linear
// growth, not doubling, is what it guards. A conversion of a document value
// (element by element, esql_convert.go) and long arithmetic checked for
// overflow (esql_warn.go checkedLongOp) make a step of shape 3 about 5.6 KB.
const maxPlanBytesPerStep = 6144

// esqlPlanSize translates q and returns how long PostgreSQL took to plan it and
// the length of its EXPLAIN VERBOSE text.
func esqlPlanSize(t *testing.T, f esqlFixture, q string) (time.Duration, int) {
	t.Helper()
	pq, err := esql.Parse(q)
	if err != nil {
		t.Fatalf("%.80s...: %v", q, err)
	}
	tr := &esqlTranslator{a: &args{}, ownerID: f.owner, slug: f.slug, limit: -1}
	stmt, err := tr.translate(pq)
	if err != nil {
		t.Fatalf("%.80s...: %v", q, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	rows, err := testPool(t).Query(ctx, "EXPLAIN VERBOSE "+stmt, tr.a.vals...)
	size := 0
	for err == nil && rows.Next() {
		var line string
		if err = rows.Scan(&line); err == nil {
			size += len(line) + 1
		}
	}
	if err == nil {
		rows.Close()
		err = rows.Err()
	}
	if err != nil {
		t.Fatalf("%.80s...: EXPLAIN: %v", q, err)
	}
	return time.Since(start), size
}
