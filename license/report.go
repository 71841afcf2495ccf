// Package license is the license usage report (docs/design.md "Health and
// licensing"): its range of months parsed from start_time and end_time,
// and the store's counts (clients per month, registration key and number
// of subjects) summed into the report, k subjects a client counting k
// units. The store reads the counts (store/license.go).
package license

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/export"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Range of a license usage report.
const (
	DefaultMonths = 12
	MaxMonths     = 120
)

// dateOnly is a time given as a date alone (2026-05-01 or 20260501).
var dateOnly = regexp.MustCompile(`^\d{4}-?\d{2}-?\d{2}$`)

// Range parses start_time and end_time (both inclusive) into the
// months of the report. A date alone as end_time includes that whole day.
// Defaults: end now, start the first day of the 11th month before the
// end's month.
func Range(startTime, endTime *string, now time.Time) ([]store.LicenseMonth, error) {
	to := now.UTC().Truncate(time.Microsecond).Add(time.Microsecond)
	if endTime != nil && strings.TrimSpace(*endTime) != "" {
		t, err := export.ParseTimeParam("end_time", endTime)
		if err != nil {
			return nil, err
		}
		if dateOnly.MatchString(strings.TrimSpace(*endTime)) {
			to = t.AddDate(0, 0, 1)
		} else {
			to = t.Truncate(time.Microsecond).Add(time.Microsecond) // PostgreSQL keeps microseconds
		}
	}
	last := to.Add(-time.Microsecond)
	from := time.Date(last.Year(), last.Month()-(DefaultMonths-1), 1, 0, 0, 0, 0, time.UTC)
	if startTime != nil && strings.TrimSpace(*startTime) != "" {
		t, err := export.ParseTimeParam("start_time", startTime)
		if err != nil {
			return nil, err
		}
		from = *t
	}
	if !from.Before(to) {
		return nil, apierr.BadRequestf("start_time must not be after end_time (%s; end_time defaults to now)", last.Format(time.RFC3339Nano))
	}
	if from.Year() < 1900 || last.Year() > 9999 {
		return nil, apierr.BadRequestf("start_time and end_time must lie between the years 1900 and 9999")
	}
	months := store.LicenseMonths(from, to)
	if len(months) > MaxMonths {
		return nil, apierr.BadRequestf("the range spans %d months; a report covers at most %d", len(months), MaxMonths)
	}
	return months, nil
}

// Report sums the store's cells into the report. key, when the
// report is limited to a registration key, is listed even without usage.
func Report(months []store.LicenseMonth, cells []store.LicenseCell, key *store.LicenseKey) *model.LicenseUsageReport {
	rep := &model.LicenseUsageReport{MonthlyUsage: make([]model.LicenseMonthUsage, len(months)),
		UsageByRegistrationKey: []model.RegistrationKeyLicenseUsage{}}
	index := make(map[time.Time]int, len(months))
	breakdowns := make([]map[string]model.SubjectCountUsage, len(months))
	for i, m := range months {
		index[m.Month] = i
		rep.MonthlyUsage[i].Month = m.Month.Format("2006-01")
		breakdowns[i] = map[string]model.SubjectCountUsage{}
	}
	byKey := map[int64]*model.RegistrationKeyLicenseUsage{} // 0: no key
	entry := func(id *int64, name, comment *string) *model.RegistrationKeyLicenseUsage {
		k := int64(0)
		if id != nil {
			k = *id
		}
		if e, ok := byKey[k]; ok {
			return e
		}
		e := &model.RegistrationKeyLicenseUsage{RegistrationKeyID: id, RegistrationKey: name, Comment: comment,
			MonthlyUsage: make([]model.RegistrationKeyMonthUsage, len(months))}
		for i := range months {
			e.MonthlyUsage[i].Month = rep.MonthlyUsage[i].Month
		}
		byKey[k] = e
		return e
	}
	if key != nil {
		entry(&key.ID, &key.RegistrationKey, key.Comment)
	}
	for _, c := range cells {
		i, ok := index[c.Month]
		if !ok {
			continue // cannot happen: the store reads these months only
		}
		units := c.Subjects * c.Clients
		mu := &rep.MonthlyUsage[i]
		mu.LicenseUnits += units
		mu.UniqueClients += c.Clients
		b := breakdowns[i][strconv.FormatInt(c.Subjects, 10)]
		b.Clients += c.Clients
		b.Units += units
		breakdowns[i][strconv.FormatInt(c.Subjects, 10)] = b
		rep.TotalUnits += units

		e := entry(c.RegistrationKeyID, c.RegistrationKey, c.Comment)
		e.MonthlyUsage[i].LicenseUnits += units
		e.MonthlyUsage[i].UniqueClients += c.Clients
		e.TotalUnits += units
		e.TotalUniqueClients += c.Clients
	}
	for i := range months {
		rep.MonthlyUsage[i].BreakdownBySubjectCount = model.JSON{Value: breakdowns[i]}
	}
	for _, e := range byKey {
		rep.UsageByRegistrationKey = append(rep.UsageByRegistrationKey, *e)
	}
	slices.SortFunc(rep.UsageByRegistrationKey, func(a, b model.RegistrationKeyLicenseUsage) int {
		if (a.RegistrationKeyID == nil) != (b.RegistrationKeyID == nil) {
			if a.RegistrationKeyID == nil {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.TotalUnits, a.TotalUnits); c != 0 {
			return c
		}
		if a.RegistrationKeyID == nil {
			return 0
		}
		return cmp.Compare(*a.RegistrationKeyID, *b.RegistrationKeyID)
	})
	return rep
}
