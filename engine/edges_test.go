package engine

import (
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/graph"
)

// TestEdgeTableCoversSchema: the table declares every field that leads to
// objects with edges below them, and a missing declaration is refused when
// the server is built, naming the field.
func TestEdgeTableCoversSchema(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{})
	if err := (Attacher{}).Validate(es); err != nil {
		t.Fatalf("the table does not cover the schema: %v", err)
	}
	saved := edges["ExportClientPage"]
	delete(edges, "ExportClientPage")
	defer func() { edges["ExportClientPage"] = saved }()
	err := (Attacher{}).Validate(es)
	if err == nil || !strings.Contains(err.Error(), "ExportClientPage.items leads to Client") {
		t.Fatalf("without ExportClientPage.items: %v, want it named", err)
	}
}

// TestResolverFields: the fields gqlgen resolves through ResolverRoot are
// known to the renderer, which must leave them to gqlgen.
func TestResolverFields(t *testing.T) {
	for _, f := range []fieldRef{{"Client", "measurements"}, {"Query", "clients"}, {"Mutation", "ispCreate"}} {
		if !resolverFields[f] {
			t.Errorf("%s.%s is not listed as a resolver field", f.typeName, f.field)
		}
	}
	if resolverFields[fieldRef{"Client", "clientGroups"}] {
		t.Error("Client.clientGroups is attached, not resolved")
	}
}
