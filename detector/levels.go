package detector

import (
	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/store"
)

// Any is the scope value of an override that matches every value of its
// part (subject, measurement type, metric or detection pass).
const Any = "*"

// levels resolves the effective level of a pass for a point from the data
// owner's overrides (docs/analyzer.md "Overrides"): an override applies
// when each part of its scope equals the point's or is "*"; of those that
// apply the most specific wins: the one whose detection pass is named,
// then whose metric, then whose measurement type, then whose subject (an
// override naming the pass beats any that does not, and so on). No
// override: default.
type levels struct {
	overrides []store.Override
}

func newLevels(os []store.Override) levels { return levels{overrides: os} }

// of is the LevelFunc of rule r's points of subject.
func (l levels) of(r analyzer.Rule, subject string) analyzer.LevelFunc {
	if len(l.overrides) == 0 {
		return nil // analyzer: Default
	}
	metric := r.MetricName()
	var byPass [3]analyzer.Level
	for i, p := range analyzer.Passes {
		byPass[i] = l.level(subject, r.MeasurementType, metric, string(p))
	}
	return func(p analyzer.Pass) analyzer.Level {
		for i, q := range analyzer.Passes {
			if q == p {
				return byPass[i]
			}
		}
		return analyzer.Default
	}
}

// level is the level of the most specific override matching the scope.
func (l levels) level(subject, measurementType, metric, pass string) analyzer.Level {
	best, bestRank := analyzer.Default, -1
	for _, o := range l.overrides {
		rank, ok := 0, true
		for _, part := range []struct {
			want, got string
			weight    int
		}{{o.DetectionPass, pass, 8}, {o.Metric, metric, 4}, {o.MeasurementType, measurementType, 2}, {o.Subject, subject, 1}} {
			switch part.want {
			case Any:
			case part.got:
				rank += part.weight
			default:
				ok = false
			}
		}
		if ok && rank > bestRank {
			best, bestRank = analyzer.Level(o.Level), rank
		}
	}
	return best
}
