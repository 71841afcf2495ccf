package obs

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads the pgx pool's statistics at scrape time (no
// goroutine, no sampling: pgxpool.Stat is a few atomic reads under the
// pool's lock).
type poolCollector struct {
	pool *pgxpool.Pool

	acquired, idle, constructing, total, max *prometheus.Desc
	acquires, acquireSeconds                 *prometheus.Desc
	emptyAcquires, emptyWaitSeconds          *prometheus.Desc
	canceledAcquires, newConns               *prometheus.Desc
}

// WatchPool registers the statistics of pool: connections in use (acquired),
// idle, being opened, in all and at most, and the acquires (in all, and those
// that had to wait for a connection, with the time they waited).
func (m *Metrics) WatchPool(pool *pgxpool.Pool) {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("fleetgraph_db_pool_"+name, help, nil, nil)
	}
	m.Registry.MustRegister(&poolCollector{
		pool:             pool,
		acquired:         d("acquired_connections", "Connections in use by a request or worker."),
		idle:             d("idle_connections", "Open connections not in use."),
		constructing:     d("constructing_connections", "Connections being opened."),
		total:            d("total_connections", "Open connections (acquired, idle and being opened)."),
		max:              d("max_connections", "The pool's size (FLEETGRAPH_DB_MAX_CONNS)."),
		acquires:         d("acquires_total", "Connections handed out."),
		acquireSeconds:   d("acquire_seconds_total", "Time spent acquiring connections, waiting included."),
		emptyAcquires:    d("empty_acquires_total", "Acquires that found no idle connection and waited for one (opened or released)."),
		emptyWaitSeconds: d("empty_acquire_wait_seconds_total", "Time the waiting acquires waited."),
		canceledAcquires: d("canceled_acquires_total", "Acquires given up (the request's context ended while waiting)."),
		newConns:         d("new_connections_total", "Connections opened."),
	})
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.constructing, c.total, c.max, c.acquires,
		c.acquireSeconds, c.emptyAcquires, c.emptyWaitSeconds, c.canceledAcquires, c.newConns} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.constructing, float64(s.ConstructingConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireSeconds, s.AcquireDuration().Seconds())
	counter(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	counter(c.emptyWaitSeconds, s.EmptyAcquireWaitTime().Seconds())
	counter(c.canceledAcquires, float64(s.CanceledAcquireCount()))
	counter(c.newConns, float64(s.NewConnsCount()))
}
