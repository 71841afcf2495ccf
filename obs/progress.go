package obs

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// rollupMetrics follow the embedded backend's rollup refresher
// (pg.RollupWorker, a periodic job every 5 s in fleetgraph serve).
type rollupMetrics struct {
	rounds   *prometheus.CounterVec
	days     prometheus.Counter
	duration prometheus.Histogram
	last     prometheus.Gauge
}

func newRollupMetrics() rollupMetrics {
	return rollupMetrics{
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetgraph_rollup_refreshes_total", Help: "Rounds of the rollup refresher, by outcome (ok, error).",
		}, []string{"outcome"}),
		days: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fleetgraph_rollup_days_refreshed_total", Help: "Days (per data owner and kind) whose rollups were rebuilt.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fleetgraph_rollup_refresh_duration_seconds", Help: "Time of a round of the rollup refresher.",
			Buckets: latencyBuckets,
		}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetgraph_rollup_last_success_timestamp_seconds", Help: "When a round of the rollup refresher last succeeded (Unix time).",
		}),
	}
}

func (r rollupMetrics) register(reg *prometheus.Registry) {
	reg.MustRegister(r.rounds, r.days, r.duration, r.last)
}

// RollupRound records a round of the rollup refresher (pg.RollupWorker's
// observer): the days it rebuilt, how long it took, its error.
func (m *Metrics) RollupRound(days int, took time.Duration, err error) {
	r := m.rollups
	r.duration.Observe(took.Seconds())
	r.days.Add(float64(max(days, 0)))
	if err != nil {
		r.rounds.WithLabelValues("error").Inc()
		return
	}
	r.rounds.WithLabelValues("ok").Inc()
	r.last.SetToCurrentTime()
}

// indexerMetrics follow the Elasticsearch indexer (es.Indexer.Run).
type indexerMetrics struct {
	batches *prometheus.CounterVec
	sent    prometheus.Counter
	cursor  prometheus.Gauge
	lag     prometheus.Gauge
	holder  prometheus.Gauge
}

func newIndexerMetrics() indexerMetrics {
	return indexerMetrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetgraph_indexer_batches_total",
			Help: "Rounds of the Elasticsearch indexer, by outcome (ok, error, lock_held: another server indexes).",
		}, []string{"outcome"}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fleetgraph_indexer_sent_total",
			Help: "Documents, tombstones and lookup documents the Elasticsearch indexer sent.",
		}),
		cursor: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetgraph_indexer_cursor_version", Help: "Document version up to which Elasticsearch has everything.",
		}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetgraph_indexer_lag_versions",
			Help: "Document versions settled in PostgreSQL but not yet in Elasticsearch (horizon minus cursor).",
		}),
		holder: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetgraph_indexer_lock_held", Help: "1 when this server's indexer holds the indexer lock (only one per database works).",
		}),
	}
}

func (x indexerMetrics) register(reg *prometheus.Registry) {
	reg.MustRegister(x.batches, x.sent, x.cursor, x.lag, x.holder)
}

// IndexerProgress is what the Elasticsearch indexer reports after each
// round (es.Indexer's Observe).
type IndexerProgress struct {
	Sent     int   // documents, tombstones and lookup documents sent
	Cursor   int64 // version up to which everything was sent
	Horizon  int64 // highest settled version seen
	LockHeld bool  // false: another server's indexer works
	Err      error
}

// IndexerRound records a round of the Elasticsearch indexer.
func (m *Metrics) IndexerRound(p IndexerProgress) {
	x := m.indexer
	switch {
	case !p.LockHeld:
		x.batches.WithLabelValues("lock_held").Inc()
		x.holder.Set(0)
		return
	case p.Err != nil:
		x.batches.WithLabelValues("error").Inc()
	default:
		x.batches.WithLabelValues("ok").Inc()
	}
	x.holder.Set(1)
	x.sent.Add(float64(p.Sent))
	if p.Cursor > 0 {
		x.cursor.Set(float64(p.Cursor))
		x.lag.Set(float64(max(p.Horizon-p.Cursor, 0)))
	}
}
