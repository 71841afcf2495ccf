package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"log/slog"
	"net/url"
	"time"

	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// rollupEvery is how often the embedded backend's rollups are refreshed.
const rollupEvery = 5 * time.Second

// searchBackend chooses the search backend: Elasticsearch when configured
// (with its indexer running in the background until ctx ends), else the
// embedded PostgreSQL backend. The embedded backend's rollup refresher runs
// in the background either way: writes keep marking days dirty, and the
// rollups must be current should the server run without Elasticsearch
// again.
func (c *config) searchBackend(ctx context.Context, st *store.Store, log *slog.Logger) (search.Backend, error) {
	timeout, err := c.searchTimeout()
	if err != nil {
		return nil, err
	}
	go pg.RunRollups(ctx, st.Pool(), rollupEvery, log)
	if c.ElasticURL == "" {
		log.Info("search backend: embedded PostgreSQL", "search_timeout", timeout.String())
		b := pg.New(st.Pool())
		b.Timeout = timeout
		return b, nil
	}
	key, err := c.secretKey(log)
	if err != nil {
		return nil, err
	}
	// A key of its own for signing scroll ids, derived from the server secret.
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("fleetgraph elasticsearch scroll ids"))
	b, err := es.New(c.ElasticURL, st.Pool(), mac.Sum(nil), log)
	if err != nil {
		return nil, err
	}
	go func() {
		if err := b.Indexer().Run(ctx); err != nil {
			log.Error("elasticsearch indexer stopped", "err", err)
		}
	}()
	log.Info("search backend: Elasticsearch", "url", redactURL(c.ElasticURL))
	return b, nil
}

// redactURL hides credentials in a URL for the log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("***")
	return u.String()
}
