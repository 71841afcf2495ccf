package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
)

// measurementPlans fetch ahead below Client.measurements: the pages of all
// clients of a level in one statement, then the client reports and the
// clients of all their measurements in one statement each, however many
// client lists (cousins) the measurements are spread over.
func measurementPlans() map[string]map[string]fieldPlan {
	reports := func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
		ids := make([]string, len(parents))
		for i, p := range parents {
			ids[i] = p.(*gqlmodel.Measurement).ID
		}
		l.ReportsByMeasurement.Fetch(ctx, ids)
	}
	return map[string]map[string]fieldPlan{
		"Client": {
			"measurements": {
				fetch: func(ctx context.Context, l *loaders.Loaders, parents []any, args map[string]any) {
					page, _, ok := measurementPageOfArgs(args)
					if !ok {
						return // the resolver reports the arguments' error
					}
					keys := make([]loaders.MeasurementPageKey, len(parents))
					for i, p := range parents {
						keys[i] = loaders.MeasurementPageKey{ClientUUID: p.(*model.Client).UUID, Page: page}
					}
					l.MeasurementPages.Fetch(ctx, keys)
				},
				children: func(ctx context.Context, l *loaders.Loaders, p any, args map[string]any) []any {
					page, limit, ok := measurementPageOfArgs(args)
					if !ok {
						return nil
					}
					rows, ok := cached(ctx, l.MeasurementPages, loaders.MeasurementPageKey{ClientUUID: p.(*model.Client).UUID, Page: page})
					if !ok {
						return nil
					}
					return one(measurementConnection(rows, limit))
				},
				childType: "MeasurementConnection",
			},
		},
		"MeasurementConnection": {
			"edges": {childType: "MeasurementEdge",
				children: func(_ context.Context, _ *loaders.Loaders, p any, _ map[string]any) []any {
					return all(p.(*gqlmodel.MeasurementConnection).Edges)
				}},
		},
		"MeasurementEdge": {
			"node": {childType: "Measurement",
				children: func(_ context.Context, _ *loaders.Loaders, p any, _ map[string]any) []any {
					return one(p.(*gqlmodel.MeasurementEdge).Node)
				}},
		},
		"Measurement": {
			"reports":                                 {fetch: reports},
			"p1203ClientReport":                       {fetch: reports},
			"networkPerformanceReport":                {fetch: reports},
			"lightweightVideoPlayerPerformanceReport": {fetch: reports},
			"client": documentClientPlan(func(p any) model.JSON { return p.(*gqlmodel.Measurement).Document }),
		},
		"AnomalyEvent": {
			"client": documentClientPlan(func(p any) model.JSON { return p.(*gqlmodel.AnomalyEvent).Document }),
		},
	}
}

// documentClientPlan fetches the clients named by the parents' documents
// (their client_uuid) and continues with them.
func documentClientPlan(doc func(any) model.JSON) fieldPlan {
	return fieldPlan{
		fetch: func(ctx context.Context, l *loaders.Loaders, parents []any, _ map[string]any) {
			var uuids []string
			for _, p := range parents {
				if u, ok := documentClientUUID(doc(p)); ok {
					uuids = append(uuids, u)
				}
			}
			l.ClientByUUID.Fetch(ctx, uuids)
		},
		children: func(ctx context.Context, l *loaders.Loaders, p any, _ map[string]any) []any {
			u, ok := documentClientUUID(doc(p))
			if !ok {
				return nil
			}
			c, ok := cached(ctx, l.ClientByUUID, u)
			if !ok {
				return nil
			}
			return one(ptr(clientOf(c)))
		},
		childType: "Client",
	}
}

// measurementPageOfArgs reads Client.measurements' arguments from a field's
// argument map as gqlgen's generated code does, and answers the loader page
// and page size they make; ok is false when they do not parse.
func measurementPageOfArgs(args map[string]any) (page string, limit int, ok bool) {
	var (
		filter *gqlmodel.MeasurementFilter
		first  *int64
		after  *string
	)
	if v := args["first"]; v != nil {
		n, err := graphql.UnmarshalInt64(v)
		if err != nil {
			return "", 0, false
		}
		first = &n
	}
	if v := args["after"]; v != nil {
		s, err := graphql.UnmarshalString(v)
		if err != nil {
			return "", 0, false
		}
		after = &s
	}
	if v := args["filter"]; v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			return "", 0, false
		}
		filter = &gqlmodel.MeasurementFilter{}
		for name, dst := range map[string]**string{"type": &filter.Type, "subject": &filter.Subject} {
			if v := m[name]; v != nil {
				s, err := graphql.UnmarshalString(v)
				if err != nil {
					return "", 0, false
				}
				*dst = &s
			}
		}
		for name, dst := range map[string]**time.Time{"since": &filter.Since, "until": &filter.Until} {
			if v := m[name]; v != nil {
				t, err := graphql.UnmarshalTime(v)
				if err != nil {
					return "", 0, false
				}
				*dst = &t
			}
		}
	}
	page, limit, err := measurementPage(filter, first, after)
	return page, limit, err == nil
}
