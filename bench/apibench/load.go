package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// newClient is a keep-alive HTTP client holding up to conns connections to
// one server. Compression is off: both sides send the same plain bytes.
func newClient(conns int, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
		// Below Node's 5 s keep-alive timeout: PostGraphile closes idle
		// connections, and a POST sent on one it just closed fails.
		DisableCompression: true, IdleConnTimeout: 4 * time.Second,
	}}
}

// fetch sends one request and reads the whole answer, which must be a 200.
func fetch(ctx context.Context, c *http.Client, s side) ([]byte, error) {
	req, err := s.request()
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d: %s", s.method, s.url, resp.StatusCode, excerpt(body, 0))
	}
	return body, nil
}

// round is the outcome of one closed-loop round of one side.
type round struct {
	requests  int
	errors    int
	elapsed   time.Duration // from the start until the last answer
	latencies []time.Duration
	firstErr  error
}

func (r round) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// runRound keeps conns requests in flight until d has passed, then waits
// for the ones still running (they count: a round is not cut short, so
// no abandoned work spills into the other side's round).
func runRound(c *http.Client, s side, conns int, d time.Duration) round {
	var mu sync.Mutex
	var out round
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				_, err := fetch(context.Background(), c, s)
				lat := time.Since(t0)
				mu.Lock()
				if err != nil {
					out.errors++
					if out.firstErr == nil {
						out.firstErr = err
					}
				} else {
					out.requests++
					out.latencies = append(out.latencies, lat)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

// sideStats sums one side's rounds of a workload.
type sideStats struct {
	throughputs []float64
	latencies   []time.Duration
	errors      int
	firstErr    error
}

func (s *sideStats) add(r round) {
	s.throughputs = append(s.throughputs, r.throughput())
	s.latencies = append(s.latencies, r.latencies...)
	s.errors += r.errors
	if s.firstErr == nil {
		s.firstErr = r.firstErr
	}
}

func (s *sideStats) medianThroughput() float64 {
	if len(s.throughputs) == 0 {
		return 0
	}
	t := append([]float64(nil), s.throughputs...)
	sort.Float64s(t)
	if len(t)%2 == 1 {
		return t[len(t)/2]
	}
	return (t[len(t)/2-1] + t[len(t)/2]) / 2
}

func (s *sideStats) p50() time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	l := append([]time.Duration(nil), s.latencies...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return l[len(l)/2]
}
