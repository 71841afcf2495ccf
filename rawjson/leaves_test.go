package rawjson_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/fleetgraph/fleetgraph/rawjson"
)

// decodedLeaves is what Leaves should find, from the decoded object:
// each path with its scalars (as json.Marshal writes them), sorted.
func decodedLeaves(t *testing.T, obj []byte) (map[string][]string, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		return nil, false
	}
	out := map[string][]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, sub)
			}
		case []any:
			for _, e := range x {
				walk(path, e)
			}
		default:
			b, _ := json.Marshal(x)
			out[path] = append(out[path], string(b))
		}
	}
	walk("", m)
	for _, v := range out {
		slices.Sort(v)
	}
	return out, true
}

func rawLeaves(obj []byte) (map[string][]string, []string, bool) {
	out := map[string][]string{}
	var order []string
	ok := rawjson.Leaves(obj, func(path string, lit []byte) bool {
		var v any
		dec := json.NewDecoder(bytes.NewReader(lit))
		dec.UseNumber()
		_ = dec.Decode(&v)
		b, _ := json.Marshal(v)
		out[path] = append(out[path], string(b))
		order = append(order, path+"="+string(lit))
		return true
	})
	for _, v := range out {
		slices.Sort(v)
	}
	return out, order, ok
}

func checkLeaves(t *testing.T, obj []byte) {
	want, valid := decodedLeaves(t, obj)
	if !valid {
		return // Leaves does not validate: only well-formed objects are compared
	}
	got, _, ok := rawLeaves(obj)
	if !ok {
		t.Fatalf("Leaves(%s) failed on a well-formed object", obj)
	}
	if !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Fatalf("Leaves(%s)\n got %v\nwant %v", obj, got, want)
	}
}

func TestLeaves(t *testing.T) {
	for _, obj := range []string{
		`{}`, ` { "a" : 1 } `, `{"a": {"b": {"c": "x"}}, "d": [1, [2, {"e": true}]], "f": null}`,
		`{"a": 1, "a": "later wins"}`, `{"a": {"x": 1}, "a": {"y": 2}}`,
		`{"k\u00e9y": "v", "q\"uote": "\u2028", "s": "a\\b"}`, `{"a.b": 1, "a": {"b": "collides"}}`,
		`{"n": -1.5e-3, "i": 12345678901234567890, "arr": [], "o": {}}`,
	} {
		checkLeaves(t, []byte(obj))
	}
	_, order, _ := rawLeaves([]byte(`{"b": 1, "a": [2, 3], "c": {"d": "x"}}`))
	if want := []string{"b=1", "a=2", "a=3", `c.d="x"`}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v (as written)", order, want)
	}
	for _, bad := range []string{``, `[1]`, `"s"`, `{"a" 1}`, `{"a": }`, `{"a": [1, }`, `{1: 2}`, `{"a": "unterminated}`} {
		if _, _, ok := rawLeaves([]byte(bad)); ok {
			t.Errorf("Leaves(%q) answered true", bad)
		}
	}
	// A large object with repeated keys (the map path).
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 100 {
		fmt.Fprintf(&b, `"k%d": %d, `, i%40, i)
	}
	b.WriteString(`"end": true}`)
	checkLeaves(t, b.Bytes())
}

func FuzzLeaves(f *testing.F) {
	for _, s := range []string{`{"a": {"b": [1, {"c": "d"}]}}`, `{"a": 1, "a": 2}`, `{"\u0061": "x", "a": "y"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		rawjson.Leaves(obj, func(string, []byte) bool { return true }) // never panics
		checkLeaves(t, obj)
	})
}
