package rawjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seeds are JSON texts as PostgreSQL's jsonb writes them (keys by length,
// ", " and ": "), and the corners of json.Marshal's escaping.
var seeds = []string{
	`{"a": 1, "id": "x", "pad": "xx", "type": "V", "study": {"subject": "youtube"}, "created_at": "2026-11-01T00:00:00Z", "client_uuid": "u"}`,
	`{"b": [1, 2.50, -0, 1e3, 1E-7, true, false, null], "a": {"z": {}, "y": []}}`,
	`{"html": "<a href=\"x\">&</a>", "ls": "\u2028 \u2029 ` + "\u2028\u2029" + `", "ctl": "\b\f\n\r\t\u0001\u001f \\ \/ \u00e9 é 日本"}`,
	`{"k\n": 1, "k": 2, "<": 3, "é": 4, "e": 5, "": 6}`,
	`{"dup": 1, "x": 0, "dup": 2}`,
	`[{"b": 1, "a": 2}, "s", 3, [], {}]`,
	`"just a string"`, `12.5`, `null`, `  {"a" : [ 1 , { "c" : 3 , "b" : 2 } ] }  `,
	// Long plain strings (copied as they are) and ones that turn out not to be, late.
	`{"pad": "` + strings.Repeat("x", 300) + `", "late": "` + strings.Repeat("y", 200) + `<", "é": "` + strings.Repeat("z", 100) + `é", "q": "` + strings.Repeat("w", 50) + `\"", "c": "` + strings.Repeat("v", 20) + `\u0007"}`,
}

func marshalDecoded(t *testing.T, text []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", text, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

func check(t *testing.T, text []byte) {
	if !json.Valid(text) {
		return
	}
	want := marshalDecoded(t, text)
	got, err := Sorted(text)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Sorted(%q) = %q, %v; want %q", text, got, err, want)
	}
	wantCompact, _ := json.Marshal(json.RawMessage(text))
	if got := Compact(text); !bytes.Equal(got, wantCompact) {
		t.Fatalf("Compact(%q) = %q; want %q", text, got, wantCompact)
	}
	// A decoded value with a Raw inside encodes as the decoded value does.
	var v any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	_ = dec.Decode(&v)
	env := map[string]any{"hits": []any{map[string]any{"_source": got, "_id": "<1>"}, v}}
	wantEnv, _ := json.Marshal(map[string]any{"hits": []any{map[string]any{"_source": v, "_id": "<1>"}, v}})
	if gotEnv, err := Append(nil, env); err != nil || !bytes.Equal(gotEnv, wantEnv) {
		t.Fatalf("Append = %q, %v; want %q", gotEnv, err, wantEnv)
	}
	var w bytes.Buffer
	if err := Write(&w, env); err != nil || !bytes.Equal(w.Bytes(), wantEnv) {
		t.Fatalf("Write = %q, %v; want %q", w.Bytes(), err, wantEnv)
	}
}

func TestSortedCompactAndAppendGiveJSONMarshalsBytes(t *testing.T) {
	for _, s := range seeds {
		if !json.Valid([]byte(s)) {
			t.Fatalf("seed %q is not JSON: check would skip it", s)
		}
		check(t, []byte(s))
	}
}

// The fixture documents, in the jsonb form PostgreSQL answers them in.
func TestFixtureDocumentsAsStored(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.ndjson")
	if len(files) == 0 {
		t.Skip("no fixtures")
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			check(t, sc.Bytes())
			var ind bytes.Buffer
			if json.Indent(&ind, sc.Bytes(), "", " ") == nil {
				check(t, ind.Bytes())
			}
		}
		_ = fh.Close()
	}
}

func FuzzSorted(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) { check(t, text) })
}

func TestMembers(t *testing.T) {
	obj := []byte(`{"exportSearch":{"hits":{"hits":[{"_source":{"a":"}],\"{"}}]}},"page":3,"s":"x"}`)
	var keys, values []string
	Members(obj, func(k string, v []byte) bool {
		keys, values = append(keys, k), append(values, string(v))
		return true
	})
	want := []string{`{"hits":{"hits":[{"_source":{"a":"}],\"{"}}]}}`, `3`, `"x"`}
	if len(keys) != 3 || keys[0] != "exportSearch" || keys[1] != "page" || keys[2] != "s" {
		t.Fatalf("keys %q", keys)
	}
	for i := range want {
		if values[i] != want[i] {
			t.Fatalf("value %d = %s, want %s", i, values[i], want[i])
		}
	}
	if v := OnlyValue([]byte(`{"a":[1,2]}`)); string(v) != `[1,2]` {
		t.Fatalf("OnlyValue = %s", v)
	}
	if v := OnlyValue([]byte(`{}`)); string(v) != `null` {
		t.Fatalf("OnlyValue of {} = %s", v)
	}
}

func TestMember(t *testing.T) {
	obj := []byte(`{ "a" : {"b":"}\"{"} , "n": -1.5e3,"s":"x" ,"z":null}`)
	for _, c := range []struct{ key, want string }{
		{"a", `{"b":"}\"{"}`}, {"n", `-1.5e3`}, {"s", `"x"`}, {"z", `null`}, {"missing", ``}, {"b", ``},
	} {
		if got := Member(obj, c.key); string(got) != c.want {
			t.Errorf("Member(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	for _, bad := range []string{``, `[1]`, `{"a"`, `{"a":`, `"a"`} {
		if got := Member([]byte(bad), "a"); got != nil {
			t.Errorf("Member(%q) = %q, want nil", bad, got)
		}
	}
}

// BenchmarkSortedBigString: a stored document with a 200 KB string, as the
// soak's big documents are.
func BenchmarkSortedBigString(b *testing.B) {
	text := []byte(`{"id": "m1", "pad": "` + string(bytes.Repeat([]byte("x"), 200<<10)) + `", "type": "VideoMeasurement"}`)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Sorted(text); err != nil {
			b.Fatal(err)
		}
	}
}
