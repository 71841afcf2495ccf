package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"
)

// TestPersistedQueriesBounded: the registered queries are kept per data
// owner, at most perOwner of them (least recently used out first), none
// longer than limits.PersistedQueryMaxBytes; the stored operations stay.
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

	p.Add(a, "long", "{ "+strings.Repeat("x ", limits.PersistedQueryMaxBytes/2)+"}")
	if _, ok := p.Get(a, "long"); ok {
		t.Error("a query over limits.PersistedQueryMaxBytes was registered")
	}
	for range 5 {
		p.Add(b, "stored", "{ other }")
	}
	if q, ok := p.Get(b, "stored"); !ok || q != "{ viewer { role } }" {
		t.Errorf("stored operation: %q %v", q, ok)
	}
}

// TestPersistedQueriesOwnerShares: one data owner's registrations evict
// only its own, by count and by bytes; only limits.PersistedQueryOwners other
// data owners, each active since, push a data owner's share out.
func TestPersistedQueriesOwnerShares(t *testing.T) {
	owner := func(id int64) context.Context {
		return auth.With(context.Background(), &auth.Principal{DataOwnerID: id})
	}
	a, b := owner(1), owner(2)
	p := newPersistedQueries(3, nil)
	p.Add(a, "a1", "{ a1 }")
	for i := range 1010 {
		p.Add(b, fmt.Sprint("b", i), "{ b }")
	}
	if _, ok := p.Get(a, "a1"); !ok {
		t.Error("another data owner's 1,010 registrations evicted a's")
	}
	if _, ok := p.Get(b, "b1009"); !ok {
		t.Error("b's last registration is not kept")
	}
	big := "{ " + strings.Repeat("x ", limits.PersistedQueryMaxBytes/2-4) + "}"
	for i := range limits.PersistedQueryOwnerBytes/len(big) + 2 {
		p.Add(b, fmt.Sprint("big", i), big)
	}
	if o, _ := p.owners.Peek(2); o.bytes > limits.PersistedQueryOwnerBytes {
		t.Errorf("b keeps %d bytes, over %d", o.bytes, limits.PersistedQueryOwnerBytes)
	}
	if _, ok := p.Get(a, "a1"); !ok {
		t.Error("another data owner's long registrations evicted a's")
	}
	for id := int64(3); id < 3+limits.PersistedQueryOwners; id++ {
		p.Add(owner(id), "h", "{ h }")
	}
	if _, ok := p.Get(a, "a1"); ok {
		t.Errorf("a's share is kept after %d other data owners registered", limits.PersistedQueryOwners)
	}
}
