package apitest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// IsInt reports whether a JSON number is written as an integer.
func IsInt(n json.Number) bool {
	if strings.ContainsAny(n.String(), ".eE") {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// Int reads a JSON integer.
func Int(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok || !IsInt(n) {
		t.Fatalf("%v (%T) is not a JSON integer", v, v)
	}
	i, _ := n.Int64()
	return i
}

// Time reads an RFC 3339 timestamp.
func Time(t testing.TB, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("%v is not an RFC 3339 timestamp: %v", v, err)
	}
	return ts
}

// List reads a JSON array.
func List(t testing.TB, v any) []any {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%v (%T) is not an array", v, v)
	}
	return list
}

// Strings reads an array of strings.
func Strings(t testing.TB, v any) []string {
	t.Helper()
	list := List(t, v)
	out := make([]string, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			t.Fatalf("item %d of %v is not a string", i, v)
		}
		out[i] = s
	}
	return out
}

// Field lists fmt.Sprint(item[key]) of each object of a JSON array.
func Field(t testing.TB, v any, key string) []string {
	t.Helper()
	out := []string{}
	for _, item := range List(t, v) {
		obj, _ := item.(map[string]any)
		out = append(out, fmt.Sprint(obj[key]))
	}
	return out
}

// SameJSON fails the test unless got and want are the same JSON value.
func SameJSON(t testing.TB, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

var seq atomic.Int64

// Unique makes a name unique within the test binary: prefix-N.
func Unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }

// ID reads the integer "id" of a JSON record.
func ID(t testing.TB, rec any) int64 {
	t.Helper()
	m, ok := rec.(map[string]any)
	if !ok {
		t.Fatalf("not a record: %v", rec)
	}
	return Int(t, m["id"])
}

// Object reads a JSON object.
func Object(t testing.TB, v any) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v (%T) is not an object", v, v)
	}
	return obj
}
