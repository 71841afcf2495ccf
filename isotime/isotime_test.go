package isotime

import (
	"testing"
	"time"
)

// The readers' parts are pinned, reader by reader, in
// export/timeforms_test.go; these are the list's own rules.

func TestNoTwoLayoutsReadOneTextApart(t *testing.T) {
	for _, ref := range []time.Time{
		time.Date(2024, 5, 1, 12, 0, 0, 500_000_000, time.UTC),
		time.Date(2024, 5, 1, 14, 0, 0, 0, time.FixedZone("", 2*3600)),
	} {
		for i, l := range Layouts {
			text := ref.Format(l.Layout)
			want, err := time.Parse(l.Layout, text)
			if err != nil {
				continue // a layout that does not read what it writes (MST of an offset)
			}
			for j, other := range Layouts {
				if got, err := time.Parse(other.Layout, text); i != j && err == nil && !got.Equal(want) {
					t.Errorf("%q reads as %v by %q, as %v by %q", text, want, l.Layout, got, other.Layout)
				}
			}
		}
	}
}

func TestEveryLayoutHasAReader(t *testing.T) {
	for _, l := range Layouts {
		if l.Readers == 0 || l.Readers&^all != 0 {
			t.Errorf("%q: readers %b", l.Layout, l.Readers)
		}
	}
}

func TestMillis(t *testing.T) {
	at := time.Date(2026, 11, 3, 7, 26, 34, 120_999_999, time.FixedZone("", 3600))
	if got := FormatMillis(at); got != "2026-11-03T06:26:34.120Z" {
		t.Errorf("FormatMillis = %q", got)
	}
	if got := at.Format(Millis); got != "2026-11-03T07:26:34.120+01:00" {
		t.Errorf("in a zone: %q", got)
	}
}

func TestParseInALocation(t *testing.T) {
	vienna := time.FixedZone("", 3600)
	got, prec, ok := Parse(Search, "2026-03", vienna)
	if !ok || prec != "M" || !got.Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, vienna)) {
		t.Errorf("Parse(Search, 2026-03, +01:00) = %v %q %v", got, prec, ok)
	}
	if _, _, ok := Parse(Documents, "2026-03", nil); ok {
		t.Error("Documents read a month alone")
	}
	got, _, ok = Parse(Documents, "2026-03-01T10:00:00", nil)
	if !ok || got.Location() != time.UTC || got.Hour() != 10 {
		t.Errorf("Parse(Documents, no zone, nil) = %v %v", got, ok)
	}
}
