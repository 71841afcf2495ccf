package server

import (
	"context"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"

	"github.com/fleetgraph/fleetgraph/auth"
)

// Automatic persisted queries (gqlgen's extension.AutomaticPersistedQuery,
// Apollo's protocol): a client sends a query's SHA-256 alone
// (extensions.persistedQuery), by POST or by GET; the first time it gets
// PersistedQueryNotFound and sends the query with its hash once, which
// registers it. The stored operations of the REST APIs are registered from
// the start (rest.Adapter.PersistedQueries, named in the OpenAPI documents
// under x-graphql-operation).
const (
	// PersistedQueryCacheSize is how many registered queries /graphql
	// keeps, least recently used out first.
	PersistedQueryCacheSize = 1000
	// PersistedQueryMaxBytes is the longest query that is registered (a
	// longer one runs, but must always be sent whole): with the entry
	// count it bounds the cache's memory at about 32 MiB.
	PersistedQueryMaxBytes = 32 << 10
)

// persistedQueries is the cache of the APQ extension: the stored
// operations by hash, never evicted, and a bounded LRU of the queries
// callers registered. A registered query is kept per data owner (its key
// is the caller's data owner and the hash), so that no caller can learn
// from a hit what another data owner asked.
type persistedQueries struct {
	stored     map[string]string
	registered *lru.LRU[string]
}

var _ graphql.Cache[string] = (*persistedQueries)(nil)

func newPersistedQueries(size int, stored map[string]string) *persistedQueries {
	return &persistedQueries{stored: stored, registered: lru.New[string](size)}
}

// Get answers the query of hash: a stored operation's, or one the
// caller's data owner registered.
func (p *persistedQueries) Get(ctx context.Context, hash string) (string, bool) {
	if q, ok := p.stored[hash]; ok {
		return q, true
	}
	key, ok := ownerHash(ctx, hash)
	if !ok {
		return "", false
	}
	return p.registered.Get(ctx, key)
}

// Add registers query (whose hash the extension has checked) for the
// caller's data owner, unless it is a stored operation or too long.
func (p *persistedQueries) Add(ctx context.Context, hash, query string) {
	if _, ok := p.stored[hash]; ok || len(query) > PersistedQueryMaxBytes {
		return
	}
	if key, ok := ownerHash(ctx, hash); ok {
		p.registered.Add(ctx, key, query)
	}
}

func ownerHash(ctx context.Context, hash string) (string, bool) {
	p := auth.From(ctx)
	if p == nil {
		return "", false
	}
	return strconv.FormatInt(p.DataOwnerID, 10) + ":" + hash, true
}
