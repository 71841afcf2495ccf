package server

import (
	"context"
	"reflect"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
)

// pageComplexity prices a page of at most n objects of child complexity
// child, its selection once per limits.PageComplexityUnit objects;
// out-of-range sizes (not positive, or over the largest page of any list,
// limits.MaxExportPerPage) are priced at the default (the resolver refuses
// them with a clearer error than the limit's).
func pageComplexity(child int, n *int64, def int64) int {
	size := def
	if n != nil && *n > 0 && *n <= limits.MaxExportPerPage {
		size = *n
	}
	return 1 + child*int((size+limits.PageComplexityUnit-1)/limits.PageComplexityUnit)
}

// connectionComplexity prices a Relay connection's page of first or last
// edges (limits.PageSize by default).
func connectionComplexity(child int, first *int64, _ *string, last *int64, _ *string) int {
	if last != nil {
		return pageComplexity(child, last, limits.PageSize)
	}
	return pageComplexity(child, first, limits.PageSize)
}

// prices is the complexity New serves with (a test swaps it).
var prices = complexity

// complexity prices the fields whose cost is not their size; a search
// field costs limits.SearchComplexity.
func complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	q := &c.Query
	q.ClientsConnection = func(child int, first *int64, _ *string, last *int64, _ *string, _ *gqlmodel.ClientFilter, _ *gqlmodel.ClientOrder) int {
		return connectionComplexity(child, first, nil, last, nil)
	}
	for _, f := range []*func(int, *int64, *string, *int64, *string) int{&q.ClientGroupsConnection, &q.UsersConnection,
		&q.CapabilitiesConnection, &q.IspsConnection, &q.ClientAdminAPIKeysConnection, &q.ClientAnalyticsAPIKeysConnection,
		&q.ExportAPIKeysConnection, &q.WebhooksConnection} {
		*f = connectionComplexity
	}
	q.MeasurementConfigsConnection = func(child int, _ model.ConfigKind, first *int64, after *string, last *int64, before *string) int {
		return connectionComplexity(child, first, after, last, before)
	}
	q.WebhookDeliveriesConnection = func(child int, _ int64, first *int64, after *string, last *int64, before *string) int {
		return connectionComplexity(child, first, after, last, before)
	}
	q.Nodes = func(child int, ids []string) int {
		n := int64(len(ids))
		return pageComplexity(child, &n, 1)
	}
	c.Client.Measurements = func(child int, _ *gqlmodel.MeasurementFilter, first *int64, _ *string) int {
		return pageComplexity(child, first, limits.PageSize)
	}
	// The connections below a parent page forward (first, after).
	forward := func(child int, first *int64, _ *string) int { return pageComplexity(child, first, limits.PageSize) }
	c.Capability.Clients, c.RegistrationKey.Clients, c.Isp.Clients, c.ClientGroup.ClientsConnection = forward, forward, forward, forward
	c.Webhook.Deliveries = forward
	c.Client.AnomalyEvents = func(child int, first *int64, after *string, _ *gqlmodel.AnomalyEventFilter) int {
		return forward(child, first, after)
	}
	c.Client.SystemStatusRecords = func(child int, first *int64, after *string, _ *gqlmodel.SystemStatusRecordFilter) int {
		return forward(child, first, after)
	}
	q.AnomalyEventsConnection = func(child int, first *int64, after *string, _ *gqlmodel.AnomalyEventFilter, _ []string) int {
		return forward(child, first, after)
	}
	// An anomaly event's measurements: at most limits.MaxEventMeasurements.
	c.AnomalyEvent.Measurements = func(child int) int {
		n := int64(limits.MaxEventMeasurements)
		return pageComplexity(child, &n, limits.MaxEventMeasurements)
	}
	q.MeasurementSearch = func(child int, _ model.JSON, _ *string, _ *bool, _ *int64, _ *int64, _ *model.JSON, _ *string) int {
		return limits.SearchComplexity + child
	}
	q.MeasurementSearchScroll = func(child int, _ string, _ *string, _ *bool) int { return limits.SearchComplexity + child }
	q.AnomalyEventSearch = func(child int, _ model.JSON, _ *bool, _ *int64, _ *int64, _ *model.JSON) int {
		return limits.SearchComplexity + child
	}
	q.ExportSearch = func(child int, _ model.JSON, _ *string, _ *string, _ *string, _ *string, _ *bool, _ *bool, _ *int64,
		_ *int64, _ *model.JSON, _ *model.JSON, _ *model.JSON, _ []string, _ []string, _ *model.JSON, _ *bool, _ *string, _ *model.JSON) int {
		return limits.SearchComplexity + child
	}
	q.ExportEsql = func(child int, _ string) int { return limits.SearchComplexity + child }
	// An export page (page, perPage up to limits.MaxExportPerPage) is one read bounded by the
	// export's own limits (admission, the answer budget), as a search is.
	exportPage := func(child int, _ *gqlmodel.ExportFilter, _ *string, _ *int64, _ *int64) int {
		return limits.SearchComplexity + child
	}
	q.ExportClientReports, q.ExportEventBundles, q.ExportUserFeedbacks = exportPage, exportPage, exportPage
	q.ExportMeasurements = func(child int, _ *gqlmodel.ExportFilter, _ *string, _, _ []string, _ *int64, _ *int64) int {
		return limits.SearchComplexity + child
	}
	q.ExportClients = func(child int, _ *gqlmodel.ExportFilter, _ *int64, _ *int64) int {
		return limits.SearchComplexity + child
	}
	q.ExportNetworkRequests = q.ExportClients
	// The deprecated lists paged by number: perPage records
	// (limits.ListPerPage by default).
	q.SystemStatusRecords = func(child int, _ string, _ *int64, perPage *int64) int {
		return pageComplexity(child, perPage, limits.ListPerPage)
	}
	q.WebhookDeliveries = func(child int, _ int64, _ *int64, perPage *int64) int {
		return pageComplexity(child, perPage, limits.ListPerPage)
	}
	// A gateway's _entities asks for its selection once per representation.
	c.SetEntitiesComplexity(func(child int, reps []map[string]any) int { return 1 + len(reps)*child })
	return c
}

