package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"log/slog"
	"net/url"
	"sync"

	"github.com/fleetgraph/fleetgraph/obs"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/search/es"
	"github.com/fleetgraph/fleetgraph/search/pg"
	"github.com/fleetgraph/fleetgraph/store"
)

// searchBackend chooses the search backend: Elasticsearch when configured
// (with its indexer running in the background until ctx ends), else the
// embedded PostgreSQL backend. (The embedded backend's rollups are
// refreshed either way, by a periodic job: package jobs.) wait returns once
// the background work has stopped after ctx ended (the indexer's lock
// released), for a clean shutdown.
//
// m, when not nil, records the indexer's rounds.
func (c *config) searchBackend(ctx context.Context, st *store.Store, log *slog.Logger, m *obs.Metrics) (search.Backend, func(), error) {
	timeout, err := c.searchTimeout()
	if err != nil {
		return nil, nil, err
	}
	var esb *es.Backend
	if c.ElasticURL != "" {
		key, err := c.secretKey(log)
		if err != nil {
			return nil, nil, err
		}
		// A key of its own for signing scroll ids, derived from the server secret.
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("fleetgraph elasticsearch scroll ids"))
		if esb, err = es.New(c.ElasticURL, st.Pool(), mac.Sum(nil), log); err != nil {
			return nil, nil, err
		}
	}
	var wg sync.WaitGroup
	if esb == nil {
		log.Info("search backend: embedded PostgreSQL", "search_timeout", timeout.String())
		b := pg.New(st.Pool())
		b.Timeout, b.Reads = timeout, st.ReadPool
		return b, wg.Wait, nil
	}
	ix := esb.Indexer()
	if m != nil {
		ix.Observe = func(p es.Progress) { m.IndexerRound(obs.IndexerProgress(p)) }
	}
	wg.Go(func() {
		if err := ix.Run(ctx); err != nil {
			log.Error("elasticsearch indexer stopped", "err", err)
		}
	})
	log.Info("search backend: Elasticsearch", "url", redactURL(c.ElasticURL))
	return esb, wg.Wait, nil
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
