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

// TestIsName: the renderer writes an alias into JSON unescaped only when it
// is a GraphQL name; anything else leaves the object to gqlgen.
func TestIsName(t *testing.T) {
	for s, want := range map[string]bool{"id": true, "_x9": true, "Client_2": true, "a": true,
		"": false, "9a": false, `a"b`: false, `a\b`: false, "é": false, "a b": false, "a:": false} {
		if got := isName(s); got != want {
			t.Errorf("isName(%q) = %v, want %v", s, got, want)
		}
	}
}
