package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/model"
)

// limitsFast is how long the refusal of an attack may take: it is made
// before validation, whose cost grew with the square of the document (the
// attacks took from seconds to minutes). Generous, so that a loaded test
// machine does not fail it; the work is bounded, not timed, here.
const limitsFast = 2 * time.Second

// limitsSmall bounds the answer to a refused document.
const limitsSmall = 4 << 10

// repeat joins n copies of format, each given its index.
func repeat(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// doublingFragments spreads fragment F(i-1) twice in each F(i): the
// operation expands to 2^depth fields.
func doublingFragments(depth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query { ...F%d } fragment F0 on Query { __typename }", depth)
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, " fragment F%d on Query { ...F%d ...F%d }", i, i-1, i-1)
	}
	return b.String()
}

func nestedOfType(depth int) string {
	return "{ __schema { types { " + strings.Repeat("ofType { ", depth) + "name" + strings.Repeat(" }", depth) + " } } }"
}

func TestGraphQLInputLimits(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "limits")
	key, _ := o.NewKey(t, apitest.KeyOpts{UserRole: model.RoleViewer})
	deepList := func(n int) string {
		return "{ anomalyEventSearch(body: " + strings.Repeat("[", n) + strings.Repeat("]", n) + ") }"
	}
	for _, c := range []struct {
		name, query, limit string
	}{
		{"alias overlap of 22 KB", "{" + repeat(750, " a: capability(id: %d) { id }") + " }", "fields"},
		{"many aliases", "{" + repeat(101, " a%d: __typename") + " }", "aliases"},
		{"one field repeated with different arguments", "{" + repeat(200, " capability(id: %d) { id }") + " }", "sameResponseKey"},
		{"fragments doubling over 30 levels", doublingFragments(30), "fragmentSpreads"},
		{"fragments doubling over 10 levels", doublingFragments(10), "fragmentSpreads"},
		{"list literal 200,000 deep", deepList(200_000), "tokens"},
		{"list literal 40 deep", deepList(40), "valueDepth"},
		{"fields 30 deep", nestedOfType(30), "depth"},
		{"10,001 tokens", "{" + strings.Repeat(" __typename", 10_001) + " }", "tokens"},
		{"mutations per operation", "mutation {" + repeat(21, " d%d: exportApiKeyDelete(id: 1)") + " }", "mutations"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			g := e.GraphQL(t, key, c.query, nil)
			took := time.Since(start)
			if g.Status != http.StatusUnprocessableEntity || len(g.Errors) != 1 || g.Data != nil {
				t.Fatalf("status %d, want 422 with one error: %.500s", g.Status, g.Raw)
			}
			ext := g.Errors[0].Extensions
			if ext["code"] != "GRAPHQL_VALIDATION_FAILED" || ext["limit"] != c.limit || ext["max"] == nil {
				t.Errorf("extensions %v, want code GRAPHQL_VALIDATION_FAILED, limit %q and its max", ext, c.limit)
			}
			if !strings.Contains(g.Errors[0].Message, "the limit is") {
				t.Errorf("message %q does not name the limit", g.Errors[0].Message)
			}
			if took > limitsFast || len(g.Raw) > limitsSmall {
				t.Errorf("took %s for %d bytes of answer, want under %s and %d bytes", took, len(g.Raw), limitsFast, limitsSmall)
			}
		})
	}
}

// Conflicting fields within every limit still make the validator report
// one error per conflicting pair: the report stops at the cap.
func TestGraphQLValidationErrorsCapped(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "limits")
	var q strings.Builder
	q.WriteString("{")
	for _, field := range []string{"capability", "clientAdminApiKey", "exportApiKey", "registrationKey"} {
		q.WriteString(repeat(30, " "+field+"(id: %d) { id }"))
	}
	q.WriteString(" }")
	start := time.Now()
	g := e.GraphQL(t, o.Key, q.String(), nil)
	took := time.Since(start)
	max := limits.DefaultGraphQL.Errors
	if g.Status != http.StatusUnprocessableEntity || len(g.Errors) != max+1 {
		t.Fatalf("status %d with %d errors, want 422 with %d: %.300s", g.Status, len(g.Errors), max+1, g.Raw)
	}
	if last := g.Errors[max].Message; !strings.Contains(last, fmt.Sprintf("more than %d validation errors", max)) {
		t.Errorf("last error %q does not say the rest were dropped", last)
	}
	if took > limitsFast || len(g.Raw) > 64<<10 {
		t.Errorf("took %s for %d bytes of answer, want under %s and 64 KiB", took, len(g.Raw), limitsFast)
	}
}

// Documents the limits must let through: GraphiQL's introspection query,
// fragments used several times.
func TestGraphQLInputLimitsAllow(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "limits")
	for name, q := range map[string]string{
		"introspection":          limitsIntrospection,
		"fragments spread twice": "{ ...A ...A capabilities { ...B } } fragment A on Query { __typename } fragment B on Capability { id }",
		"19 levels of fields":    nestedOfType(16),
	} {
		if g := e.GraphQL(t, o.Key, q, nil); g.Status != http.StatusOK || len(g.Errors) > 0 {
			t.Errorf("%s: status %d: %.500s", name, g.Status, g.Raw)
		}
	}
}

// Fragment cycles and unused fragments are refused by the limits' walk
// as the validator refuses them.
func TestGraphQLInputLimitsFragmentErrors(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "limits")
	for q, want := range map[string]string{
		"{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }": "within itself",
		"{ __typename } fragment A on Query { __typename }":                  `Fragment "A" is never used.`,
	} {
		g := e.GraphQL(t, o.Key, q, nil)
		if g.Status != http.StatusUnprocessableEntity || len(g.Errors) == 0 || !strings.Contains(g.Errors[0].Message, want) {
			t.Errorf("%s: status %d, want 422 saying %q: %s", q, g.Status, want, g.Raw)
		}
	}
}

// A /graphql body over the limit is a 413 however it is sent.
func TestGraphQLBodyLimit(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "limits")
	body, err := json.Marshal(map[string]string{"query": "{ __typename }" + strings.Repeat(" ", 2<<20)})
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body)
	_ = zw.Close()
	for name, send := range map[string]struct {
		body     io.Reader
		encoding string
	}{
		"content-length": {bytes.NewReader(body), ""},
		"chunked":        {io.MultiReader(bytes.NewReader(body)), ""},
		"gzip":           {bytes.NewReader(gz.Bytes()), "gzip"},
		"gzip chunked":   {io.MultiReader(bytes.NewReader(gz.Bytes())), "gzip"},
	} {
		req, err := http.NewRequest(http.MethodPost, e.URL+"/graphql", send.body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+o.Key)
		if send.encoding != "" {
			req.Header.Set("Content-Encoding", send.encoding)
		}
		r := apitest.Send(t, apitest.RawClient, req)
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d, want 413: %.300s", name, r.Status, r.Raw)
		}
	}
}

// limitsIntrospection is the introspection query of graphql-js 16, whose
// TypeRef is the deepest of its versions.
const limitsIntrospection = `query IntrospectionQuery {
  __schema {
    description
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives {
      name
      description
      isRepeatable
      locations
      args(includeDeprecated: true) { ...InputValue }
    }
  }
}
fragment FullType on __Type {
  kind
  name
  description
  specifiedByURL
  fields(includeDeprecated: true) {
    name
    description
    args(includeDeprecated: true) { ...InputValue }
    type { ...TypeRef }
    isDeprecated
    deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) {
    name
    description
    isDeprecated
    deprecationReason
  }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
  isDeprecated
  deprecationReason
}
fragment TypeRef on __Type {
  kind
  name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
    kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`
