package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// licenseEvery is how often the license pairs are refreshed (store/license.go):
// reports read what is not merged yet from the log and dirty months from the
// documents, so this only decides how much they read.
const licenseEvery = 10 * time.Second

// runLicensePairs refreshes the license pairs in the background until ctx
// ends; wait returns once it has stopped.
func runLicensePairs(ctx context.Context, st *store.Store, log *slog.Logger) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(licenseEvery)
		defer t.Stop()
		for {
			start := time.Now()
			months, err := st.RefreshLicensePairs(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				log.Error("license pairs refresh failed", "err", err, "months", months)
			} else if months > 0 {
				log.Debug("license pairs refreshed", "months", months, "took", time.Since(start).Round(time.Millisecond))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return wg.Wait
}
