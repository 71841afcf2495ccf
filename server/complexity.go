package server

import (
	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/model"
)

// SearchComplexity is what one search field (a Query DSL search, a scroll
// page or an ES|QL query) counts against ComplexityLimit: each may hold a
// database connection for up to the search time limit, so one operation
// runs at most ComplexityLimit / SearchComplexity of them (aliases
// included), not a thousand.
const SearchComplexity = 100

// complexity prices the fields whose cost is not their size.
func complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	q := &c.Query
	q.MeasurementSearch = func(child int, _ model.JSON, _ *string, _ *bool, _ *int64, _ *int64, _ *model.JSON, _ *string) int {
		return SearchComplexity + child
	}
	q.MeasurementSearchScroll = func(child int, _ string, _ *string, _ *bool) int { return SearchComplexity + child }
	q.AnomalyEventSearch = func(child int, _ model.JSON, _ *bool, _ *int64, _ *int64, _ *model.JSON) int {
		return SearchComplexity + child
	}
	q.ExportSearch = func(child int, _ model.JSON, _ *string, _ *string, _ *string, _ *string, _ *bool, _ *bool, _ *int64,
		_ *int64, _ *model.JSON, _ *model.JSON, _ *model.JSON, _ []string, _ []string, _ *model.JSON, _ *bool, _ *string, _ *model.JSON) int {
		return SearchComplexity + child
	}
	q.ExportEsql = func(child int, _ string) int { return SearchComplexity + child }
	// A gateway's _entities asks for its selection once per representation.
	c.SetEntitiesComplexity(func(child int, reps []map[string]any) int { return 1 + len(reps)*child })
	return c
}
