package server

import (
	"context"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/auth"
)

// TestPersistedQueriesBounded: the registered queries are kept per data
// owner, at most size of them (least recently used out first), none
// longer than PersistedQueryMaxBytes; the stored operations stay.
func TestPersistedQueriesBounded(t *testing.T) {
	a := auth.With(context.Background(), &auth.Principal{DataOwnerID: 1})
	b := auth.With(context.Background(), &auth.Principal{DataOwnerID: 2})
	p := newPersistedQueries(2, map[string]string{"stored": "{ viewer { role } }"})

	p.Add(a, "h1", "{ q1 }")
	p.Add(a, "h2", "{ q2 }")
	if _, ok := p.Get(a, "h1"); !ok { // h1 used: h2 is now the oldest
		t.Fatal("h1 not registered")
	}
	p.Add(a, "h3", "{ q3 }")
	if _, ok := p.Get(a, "h2"); ok {
		t.Error("a third query did not evict the least recently used")
	}
	for _, h := range []string{"h1", "h3"} {
		if _, ok := p.Get(a, h); !ok {
			t.Errorf("%s evicted", h)
		}
	}
	if _, ok := p.Get(b, "h1"); ok {
		t.Error("another data owner's registered query answered")
	}
	if _, ok := p.Get(context.Background(), "h1"); ok {
		t.Error("a registered query answered without a caller")
	}

	p.Add(a, "long", "{ "+strings.Repeat("x ", PersistedQueryMaxBytes/2)+"}")
	if _, ok := p.Get(a, "long"); ok {
		t.Error("a query over PersistedQueryMaxBytes was registered")
	}
	for range 5 {
		p.Add(b, "stored", "{ other }")
	}
	if q, ok := p.Get(b, "stored"); !ok || q != "{ viewer { role } }" {
		t.Errorf("stored operation: %q %v", q, ok)
	}
}
