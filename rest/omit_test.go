package rest

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

func TestOmitPlanApply(t *testing.T) {
	p := &omitPlan{omit: map[string]bool{"a": true}, next: map[string]*omitPlan{
		"items": {omit: map[string]bool{"label": true, "key": true}, next: map[string]*omitPlan{
			"key": {omit: map[string]bool{"until": true}},
		}},
	}}
	for _, tc := range []struct{ name, in, want string }{
		{"null keys of the plan dropped, others kept", `{"a":null,"b":null}`, `{"b":null}`},
		{"set values kept as written", `{"a":1.50,"b":"x"}`, `{"a":1.50,"b":"x"}`},
		{"in every element of a list, nested", `{"items":[{"label":null,"key":{"until":null,"n":-1},"x":null},{"label":"l","key":null}]}`,
			`{"items":[{"key":{"n":-1},"x":null},{"label":"l"}]}`},
		{"a null list", `{"items":null}`, `{"items":null}`},
		{"escapes kept", `{"b":"\u003c\"\n","a":null}`, `{"b":"\u003c\"\n"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.apply([]byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Fatalf("apply(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
	var none *omitPlan
	if got, _ := none.apply([]byte(`{"a":null}`)); string(got) != `{"a":null}` {
		t.Fatalf("no plan changed the answer: %s", got)
	}
}

func TestOmitNullOnNonNullFieldRefused(t *testing.T) {
	def := &ast.FieldDefinition{Name: "id", Type: ast.NonNullNamedType("Int", nil)}
	set := ast.SelectionSet{&ast.Field{Name: "id", Definition: def, Directives: ast.DirectiveList{{Name: "omitNull"}}}}
	if _, err := omitPlanOf(set); err == nil {
		t.Fatal("@omitNull on Int! accepted")
	}
}
