package license

import (
	"errors"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/store"
)

func TestRange(t *testing.T) {
	s := func(v string) *string { return &v }
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	t.Run("defaults: the 12 months up to now", func(t *testing.T) {
		months, err := Range(nil, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(months) != DefaultMonths || !months[0].Month.Equal(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("months = %d from %v", len(months), months[0].Month)
		}
	})
	t.Run("a date alone as end_time includes that day", func(t *testing.T) {
		months, err := Range(s("2026-01-15"), s("2026-02-10"), now)
		if err != nil {
			t.Fatal(err)
		}
		if len(months) != 2 || !months[1].To.Equal(time.Date(2026, 2, 11, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("months = %+v", months)
		}
	})
	for _, c := range []struct {
		name       string
		start, end *string
		want       string
	}{
		{"start_time not a time", s("soon"), nil, "start_time must be an ISO 8601 time (e.g. 2024-05-01T12:00:00Z, 2024-05-01) or epoch seconds or milliseconds"},
		{"start after end", s("2026-03-01"), s("2026-02-01"), "start_time must not be after end_time (2026-02-01T23:59:59.999999Z; end_time defaults to now)"},
		{"more than 120 months", s("2000-01-01"), s("2026-01-01"), "the range spans 313 months; a report covers at most 120"},
		{"before 1900", s("1899-12-01"), s("1900-01-31"), "start_time and end_time must lie between the years 1900 and 9999"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Range(c.start, c.end, now)
			var br *apierr.BadRequest
			if !errors.As(err, &br) || br.Msg != c.want {
				t.Fatalf("err = %v, want a 400 %q", err, c.want)
			}
		})
	}
}

// A client counts as many units as the subjects it measured; keys with
// more units come first, clients without a key last.
func TestReport(t *testing.T) {
	jan, feb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	months := store.LicenseMonths(jan, feb.AddDate(0, 1, 0))
	k1, k2 := int64(1), int64(2)
	name1, name2 := "key-one", "key-two"
	rep := Report(months, []store.LicenseCell{
		{Month: jan, RegistrationKeyID: &k1, RegistrationKey: &name1, Subjects: 2, Clients: 3},
		{Month: feb, RegistrationKeyID: &k2, RegistrationKey: &name2, Subjects: 5, Clients: 2},
		{Month: feb, Subjects: 1, Clients: 4},
	}, nil)
	if rep.TotalUnits != 2*3+5*2+1*4 {
		t.Fatalf("total units %d", rep.TotalUnits)
	}
	if m := rep.MonthlyUsage[1]; m.Month != "2026-02" || m.LicenseUnits != 14 || m.UniqueClients != 6 {
		t.Fatalf("february %+v", m)
	}
	var order []any
	for _, k := range rep.UsageByRegistrationKey {
		if k.RegistrationKeyID == nil {
			order = append(order, nil)
		} else {
			order = append(order, *k.RegistrationKeyID)
		}
	}
	if len(order) != 3 || order[0] != int64(2) || order[1] != int64(1) || order[2] != nil {
		t.Fatalf("keys in order %v, want 2, 1, none", order)
	}
}
