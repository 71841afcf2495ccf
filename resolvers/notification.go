package resolvers

import (
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
)

// notificationPatch validates a notification config input and returns the
// JSON object to merge into the stored one: present keys with their value,
// keys set to null as JSON null (removed by the store).
func notificationPatch(fe apierr.FieldErrors, prefix string, in *gqlmodel.NotificationConfigInput) json.RawMessage {
	if in == nil {
		return nil
	}
	patch := map[string]any{}
	put := func(key string, set bool, v any) {
		if set {
			patch[key] = v
		}
	}
	boolKey := func(key string, o graphql.Omittable[*bool]) {
		v, set := o.ValueOK()
		put(key, set, v)
	}
	intKey := func(key, field string, o graphql.Omittable[*int64], lo, hi int64) {
		v, set := o.ValueOK()
		intRange(fe, prefix+field, v, lo, hi)
		put(key, set, v)
	}
	strKey := func(key, field string, o graphql.Omittable[*string], check func(*string)) {
		v, set := o.ValueOK()
		check(v)
		put(key, set, v)
	}
	boolKey("anomaly_events", in.AnomalyEvents)
	boolKey("client_offline", in.ClientOffline)
	boolKey("client_degraded", in.ClientDegraded)
	boolKey("study_execution_failures", in.StudyExecutionFailures)
	strKey("anomaly_events_frequency", "anomalyEventsFrequency", in.AnomalyEventsFrequency, func(v *string) {
		oneOf(fe, prefix+"anomalyEventsFrequency", v, "immediate", "digest")
	})
	intKey("anomaly_events_digest_hours", "anomalyEventsDigestHours", in.AnomalyEventsDigestHours, 1, 168)
	strKey("anomaly_events_digest_interval_unit", "anomalyEventsDigestIntervalUnit", in.AnomalyEventsDigestIntervalUnit, func(v *string) {
		oneOf(fe, prefix+"anomalyEventsDigestIntervalUnit", v, "hour", "day", "week")
	})
	intKey("anomaly_events_digest_interval_count", "anomalyEventsDigestIntervalCount", in.AnomalyEventsDigestIntervalCount, 1, 168)
	strKey("anomaly_events_digest_at_time", "anomalyEventsDigestAtTime", in.AnomalyEventsDigestAtTime, func(v *string) {
		if v != nil && !clockTimeRe.MatchString(*v) {
			fe.Add(prefix+"anomalyEventsDigestAtTime", "must be a time HH:MM between 00:00 and 23:59")
		}
	})
	intKey("anomaly_events_digest_day_of_week", "anomalyEventsDigestDayOfWeek", in.AnomalyEventsDigestDayOfWeek, 1, 7)
	b, _ := json.Marshal(patch) // maps of scalars always marshal
	return b
}
