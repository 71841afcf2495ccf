package resolvers

import (
	"slices"
	"strings"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/engine"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/store"
)

// Anomaly detection overrides (docs/design.md "Anomalies"): a scope's level is
// off, low, default or high, from quiet to loud; default is the absence of
// an override, so only off, low and high are stored.

// detectionPasses are the analyzer's detection passes (analyzer.Passes).
var detectionPasses = vocabulary(analyzer.Passes)

// overrideLevels are the levels from quiet to loud (analyzer.Levels).
var overrideLevels = vocabulary(analyzer.Levels)

const levelDefault = string(analyzer.Default)

// vocabulary is the names of one of the analyzer's string vocabularies.
func vocabulary[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Origins of an override.
const (
	originManual   = "manual"
	originFeedback = "feedback"
)

// overrideScope parses a scope input: every part non-blank, the detection
// pass one of detectionPasses.
func overrideScope(fe apierr.FieldErrors, in *gqlmodel.AnomalyDetectionOverrideScopeInput) store.OverrideScope {
	if in == nil {
		fe.Add("scope", "can't be blank")
		return store.OverrideScope{}
	}
	sc := store.OverrideScope{
		Subject:         engine.Deref(text(fe, "scope.subject", &in.Subject, true)),
		MeasurementType: engine.Deref(text(fe, "scope.measurementType", &in.MeasurementType, true)),
		Metric:          engine.Deref(text(fe, "scope.metric", &in.Metric, true)),
		DetectionPass:   in.DetectionPass,
	}
	oneOf(fe, "scope.detectionPass", &in.DetectionPass, detectionPasses...)
	return sc
}

// storedLevel checks the level of a created override: off, low or high.
// default is the absence of an override, so it is refused with a pointer
// to DELETE rather than stored.
func storedLevel(fe apierr.FieldErrors, level string) {
	switch level {
	case "off", "low", "high":
	case levelDefault:
		fe.Add("level", "must be one of off, low, high (default is no override: delete the override instead)")
	default:
		fe.Add("level", "must be one of off, low, high")
	}
}

// sourceAnomalyID is the anomaly a feedback names, blank as none.
func sourceAnomalyID(fe apierr.FieldErrors, id *string) *string {
	t := text(fe, "sourceAnomalyId", id, false)
	if t == nil || *t == "" {
		return nil
	}
	return t
}

// scopeArgs parses the scope of a delete given as separate arguments: all
// four or none; the detection pass one of detectionPasses.
func scopeArgs(subject, measurementType, metric, detectionPass *string) (store.OverrideScope, bool, error) {
	parts := []*string{subject, measurementType, metric, detectionPass}
	given := 0
	for _, p := range parts {
		if p != nil && strings.TrimSpace(*p) != "" {
			given++
		}
	}
	switch given {
	case 0:
		return store.OverrideScope{}, false, nil
	case len(parts):
		if pass := strings.TrimSpace(*detectionPass); !slices.Contains(detectionPasses, pass) {
			return store.OverrideScope{}, false, apierr.BadRequestf("detection_pass must be one of %s", strings.Join(detectionPasses, ", "))
		}
		return store.OverrideScope{Subject: strings.TrimSpace(*subject), MeasurementType: strings.TrimSpace(*measurementType),
			Metric: strings.TrimSpace(*metric), DetectionPass: strings.TrimSpace(*detectionPass)}, true, nil
	}
	return store.OverrideScope{}, false, apierr.BadRequestf("a scope needs subject, measurement_type, metric and detection_pass")
}

// stepLevel moves level one step: down is quieter, up is louder; the
// quietest and loudest levels stay where they are.
func stepLevel(level string, direction gqlmodel.FeedbackDirection) string {
	i := indexOf(overrideLevels, level)
	if direction == gqlmodel.FeedbackDirectionDown && i > 0 {
		i--
	}
	if direction == gqlmodel.FeedbackDirectionUp && i < len(overrideLevels)-1 {
		i++
	}
	return overrideLevels[i]
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return indexOf(list, levelDefault)
}

func scopeKey(sc store.OverrideScope) string {
	return strings.Join([]string{sc.Subject, sc.MeasurementType, sc.Metric, sc.DetectionPass}, "|")
}

func overrideOf(o store.Override) gqlmodel.AnomalyDetectionOverride {
	sc := store.OverrideScope{Subject: o.Subject, MeasurementType: o.MeasurementType, Metric: o.Metric, DetectionPass: o.DetectionPass}
	return gqlmodel.AnomalyDetectionOverride{ID: o.ID,
		Scope: &gqlmodel.AnomalyDetectionOverrideScope{Subject: o.Subject, MeasurementType: o.MeasurementType,
			Metric: o.Metric, DetectionPass: o.DetectionPass},
		ScopeKey: scopeKey(sc), Level: o.Level, Origin: o.Origin, SourceAnomalyID: o.SourceAnomalyID,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, UpdatedByID: o.UpdatedByID, UpdatedByName: o.UpdatedByName}
}

// coveredDimensions is what overrides can act on: each measurement type of
// the stored data that an enabled rule watches, with the metrics those
// rules watch that the data has (an episode's metric: the last segment of
// the rule's path) and the stored subjects they apply to.
func coveredDimensions(ds []store.MeasurementDimension, rules []analyzer.Rule) []gqlmodel.MeasurementTypeDimension {
	out := []gqlmodel.MeasurementTypeDimension{}
	for _, d := range ds {
		var metrics, subjects []string
		anySubject := false
		for _, r := range rules {
			if !r.Enabled || r.MeasurementType != d.MeasurementType {
				continue
			}
			if r.Subject != "" && !slices.Contains(d.Subjects, r.Subject) {
				continue
			}
			if key, ok := strings.CutPrefix(r.Metric, "statistic_values."); ok && !slices.Contains(d.Metrics, key) {
				continue // no stored measurement of the type has the metric
			}
			if !slices.Contains(metrics, r.MetricName()) {
				metrics = append(metrics, r.MetricName())
			}
			if r.Subject == "" {
				anySubject = true
			} else if !slices.Contains(subjects, r.Subject) {
				subjects = append(subjects, r.Subject)
			}
		}
		if len(metrics) == 0 {
			continue
		}
		if anySubject {
			subjects = d.Subjects
		}
		slices.Sort(metrics)
		slices.Sort(subjects)
		out = append(out, gqlmodel.MeasurementTypeDimension{MeasurementType: d.MeasurementType, Metrics: metrics,
			Subjects: append([]string{}, subjects...)})
	}
	return out
}

// userRef is the caller's user id for updated_by (nil for keys without a user).
func userRef(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}
