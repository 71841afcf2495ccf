package server_test

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/fleetgraph/fleetgraph/graph"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema.graphql and testdata/undescribed.txt from the schema")

// TestSchemaSnapshot: the served schema is testdata/schema.graphql, so a
// change of the API (a breaking one above all) is a visible diff in review.
// After a deliberate change: go test ./server -run TestSchemaSnapshot -update-schema
func TestSchemaSnapshot(t *testing.T) {
	var buf bytes.Buffer
	formatter.NewFormatter(&buf, formatter.WithIndent("  ")).FormatSchema(graph.NewExecutableSchema(graph.Config{}).Schema())
	checkGolden(t, "testdata/schema.graphql", buf.Bytes())
}

// TestSchemaDescribed: every type, field, argument and enum value is
// described, except those listed in testdata/undescribed.txt, which were
// undescribed when the check came in; the list may only shrink (a listed
// entry that is described now fails until it is removed: -update-schema).
func TestSchemaDescribed(t *testing.T) {
	s := graph.NewExecutableSchema(graph.Config{}).Schema()
	var missing []string
	for name, typ := range s.Types {
		if typ.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		if typ.Description == "" && name != "Query" && name != "Mutation" {
			missing = append(missing, name)
		}
		for _, f := range typ.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			if f.Description == "" {
				missing = append(missing, name+"."+f.Name)
			}
			for _, a := range f.Arguments {
				if a.Description == "" {
					missing = append(missing, name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
		if typ.Kind == ast.Enum {
			for _, v := range typ.EnumValues {
				if v.Description == "" {
					missing = append(missing, name+"."+v.Name)
				}
			}
		}
	}
	slices.Sort(missing)
	checkGolden(t, "testdata/undescribed.txt", []byte(strings.Join(missing, "\n")+"\n"))
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateSchema {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-schema)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the schema differs from %s: describe what is new, then run go test ./server -run 'TestSchema' -update-schema and review the diff", path)
	}
}
