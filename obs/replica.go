package obs

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetgraph/fleetgraph/store"
)

// replicaCollector reads the read replica's counters at scrape time.
type replicaCollector struct {
	stats           func() (store.ReplicaStats, bool)
	reads, bypassed *prometheus.Desc
	inUse, lag      *prometheus.Desc
}

// WatchReplica registers the read replica's metrics (docs/operating.md
// "Read replicas"), read from stats: the reads it took, the reads that
// went to the primary instead by reason, whether it is in use and its lag.
func (m *Metrics) WatchReplica(stats func() (store.ReplicaStats, bool)) {
	m.Registry.MustRegister(&replicaCollector{
		stats: stats,
		reads: prometheus.NewDesc("fleetgraph_db_replica_reads_total",
			"Reads of read-only requests (searches, exports, queries) that went to the read replica.", nil, nil),
		bypassed: prometheus.NewDesc("fleetgraph_db_replica_bypassed_total",
			"Reads of read-only requests that went to the primary instead of the read replica, by reason: "+
				"down, not_standby, lag (beyond FLEETGRAPH_READ_MAX_LAG), own_write (the data owner's last write not replayed yet).",
			[]string{"reason"}, nil),
		inUse: prometheus.NewDesc("fleetgraph_db_replica_in_use",
			"1 while the read replica answers, is a standby and lags within its bound; else 0.", nil, nil),
		lag: prometheus.NewDesc("fleetgraph_db_replica_lag_seconds",
			"The read replica's replay lag at its last check: the age of the oldest primary WAL position it had not replayed.", nil, nil),
	})
}

func (c *replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.reads, c.bypassed, c.inUse, c.lag} {
		ch <- d
	}
}

func (c *replicaCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.stats()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.reads, prometheus.CounterValue, float64(s.Reads))
	for _, reason := range []string{store.BypassDown, store.BypassNotStandby, store.BypassLag, store.BypassOwnWrite} {
		ch <- prometheus.MustNewConstMetric(c.bypassed, prometheus.CounterValue, float64(s.Bypassed[reason]), reason)
	}
	inUse := 0.0
	if s.InUse {
		inUse = 1
	}
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, inUse)
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, s.Lag.Seconds())
}
