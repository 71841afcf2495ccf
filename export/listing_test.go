package export

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/limits"
)

// wantBadRequest fails unless err is a 400 with exactly msg.
func wantBadRequest(t *testing.T, err error, msg string) {
	t.Helper()
	var br *apierr.BadRequest
	if !errors.As(err, &br) {
		t.Fatalf("err = %v (%T), want a 400 %q", err, err, msg)
	}
	if br.Msg != msg {
		t.Fatalf("message = %q, want %q", br.Msg, msg)
	}
}

func TestParseListingRefusals(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	const badTime = " must be an ISO 8601 time (e.g. 2024-05-01T12:00:00Z, 2024-05-01) or epoch seconds or milliseconds"
	for _, c := range []struct {
		name          string
		kind          Kind
		filter        gqlmodel.ExportFilter
		typ           *string
		page, perPage *int64
		want          string
	}{
		{name: "start_time not a time", kind: Measurements, filter: gqlmodel.ExportFilter{StartTime: s("yesterday")}, want: "start_time" + badTime},
		{name: "end_time an impossible date", kind: ClientReports, filter: gqlmodel.ExportFilter{EndTime: s("2024-02-30")}, want: "end_time" + badTime},
		{name: "start after end", kind: Measurements, filter: gqlmodel.ExportFilter{StartTime: s("2024-05-02"), EndTime: s("2024-05-01")}, want: "start_time must not be after end_time"},
		{name: "page 0", kind: Measurements, page: n(0), want: "page must be 1 or more"},
		{name: "per_page 0", kind: Measurements, perPage: n(0), want: "per_page must be between 1 and 1000"},
		{name: "per_page over the maximum", kind: Clients, perPage: n(limits.MaxExportPerPage + 1), want: "per_page must be between 1 and 1000"},
		{name: "page whose offset overflows", kind: Measurements, page: n(1 << 62), perPage: n(1000), want: "page is too large"},
		{name: "client_uuid not a UUID", kind: Measurements, filter: gqlmodel.ExportFilter{ClientUUID: s("probe-01")}, want: "client_uuid must be a UUID"},
		{name: "measurement_id of a listing without one", kind: UserFeedbacks, filter: gqlmodel.ExportFilter{MeasurementID: s("m1")}, want: "measurement_id is not a parameter of this listing"},
		{name: "measurement_id blank", kind: NetworkRequests, filter: gqlmodel.ExportFilter{MeasurementID: s("  ")}, want: "measurement_id must not be empty"},
		{name: "unknown measurement type", kind: Measurements, typ: s("FaxMeasurement"), want: "type must be one of VideoMeasurement, WebMeasurement, NetworkMeasurement, SpeedtestMeasurement, ConferencingMeasurement, GamingMeasurement"},
		{name: "event bundles without a type", kind: EventBundles, want: "type is required: one of " + strings.Join(eventBundleTypes, ", ")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseListing(c.kind, &c.filter, c.typ, c.page, c.perPage)
			wantBadRequest(t, err, c.want)
		})
	}
}

func TestParseListingFilter(t *testing.T) {
	s := func(v string) *string { return &v }
	t.Run("defaults: page 1 of 100, no filter", func(t *testing.T) {
		l, err := ParseListing(ClientReports, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l.Page != 1 || l.PerPage != limits.ExportPerPage || l.Filter.Limit != limits.ExportPerPage || l.Filter.Offset != 0 {
			t.Fatalf("listing = %+v", l)
		}
	})
	t.Run("measurement_id of a measurement names the document and overrides the rest", func(t *testing.T) {
		l, err := ParseListing(Measurements, &gqlmodel.ExportFilter{MeasurementID: s(" m1 "), StartTime: s("nonsense")}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if l.Filter.DocID == nil || *l.Filter.DocID != "m1" || l.Filter.MeasurementID != nil || l.Filter.Start != nil {
			t.Fatalf("filter = %+v", l.Filter)
		}
	})
	t.Run("client_uuid in canonical form, tags ignored beside it", func(t *testing.T) {
		l, err := ParseListing(Measurements, &gqlmodel.ExportFilter{ClientUUID: s(" 6F9619FF-8B86-D011-B42D-00C04FC964FF "),
			Tags: []string{"a"}}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if *l.Filter.ClientUUID != "6f9619ff-8b86-d011-b42d-00c04fc964ff" || l.Filter.Tags != nil {
			t.Fatalf("filter = %+v", l.Filter)
		}
	})
	t.Run("page 3 of 10 is offset 20", func(t *testing.T) {
		page, per := int64(3), int64(10)
		l, err := ParseListing(Measurements, &gqlmodel.ExportFilter{Tags: []string{"a", " ", "b"}}, nil, &page, &per)
		if err != nil {
			t.Fatal(err)
		}
		if l.Filter.Limit != 10 || l.Filter.Offset != 20 || len(l.Filter.Tags) != 2 {
			t.Fatalf("filter = %+v", l.Filter)
		}
	})
}

func TestParseTime(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for raw, want := range map[string]time.Time{
		"2024-05-01T12:00:00Z":            utc("2024-05-01T12:00:00Z"),
		"2024-05-01t12:00:00z":            utc("2024-05-01T12:00:00Z"),
		"2024-05-01 12:00:00 02:00":       utc("2024-05-01T10:00:00Z"), // an unencoded + arrives as a space
		"2024-05-01":                      utc("2024-05-01T00:00:00Z"),
		"20240501":                        utc("2024-05-01T00:00:00Z"), // a basic date, not epoch seconds
		"20240501T1200Z":                  utc("2024-05-01T12:00:00Z"),
		"1714564800":                      utc("2024-05-01T12:00:00Z"),
		"1714564800.5":                    utc("2024-05-01T12:00:00.5Z"),
		"1714564800000":                   utc("2024-05-01T12:00:00Z"), // 12 digits or more: milliseconds
		"Wed, 01 May 2024 12:00:00 +0000": utc("2024-05-01T12:00:00Z"),
	} {
		got, err := ParseTime(raw)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", raw, err)
			continue
		}
		if !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, want %v", raw, got, want)
		}
	}
	for _, raw := range []string{"", "yesterday", "2024-13-01", "2024-05-01T25:00", "05/01/2024"} {
		if got, err := ParseTime(raw); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", raw, got)
		}
	}
}
