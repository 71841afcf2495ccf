package pg

import "testing"

// Java DecimalFormat answers (java.text.DecimalFormat#format, HALF_EVEN).
func TestDecimalFormat(t *testing.T) {
	for _, c := range []struct {
		pattern string
		v       float64
		want    string
	}{
		{"#", 12.5, "12"}, {"#", 13.5, "14"}, {"0.00", 3, "3.00"}, {"#,##0.00", 1234567.891, "1,234,567.89"},
		{"0.0#", 2.5, "2.5"}, {"0.0#", 2.125, "2.12"}, {"#.##", 0.5, ".5"}, {"000", 7, "007"}, {"#", -3, "-3"},
		{"#,###", 1000, "1,000"}, {"0.00", -0.001, "-0.00"},
		// Literal text before and after the number, quoted or not ('' is a
		// quote); a negative value's minus sign comes first.
		{"'x'#", 5, "x5"}, {"0.0 ms", 1.25, "1.2 ms"}, {"#' items'", 3, "3 items"}, {"''#", 4, "'4"}, {"$#", -3, "-$3"},
		{"'#'0", 7, "#7"},
	} {
		f, err := parseDecimalFormat(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := f.format(c.v); got != c.want {
			t.Errorf("format(%q, %v) = %q, want %q", c.pattern, c.v, got, c.want)
		}
	}
	for _, p := range []string{"0.00%", "yyyy-MM-dd", "#E0", "0 0", "'x#", "#;(#)", ""} {
		if _, err := parseDecimalFormat(p); err == nil {
			t.Errorf("pattern %q: accepted, want a 400", p)
		}
	}
}
