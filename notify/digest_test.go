package notify

import (
	"testing"
	"time"
)

func TestDigestSchedule(t *testing.T) {
	last := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC) // a Tuesday
	for _, tc := range []struct {
		name, config string
		want         time.Time
	}{
		{"no schedule: every 24 hours", `{}`, last.Add(24 * time.Hour)},
		{"every 6 hours", `{"anomaly_events_digest_hours": 6}`, last.Add(6 * time.Hour)},
		{"unit hour, count 3", `{"anomaly_events_digest_interval_unit": "hour", "anomaly_events_digest_interval_count": 3}`, last.Add(3 * time.Hour)},
		{"daily at 08:00 (default time): tomorrow", `{"anomaly_events_digest_interval_unit": "day"}`,
			time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)},
		{"daily at 18:15: today", `{"anomaly_events_digest_interval_unit": "day", "anomaly_events_digest_at_time": "18:15"}`,
			time.Date(2026, 11, 24, 18, 15, 0, 0, time.UTC)},
		{"every 2 days at 18:15", `{"anomaly_events_digest_interval_unit": "day", "anomaly_events_digest_interval_count": 2, "anomaly_events_digest_at_time": "18:15"}`,
			time.Date(2026, 11, 25, 18, 15, 0, 0, time.UTC)},
		{"weekly on Monday (default) at 08:00", `{"anomaly_events_digest_interval_unit": "week"}`,
			time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)},
		{"weekly on Sunday (7) at 07:00", `{"anomaly_events_digest_interval_unit": "week", "anomaly_events_digest_day_of_week": 7, "anomaly_events_digest_at_time": "07:00"}`,
			time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)},
		{"weekly on Tuesday at 09:30: a week on, not now", `{"anomaly_events_digest_interval_unit": "week", "anomaly_events_digest_day_of_week": 2, "anomaly_events_digest_at_time": "09:30"}`,
			time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)},
		{"every 2 weeks on Wednesday", `{"anomaly_events_digest_interval_unit": "week", "anomaly_events_digest_interval_count": 2, "anomaly_events_digest_day_of_week": 3}`,
			time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseDigestSchedule([]byte(tc.config)).next(last); !got.Equal(tc.want) {
				t.Errorf("next digest %s, want %s", got, tc.want)
			}
		})
	}
}