// pagingArguments are the arguments that size a page: a field taking one
// answers a page, whatever its type's name (first and last of a cursor
// page; perPage of the exports and the two deprecated lists paged by
// number).
var pagingArguments = []string{"first", "last", "perPage"}

// unpriced answers the fields of schema that answer a page (a connection:
// a type named ...Connection, or taking a pagingArguments) without a price
// in root, as Type.field, sorted. Unpriced, a page of 100 edges would cost
// as much as one object: New refuses to start with any.
func unpriced(schema *ast.Schema, root graph.ComplexityRoot) []string {
	priced := map[string]bool{}
	r := reflect.ValueOf(root)
	for i := range r.NumField() {
		typ := r.Field(i)
		if typ.Kind() != reflect.Struct {
			continue
		}
		for j := range typ.NumField() {
			if f := typ.Field(j); f.Kind() == reflect.Func && !f.IsNil() {
				priced[normalName(r.Type().Field(i).Name)+"."+normalName(typ.Type().Field(j).Name)] = true
			}
		}
	}
	var missing []string
	for _, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			page := strings.HasSuffix(f.Type.Name(), "Connection") ||
				slices.ContainsFunc(f.Arguments, func(a *ast.ArgumentDefinition) bool { return slices.Contains(pagingArguments, a.Name) })
			if page && !priced[normalName(def.Name)+"."+normalName(f.Name)] {
				missing = append(missing, def.Name+"."+f.Name)
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// knownComplexity is FixedComplexityLimit(limits.Complexity) for both
// executors: the complexity of an operation that no variable can change (no
// field priced by its arguments, above, takes a variable) is the same at
// every request, so it is computed at the operation's first request only
// and kept for the last limits.DocumentsKept such operations (REST runs
// only its stored operations, package rest; /graphql any document). An
// operation over the limit is refused as FixedComplexityLimit refuses it,
// and never kept.
type knownComplexity struct {
	*extension.ComplexityLimit
	priced map[string]bool // the fields priced above, by normalName
	fixed  *lru.Cache[knownOperation, *extension.ComplexityStats]
}

type knownOperation struct{ document, name string }

func newKnownComplexity() *knownComplexity {
	fixed, _ := lru.New[knownOperation, *extension.ComplexityStats](limits.DocumentsKept) // a positive size: no error
	s := &knownComplexity{ComplexityLimit: extension.FixedComplexityLimit(limits.Complexity), priced: map[string]bool{}, fixed: fixed}
	root := reflect.ValueOf(complexity())
	for i := range root.NumField() {
		typ := root.Field(i)
		for j := range typ.NumField() {
			if f := typ.Field(j); f.Kind() == reflect.Func && !f.IsNil() {
				s.priced[normalName(typ.Type().Field(j).Name)] = true
			}
		}
	}
	return s
}

// normalName is a field's name as GraphQL's and gqlgen's Go names of it
// share it: lower case, without underscores (clientsConnection and
// ClientsConnection, ispId and IspID).
func normalName(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// MutateOperationContext computes the operation's complexity, or takes it
// from its first request.
func (s *knownComplexity) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	key := knownOperation{oc.RawQuery, oc.OperationName}
	if stats, ok := s.fixed.Get(key); ok {
		oc.Stats.SetExtension(s.ExtensionName(), stats)
		return nil
	}
	if err := s.ComplexityLimit.MutateOperationContext(ctx, oc); err != nil {
		return err
	}
	if op := oc.Doc.Operations.ForName(oc.OperationName); op != nil && !s.variable(op.SelectionSet) {
		if stats, ok := oc.Stats.GetExtension(s.ExtensionName()).(*extension.ComplexityStats); ok {
			s.fixed.Add(key, stats)
		}
	}
	return nil
}

// variable reports whether a variable can change the complexity of set: a
// priced field there takes one in its arguments. Fields are matched by
// name whatever their type, and every field whose name starts with "_"
// (federation's _entities, priced through an unexported field) counts as
// priced.
func (s *knownComplexity) variable(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			priced := s.priced[normalName(x.Name)] || strings.HasPrefix(x.Name, "_")
			if priced && slices.ContainsFunc(x.Arguments, func(a *ast.Argument) bool { return usesVariable(a.Value) }) ||
				s.variable(x.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if s.variable(x.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if x.Definition == nil || s.variable(x.Definition.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// usesVariable reports whether v is or holds a variable.
func usesVariable(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	return slices.ContainsFunc(v.Children, func(c *ast.ChildValue) bool { return usesVariable(c.Value) })
}
