package server

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"
)

// Automatic persisted queries (gqlgen's extension.AutomaticPersistedQuery,
// Apollo's protocol): a client sends a query's SHA-256 alone
// (extensions.persistedQuery), by POST or by GET; the first time it gets
// PersistedQueryNotFound and sends the query with its hash once, which
// registers it. The stored operations of the REST APIs are registered from
// the start (rest.Adapter.PersistedQueries, named in the OpenAPI documents
// under x-graphql-operation). The bounds of what is kept are declared in
// package limits (limits.PersistedQueriesPerOwner, ...).

// persistedQueries is the cache of the APQ extension: the stored
// operations by hash, never evicted, and the queries callers registered,
// kept per data owner (each its own bounded share), so that no caller can
// learn from a hit what another data owner asked, nor evict what another
// registered.
type persistedQueries struct {
	stored   map[string]string
	perOwner int

	mu     sync.Mutex
	owners *simplelru.LRU[int64, *ownerQueries]
}

// ownerQueries are one data owner's registered queries.
type ownerQueries struct {
	byHash *simplelru.LRU[string, string]
	bytes  int
}

var _ graphql.Cache[string] = (*persistedQueries)(nil)

// newPersistedQueries keeps perOwner registered queries per data owner.
func newPersistedQueries(perOwner int, stored map[string]string) *persistedQueries {
	owners, _ := simplelru.NewLRU[int64, *ownerQueries](limits.PersistedQueryOwners, nil) // a positive size: no error
	return &persistedQueries{stored: stored, perOwner: perOwner, owners: owners}
}

// Get answers the query of hash: a stored operation's, or one the
// caller's data owner registered.
func (p *persistedQueries) Get(ctx context.Context, hash string) (string, bool) {
	if q, ok := p.stored[hash]; ok {
		return q, true
	}
	owner, ok := ownerOf(ctx)
	if !ok {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.owners.Get(owner)
	if !ok {
		return "", false
	}
	return o.byHash.Get(hash)
}

// Add registers query (whose hash the extension has checked) for the
// caller's data owner, unless it is a stored operation or too long; the
// data owner's least recently used queries make room.
func (p *persistedQueries) Add(ctx context.Context, hash, query string) {
	if _, ok := p.stored[hash]; ok || len(query) > limits.PersistedQueryMaxBytes {
		return
	}
	owner, ok := ownerOf(ctx)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.owners.Get(owner)
	if !ok {
		o = &ownerQueries{}
		o.byHash, _ = simplelru.NewLRU(p.perOwner, func(_ string, q string) { o.bytes -= len(q) })
		p.owners.Add(owner, o)
	}
	if old, ok := o.byHash.Peek(hash); ok {
		o.bytes -= len(old)
	}
	o.byHash.Add(hash, query)
	o.bytes += len(query)
	for o.bytes > limits.PersistedQueryOwnerBytes {
		o.byHash.RemoveOldest()
	}
}

// ownerOf is the caller's data owner.
func ownerOf(ctx context.Context) (int64, bool) {
	p := auth.From(ctx)
	if p == nil {
		return 0, false
	}
	return p.DataOwnerID, true
}
