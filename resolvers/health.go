package resolvers

import (
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/fleethealth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
)

// recordPage checks the paging arguments of the system status records (400
// when out of range): page from 1 to limits.MaxListPage, perPage 1 to
// limits.MaxListPerPage (docs/design.md's list convention).
func recordPage(page, perPage *int64) (int64, int64, error) {
	pg, per := int64(1), int64(limits.ListPerPage)
	if page != nil {
		pg = *page
	}
	if perPage != nil {
		per = *perPage
	}
	if pg < 1 || pg > limits.MaxListPage {
		return 0, 0, apierr.BadRequestf("page must be 1 to %d, got %d", limits.MaxListPage, pg)
	}
	if per < 1 || per > limits.MaxListPerPage {
		return 0, 0, apierr.BadRequestf("per_page must be 1 to %d, got %d", limits.MaxListPerPage, per)
	}
	return pg, per, nil
}

// changeThresholds applies input to cur: each given value must be 0 to 100
// and, with the values kept, each metric's warning below its critical.
// Field errors are named cpu.warningPercent, ... (cpu.warning_percent in
// REST); a metric or value given as null is an error, not a reset.
func changeThresholds(cur fleethealth.Thresholds, in gqlmodel.HealthThresholdsInput) (fleethealth.Thresholds, error) {
	fe := apierr.FieldErrors{}
	next := cur
	for _, m := range []struct {
		name  string
		in    graphql.Omittable[*gqlmodel.HealthMetricThresholdsInput]
		limit *fleethealth.Limits
	}{{fleethealth.MetricCPU, in.CPU, &next.CPU}, {fleethealth.MetricMemory, in.Memory, &next.Memory},
		{fleethealth.MetricFilesystem, in.Filesystem, &next.Filesystem}} {
		v, set, null := omitted(m.in)
		if null {
			fe.Add(m.name, "can't be null")
		}
		if !set || v == nil {
			continue
		}
		percent(fe, m.name+".warningPercent", v.WarningPercent, &m.limit.Warning)
		percent(fe, m.name+".criticalPercent", v.CriticalPercent, &m.limit.Critical)
		_, badW := fe[m.name+".warningPercent"]
		_, badC := fe[m.name+".criticalPercent"]
		switch {
		case badW || badC || m.limit.Warning < m.limit.Critical:
		case v.WarningPercent.IsSet():
			fe.Add(m.name+".warningPercent", fmt.Sprintf("must be less than the critical threshold (%d)", m.limit.Critical))
		default:
			fe.Add(m.name+".criticalPercent", fmt.Sprintf("must be greater than the warning threshold (%d)", m.limit.Warning))
		}
	}
	return next, fe.Err()
}

// percent sets *to from a given threshold value (0 to 100).
func percent(fe apierr.FieldErrors, field string, o graphql.Omittable[*int64], to *int) {
	v, set, null := omitted(o)
	switch {
	case null:
		fe.Add(field, "can't be null")
	case !set:
	case *v < 0 || *v > 100:
		fe.Add(field, "must be between 0 and 100")
	default:
		*to = int(*v)
	}
}

func thresholdsOf(t fleethealth.Thresholds) model.HealthThresholds {
	of := func(l fleethealth.Limits) model.HealthMetricThresholds {
		return model.HealthMetricThresholds{WarningPercent: int64(l.Warning), CriticalPercent: int64(l.Critical)}
	}
	return model.HealthThresholds{CPU: of(t.CPU), Memory: of(t.Memory), Filesystem: of(t.Filesystem)}
}
