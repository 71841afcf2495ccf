package search_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/search"
)

// TestParseTimeValue: the one reading of Elasticsearch time values, with
// the spaces Elasticsearch trims, every unit, and what is not one.
func TestParseTimeValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int64
		unit time.Duration
		ok   bool
	}{
		{"30s", 30, time.Second, true},
		{" 1 m ", 1, time.Minute, true},
		{"500ms", 500, time.Millisecond, true},
		{"10micros", 10, time.Microsecond, true},
		{"7nanos", 7, time.Nanosecond, true},
		{"2d", 2, 24 * time.Hour, true},
		{"3h", 3, time.Hour, true},
		{"0s", 0, time.Second, true},
		{"1000000000000s", 1e12, time.Second, true},
		{"1000000000001s", 0, 0, false},
		{"99999999999999999999s", 0, 0, false},
		{"", 0, 0, false},
		{"5", 0, 0, false},
		{"m", 0, 0, false},
		{"1.5s", 0, 0, false},
		{"-1s", 0, 0, false},
		{"1w", 0, 0, false},
		{"1S", 0, 0, false},
	} {
		n, unit, ok := search.ParseTimeValue(c.in)
		if n != c.n || unit != c.unit || ok != c.ok {
			t.Errorf("ParseTimeValue(%q) = %d, %v, %v; want %d, %v, %v", c.in, n, unit, ok, c.n, c.unit, c.ok)
		}
	}
}

// TestParseKeepAliveBounds: a scroll keep-alive is a positive time value
// of at most limits.MaxScroll, in any unit; anything else is a 400.
func TestParseKeepAliveBounds(t *testing.T) {
	max := search.TimeValue(limits.MaxScroll)
	for in, want := range map[string]string{
		"1m": "1m", " 1 m": " 1 m", max: max, "10micros": "10micros",
		"0s": "", "-1m": "", "1x": "", strconv.FormatInt(int64(limits.MaxScroll/time.Millisecond)+1, 10) + "ms": "",
	} {
		s := in
		got, err := search.ParseKeepAlive(&s)
		var bad *apierr.BadRequest
		switch {
		case want == "" && !errors.As(err, &bad):
			t.Errorf("ParseKeepAlive(%q) = %q, %v; want a 400", in, got, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("ParseKeepAlive(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
