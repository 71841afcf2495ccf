package export

import (
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/search/datemath"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestTimeFormsOfEachReader pins what each reader of times takes and
// refuses: the export API's time parameters (ParseTime, also license
// usage's), the Query DSL's absolute dates (datemath.Parse, in UTC) and
// a stored document's times (store.ParseTime). They read one list of
// layouts, each reader a documented part of it; a form one of them takes
// and another refuses is a row here. "" refuses; else the instant read
// (and, for the Query DSL, the unit a date alone is precise to).
func TestTimeFormsOfEachReader(t *testing.T) {
	const noon = "2024-05-01T12:00:00Z"
	for _, c := range []struct {
		in                   string
		export, search, docs string
		searchPrecision      string
	}{
		{in: "2024-05-01T12:00:00Z", export: noon, search: noon, docs: noon},
		{in: "2024-05-01T14:00:00.5+02:00", export: "2024-05-01T12:00:00.5Z", search: "2024-05-01T12:00:00.5Z", docs: "2024-05-01T12:00:00.5Z"},
		{in: "2024-05-01T14:00:00+0200", export: noon, search: noon, docs: noon},
		{in: "2024-05-01T14:00:00+02", export: noon},
		{in: "2024-05-01T12:00Z", export: noon, search: noon},
		{in: "2024-05-01T14:00+02:00", export: noon, search: noon},
		{in: "2024-05-01T14:00+0200", export: noon},
		{in: "2024-05-01T12:00:00", export: noon, search: noon, docs: noon},
		{in: "2024-05-01T12:00:00.123456789", export: "2024-05-01T12:00:00.123456789Z", search: "2024-05-01T12:00:00.123456789Z", docs: "2024-05-01T12:00:00.123456789Z"},
		{in: "2024-05-01T12:00", export: noon, search: noon, docs: noon},
		{in: "2024-05-01T12", search: noon},
		{in: "2024-05-01", export: "2024-05-01T00:00:00Z", search: "2024-05-01T00:00:00Z", docs: "2024-05-01T00:00:00Z", searchPrecision: "d"},
		{in: "2024-05", search: "2024-05-01T00:00:00Z", searchPrecision: "M"},
		{in: "2024", export: "1970-01-01T00:33:44Z", search: "2024-01-01T00:00:00Z", searchPrecision: "y"}, // epoch seconds to the export API
		{in: "2024-05-01 14:00:00+02:00", export: noon, search: noon, docs: noon},
		{in: "2024-05-01 12:00:00Z", export: noon, search: noon, docs: noon},
		{in: "2024-05-01 12:00:00", export: noon, search: noon, docs: noon},
		{in: "2024-05-01 12:00", export: noon},
		{in: "2024-05-01 14:00:00 02:00", export: noon}, // an unencoded + arrives as a space
		{in: "2024-05-01T12:00:00 UTC", export: noon},
		{in: "2024-05-01t12:00:00z", export: noon},
		{in: " 2024-05-01T12:00:00Z ", export: noon},
		{in: "Wed, 01 May 2024 14:00:00 +0200", export: noon},
		{in: "Wed, 01 May 2024 12:00:00 GMT", export: noon},
		{in: "20240501T120000.5Z", export: "2024-05-01T12:00:00.5Z"},
		{in: "20240501T140000+0200", export: noon},
		{in: "20240501T140000+02", export: noon},
		{in: "20240501T120000", export: noon},
		{in: "20240501T1400+0200", export: noon},
		{in: "20240501T1200Z", export: noon},
		{in: "20240501T1200", export: noon},
		{in: "20240501", export: "2024-05-01T00:00:00Z"},
		{in: "1714564800", export: noon},
		{in: "1714564800000", export: noon},
		{in: ""},
		{in: "yesterday"},
		{in: "2024-13-01"},
		{in: "2024-05-01T25:00"},
		{in: "05/01/2024"},
		{in: "2024-05-01T12:00:00+02:00:00"},
	} {
		check := func(reader string, got time.Time, err error, want string) {
			t.Helper()
			switch {
			case want == "" && err == nil:
				t.Errorf("%s(%q) = %v, want it refused", reader, c.in, got)
			case want == "":
			case err != nil:
				t.Errorf("%s(%q): %v, want %s", reader, c.in, err, want)
			case !got.Equal(mustTime(t, want)):
				t.Errorf("%s(%q) = %v, want %s", reader, c.in, got, want)
			}
		}
		got, err := ParseTime(c.in)
		check("export.ParseTime", got, err, c.export)
		if err == nil && got.Location() != time.UTC {
			t.Errorf("export.ParseTime(%q) is in %v, want UTC", c.in, got.Location())
		}
		got, prec, err := datemath.Parse(c.in, time.UTC)
		check("datemath.Parse", got, err, c.search)
		if err == nil && prec != c.searchPrecision {
			t.Errorf("datemath.Parse(%q): precision %q, want %q", c.in, prec, c.searchPrecision)
		}
		got, err = store.ParseTime(c.in)
		check("store.ParseTime", got, err, c.docs)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
