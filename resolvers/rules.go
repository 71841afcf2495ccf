package resolvers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fleetgraph/fleetgraph/engine"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/model"
)

// Anomaly rules (issue 24; docs/analyzer.md): input parsed into an
// analyzer.Rule or field errors.

var (
	// ruleTypeRe: a measurement type names an index (store.validType).
	ruleTypeRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	// ruleMetricRe: a dotted path of at most 8 keys.
	ruleMetricRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$`)
)

const maxUnit = 32

var ruleDirections = []string{string(analyzer.Up), string(analyzer.Down), string(analyzer.Both)}

// ruleFields parses the fields of a rule into r; each pointer nil is a
// field not given (r keeps its value).
type ruleFields struct {
	Name, MeasurementType, Metric, Direction, Unit *string
	Subject                                        *string
	SubjectSet                                     bool // Subject given (nil: any subject)
	Passes                                         []string
	PassesSet                                      bool
	Enabled                                        *bool
}

func (in ruleFields) apply(fe apierr.FieldErrors, r *analyzer.Rule) {
	if in.Name != nil {
		r.Name = engine.Deref(text(fe, "name", in.Name, true))
	}
	if in.MeasurementType != nil {
		r.MeasurementType = strings.TrimSpace(*in.MeasurementType)
		if !ruleTypeRe.MatchString(r.MeasurementType) {
			fe.Add("measurementType", "must be a document type: 1 to 100 letters, digits, _, . or -")
		}
	}
	if in.Metric != nil {
		r.Metric = strings.TrimSpace(*in.Metric)
		if !ruleMetricRe.MatchString(r.Metric) {
			fe.Add("metric", "must be a dotted path of at most 8 keys (letters, digits, _ or -), e.g. statistic_values.download")
		}
	}
	if in.SubjectSet {
		r.Subject = ""
		if in.Subject != nil {
			r.Subject = engine.Deref(text(fe, "subject", in.Subject, true))
		}
	}
	if in.Direction != nil {
		r.Direction = analyzer.Direction(*in.Direction)
		oneOf(fe, "direction", in.Direction, ruleDirections...)
	}
	if in.Unit != nil {
		r.Unit = strings.TrimSpace(*in.Unit)
		if len(r.Unit) > maxUnit {
			fe.Add("unit", fmt.Sprintf("is too long (maximum is %d characters)", maxUnit))
		}
	}
	if in.PassesSet {
		r.Passes = rulePasses(fe, in.Passes)
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
	}
}

// rulePasses parses passes: at least one, each a pass, none twice.
func rulePasses(fe apierr.FieldErrors, in []string) []analyzer.Pass {
	if len(in) == 0 {
		fe.Add("passes", "must name at least one of "+joinPasses())
		return nil
	}
	var out []analyzer.Pass
	for _, p := range in {
		switch {
		case !slices.Contains(analyzer.Passes, analyzer.Pass(p)):
			fe.Add("passes", fmt.Sprintf("%q is not one of %s", p, joinPasses()))
		case slices.Contains(out, analyzer.Pass(p)):
			fe.Add("passes", fmt.Sprintf("%q is given twice", p))
		default:
			out = append(out, analyzer.Pass(p))
		}
	}
	return out
}

func joinPasses() string {
	names := make([]string, len(analyzer.Passes))
	for i, p := range analyzer.Passes {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// newRule parses a create input: all passes and enabled unless given.
func newRule(in gqlmodel.AnomalyRuleCreateInput) (analyzer.Rule, error) {
	fe := apierr.FieldErrors{}
	r := analyzer.Rule{Passes: slices.Clone(analyzer.Passes), Enabled: true}
	ruleFields{Name: &in.Name, MeasurementType: &in.MeasurementType, Metric: &in.Metric, Direction: &in.Direction,
		Unit: in.Unit, Subject: in.Subject, SubjectSet: true, Passes: in.Passes, PassesSet: in.Passes != nil,
		Enabled: in.Enabled}.apply(fe, &r)
	return r, fe.Err()
}

// changedRule applies an update input to the stored rule r. Of a built-in
// rule only enabled may change: another field given with a value other
// than the catalogue's is a field error.
func changedRule(r analyzer.Rule, in gqlmodel.AnomalyRuleUpdateInput) (analyzer.Rule, error) {
	fe := apierr.FieldErrors{}
	var f ruleFields
	f.Name, _, _ = omitted(in.Name)
	f.MeasurementType, _, _ = omitted(in.MeasurementType)
	f.Metric, _, _ = omitted(in.Metric)
	f.Direction, _, _ = omitted(in.Direction)
	f.Unit, _, _ = omitted(in.Unit)
	f.Subject, f.SubjectSet, _ = omitted(in.Subject)
	f.Passes, f.PassesSet = in.Passes.ValueOK()
	f.Enabled, _, _ = omitted(in.Enabled)
	for field, null := range map[string]bool{"name": f.Name == nil && in.Name.IsSet(),
		"measurementType": f.MeasurementType == nil && in.MeasurementType.IsSet(),
		"metric":          f.Metric == nil && in.Metric.IsSet(), "direction": f.Direction == nil && in.Direction.IsSet(),
		"unit": f.Unit == nil && in.Unit.IsSet(), "enabled": f.Enabled == nil && in.Enabled.IsSet()} {
		if null {
			fe.Add(field, "can't be null")
		}
	}
	was := r
	f.apply(fe, &r)
	if was.Builtin {
		for field, changed := range map[string]bool{"name": r.Name != was.Name,
			"measurementType": r.MeasurementType != was.MeasurementType, "metric": r.Metric != was.Metric,
			"subject": r.Subject != was.Subject, "direction": r.Direction != was.Direction, "unit": r.Unit != was.Unit,
			"passes": !slices.Equal(r.Passes, was.Passes)} {
			if changed {
				fe.Add(field, "can't be changed on a built-in rule (only enabled can)")
			}
		}
	}
	return r, fe.Err()
}

// ruleOf is a rule as the API answers it.
func ruleOf(r analyzer.Rule) model.AnomalyRule {
	out := model.AnomalyRule{ID: r.ID, Name: r.Name, MeasurementType: r.MeasurementType, Metric: r.Metric,
		Direction: string(r.Direction), Unit: r.Unit, Enabled: r.Enabled, Builtin: r.Builtin,
		Passes: make([]string, len(r.Passes))}
	if r.Subject != "" {
		out.Subject = &r.Subject
	}
	for i, p := range r.Passes {
		out.Passes[i] = string(p)
	}
	return out
}
