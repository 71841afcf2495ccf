package pg

import "testing"

// Forms Elasticsearch answers that were refused (issue 27's measurement
// with Elasticsearch's drop.csv-spec and stats.csv-spec cases): a column
// named twice in one DROP, and a function of the grouping keys alone in
// STATS (ES|QL STATS reference: the aggregate expressions may use the
// grouping keys).
func TestESQLAnsweredForms(t *testing.T) {
	f := mappedEmployees(t)
	f.expect(t, []esqlCase{
		{"DROP of a column twice", `FROM $P | KEEP emp_no, salary | DROP salary, salary | SORT emp_no | LIMIT 1`,
			`[{"emp_no": 10001}]`},
		{"DROP of a computed column twice", `FROM $P | EVAL x = 1 | KEEP emp_no, x | DROP x, x | SORT emp_no | LIMIT 1`,
			`[{"emp_no": 10001}]`},
		// COUNT(*) and aggregates of constants inside functions that bind
		// their argument once (a conversion, a double's string).
		{"conversions of COUNT(*) and SUM(1)", `FROM $P | STATS c = COUNT(*), s = TO_STRING(COUNT(*) * 1.5), i = TO_INTEGER(COUNT(*)),
				m = SUM(1) + 0, l = TO_INTEGER(SUM(1) * 2)`,
			`[{"c": 4, "s": "6.0", "i": 4, "m": 4, "l": 8}]`},
		{"a function of a grouping alias", `FROM $P | STATS m = MAX(salary), s = CONCAT(TO_STRING(g), "!"), a = ABS(-g) BY g = languages | SORT g`,
			`[{"m": 74999, "s": "2!", "a": 2, "g": 2}, {"m": 61805, "s": "4!", "a": 4, "g": 4}, {"m": 56371, "s": "5!", "a": 5, "g": 5}]`},
	})
	for _, q := range []string{
		`FROM $P | KEEP emp_no | DROP salary`,
		`FROM $P | STATS x = 1 BY languages`,
	} {
		if _, err := f.query(t, q); err == nil {
			t.Errorf("%s: answered, want a 400 (Elasticsearch refuses it)", q)
		}
	}
}
