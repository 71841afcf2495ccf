package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"

	"github.com/fleetgraph/fleetgraph/graph"
	"github.com/fleetgraph/fleetgraph/resolvers"
)

// TestEveryPageHasAPrice: every field that answers a page (a cursor page,
// or a page by number: perPage) is priced in complexity(), and a server
// whose prices miss one refuses to start, naming it.
func TestEveryPageHasAPrice(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	if missing := unpriced(schema, complexity()); len(missing) > 0 {
		t.Fatalf("fields that answer a page without a price: %v", missing)
	}
	forgot := func() graph.ComplexityRoot {
		c := complexity()
		c.Query.UsersConnection, c.Client.Measurements, c.Query.ExportClients = nil, nil, nil
		return c
	}
	want := []string{"Client.measurements", "Query.exportClients", "Query.usersConnection"}
	if got := unpriced(schema, forgot()); !slices.Equal(got, want) {
		t.Fatalf("unpriced = %v, want %v", got, want)
	}
	defer func(p func() graph.ComplexityRoot) { prices = p }(prices)
	prices = forgot
	_, err := New(&resolvers.Resolver{})
	if err == nil || !strings.Contains(err.Error(), strings.Join(want, ", ")) {
		t.Fatalf("New with prices missing = %v, want a refusal naming %v", err, want)
	}
}

// TestKnownComplexityKnowsWhatVariablesChange: the executors compute an
// operation's complexity once only when no variable can change it.
func TestKnownComplexityKnowsWhatVariablesChange(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	s := newKnownComplexity()
	for _, name := range []string{"clientsConnection", "nodes", "measurements", "measurementSearch", "exportEsql"} {
		if !s.priced[normalName(name)] {
			t.Errorf("%s is priced (server/complexity.go) but not known as priced", name)
		}
	}
	for _, tc := range []struct {
		name     string
		query    string
		variable bool
	}{
		{"a lookup by a variable id", `query($id: ID!) { client(id: $id) { id clientGroups { name } } }`, false},
		{"a page of a variable size", `query($n: Int) { clientsConnection(first: $n) { edges { node { id } } } }`, true},
		{"a page of a literal size", `{ clientsConnection(first: 5) { edges { node { id } } } }`, false},
		{"a fragment without a priced field", `query($id: ID!) { client(id: $id) { ...F } }
			fragment F on Client { id clientGroups { name } }`, false},
		{"a priced field below, in a fragment", `query($id: ID!, $n: Int) { client(id: $id) { ...M } }
			fragment M on Client { measurements(first: $n) { edges { cursor } } }`, true},
		{"a variable inside an input object", `query($tag: String!) { clientsConnection(filter: {tags: [$tag]}) { totalCount } }`, true},
		{"nodes by variable ids", `query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQueryWithRules(schema, tc.query, nil)
			if errs != nil {
				t.Fatal(errs)
			}
			if got := s.variable(doc.Operations[0].SelectionSet); got != tc.variable {
				t.Errorf("variable = %v, want %v", got, tc.variable)
			}
		})
	}
}
