package notify

import (
	"encoding/json"
	"time"
)

// digestSchedule is when a user's anomaly digest goes out, read from the
// notification_config keys (admin spec "User"), all times in UTC:
//
//   - anomaly_events_digest_interval_unit hour, day or week with
//     anomaly_events_digest_interval_count (default 1): every count hours;
//     every count days at anomaly_events_digest_at_time (HH:MM, default
//     08:00); every count weeks on anomaly_events_digest_day_of_week (1
//     Monday to 7 Sunday, default 1) at that time;
//   - else every anomaly_events_digest_hours hours (default 24).
//
// The period runs from the user's last digest, or, before the first one,
// from the oldest event waiting.
type digestSchedule struct {
	unit    string // hour, day, week; "" for digest_hours
	count   int
	hours   int
	hour    int
	minute  int
	weekday time.Weekday
}

// Defaults of digestSchedule.
const (
	defaultDigestHours  = 24
	defaultDigestAtTime = "08:00"
)

func parseDigestSchedule(raw json.RawMessage) digestSchedule {
	var c struct {
		Hours     *int    `json:"anomaly_events_digest_hours"`
		Unit      *string `json:"anomaly_events_digest_interval_unit"`
		Count     *int    `json:"anomaly_events_digest_interval_count"`
		AtTime    *string `json:"anomaly_events_digest_at_time"`
		DayOfWeek *int    `json:"anomaly_events_digest_day_of_week"`
	}
	_ = json.Unmarshal(raw, &c) // validated when written; a bad key falls back to its default
	s := digestSchedule{count: 1, hours: defaultDigestHours, weekday: time.Monday}
	if c.Unit != nil && (*c.Unit == "hour" || *c.Unit == "day" || *c.Unit == "week") {
		s.unit = *c.Unit
	}
	if c.Count != nil && *c.Count >= 1 {
		s.count = *c.Count
	}
	if c.Hours != nil && *c.Hours >= 1 {
		s.hours = *c.Hours
	}
	at := defaultDigestAtTime
	if c.AtTime != nil {
		at = *c.AtTime
	}
	t, err := time.Parse("15:04", at)
	if err != nil {
		t, _ = time.Parse("15:04", defaultDigestAtTime)
	}
	s.hour, s.minute = t.Hour(), t.Minute()
	if c.DayOfWeek != nil && *c.DayOfWeek >= 1 && *c.DayOfWeek <= 7 {
		s.weekday = time.Weekday(*c.DayOfWeek % 7) // 7 is Sunday, Go's 0
	}
	return s
}

// next answers when the digest after one at (or a period starting at)
// after is due.
func (s digestSchedule) next(after time.Time) time.Time {
	after = after.UTC()
	switch s.unit {
	case "hour":
		return after.Add(time.Duration(s.count) * time.Hour)
	case "day":
		return s.slotAfter(after.AddDate(0, 0, s.count-1), false)
	case "week":
		return s.slotAfter(after.AddDate(0, 0, 7*(s.count-1)), true)
	}
	return after.Add(time.Duration(s.hours) * time.Hour)
}

// slotAfter is the first time strictly after t at the schedule's time of
// day (and on its weekday when weekly).
func (s digestSchedule) slotAfter(t time.Time, weekly bool) time.Time {
	slot := time.Date(t.Year(), t.Month(), t.Day(), s.hour, s.minute, 0, 0, time.UTC)
	for !slot.After(t) || (weekly && slot.Weekday() != s.weekday) {
		slot = slot.AddDate(0, 0, 1)
	}
	return slot
}
