package main

import (
	"flag"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
)

func TestRateLimitSettings(t *testing.T) {
	c := config{RateKey: "10/1s", RateDataOwner: "off", RateProbe: ratelimit.DefaultProbe.String(),
		RateAnswerBytes: ratelimit.DefaultAnswerBytes.String(), RateWebClients: ratelimit.DefaultWebClients.String()}
	l, err := c.rateLimits(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.WebClients != (ratelimit.Rate{Limit: 1000, Period: 24 * time.Hour}) {
		t.Errorf("default bound on new web clients %s, want 1000/24h", l.WebClients)
	}
	for raw, want := range map[string]ratelimit.Rate{"5/1h": {Limit: 5, Period: time.Hour}, "off": {}} {
		if l, err := (&config{RateKey: "off", RateDataOwner: "off", RateProbe: "off", RateAnswerBytes: "off",
			RateWebClients: raw}).rateLimits(nil, nil); err != nil || l.WebClients != want {
			t.Errorf("new web clients %q: %+v, %v; want %s", raw, l, err, want)
		}
	}
	if _, err := (&config{RateKey: "off", RateDataOwner: "off", RateProbe: "off", RateAnswerBytes: "off",
		RateWebClients: "1000/48h"}).rateLimits(nil, nil); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_ANALYTICS_NEW_CLIENTS") {
		t.Errorf("new web clients 1000/48h: %v, want an error naming the setting", err)
	}
	if l.Key != (ratelimit.Rate{Limit: 10, Period: time.Second}) || !l.DataOwner.Off() || l.Probe != ratelimit.DefaultProbe ||
		l.AnswerBytes != (ratelimit.ByteRate{Bytes: 1 << 30, Period: time.Minute}) {
		t.Errorf("limits %+v", l)
	}
	for raw, want := range map[string]ratelimit.ByteRate{"512MiB/30s": {Bytes: 512 << 20, Period: 30 * time.Second}, "off": {}, "2GiB/1h": {Bytes: 2 << 30, Period: time.Hour}} {
		c.RateAnswerBytes = raw
		if l, err := c.rateLimits(nil, nil); err != nil || l.AnswerBytes != want {
			t.Errorf("answer bytes %q: %+v, %v; want %+v", raw, l, err, want)
		}
	}
	for _, raw := range []string{"1GiB", "1MiB/1m", "lots/1m", "1GiB/500ms", "1GiB/48h", ""} {
		c.RateAnswerBytes = raw
		if _, err := c.rateLimits(nil, nil); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_RATE_LIMIT_ANSWER_BYTES") {
			t.Errorf("answer bytes %q: %v, want an error naming the setting", raw, err)
		}
	}
	c.RateAnswerBytes = "off"
	for raw, want := range map[string]time.Duration{"": limits.RepeatHold, "250ms": 250 * time.Millisecond,
		"10s": 10 * time.Second, "off": 0, "0": 0} {
		c.RateRepeatHold = raw
		if l, err := c.rateLimits(nil, nil); err != nil || l.RepeatHold != want {
			t.Errorf("repeat hold %q: %+v, %v; want %s", raw, l, err, want)
		}
	}
	for _, raw := range []string{"11s", "-1s", "1", "soon"} {
		c.RateRepeatHold = raw
		if _, err := c.rateLimits(nil, nil); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD") {
			t.Errorf("repeat hold %q: %v, want an error naming the setting", raw, err)
		}
	}
	c.RateRepeatHold = ""
	c.RateDataOwner = "6000"
	if _, err := c.rateLimits(nil, nil); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_RATE_LIMIT_DATA_OWNER") ||
		!strings.Contains(err.Error(), "1200/1m") {
		t.Errorf("a rate without a period: %v, want an error naming the setting and an example", err)
	}
}

func TestMemoryLimitSetting(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	for raw, want := range map[string]int64{"": 384 << 20, "384MiB": 384 << 20, "2GiB": 2 << 30, "off": -1, "OFF": -1,
		"100000000": 100000000, "524288KiB": 512 << 20} {
		got, err := (&config{MemoryLimit: raw}).memoryLimit()
		if err != nil || got != want {
			t.Errorf("memoryLimit(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"32MiB", "lots", "-1GiB", "1.5GiB", "12TB"} {
		if _, err := (&config{MemoryLimit: raw}).memoryLimit(); err == nil {
			t.Errorf("memoryLimit(%q) accepted", raw)
		}
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got, _ := (&config{MemoryLimit: "384MiB"}).memoryLimit(); got != -1 {
		t.Errorf("with GOMEMLIMIT set: %d, want it left to the runtime", got)
	}
}

func TestHeapFloorSetting(t *testing.T) {
	t.Setenv("GOGC", "")
	for raw, want := range map[string]uint64{"": 64 << 20, "64MiB": 64 << 20, "128MiB": 128 << 20, "off": 0, "Off": 0, "8MiB": 8 << 20} {
		got, err := (&config{HeapFloor: raw}).heapFloor(384 << 20)
		if err != nil || got != want {
			t.Errorf("heapFloor(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"4MiB", "lots", "-64MiB", "1.5MiB", "384MiB", "1GiB"} {
		if _, err := (&config{HeapFloor: raw}).heapFloor(384 << 20); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_HEAP_FLOOR") {
			t.Errorf("heapFloor(%q) under a 384MiB limit: %v, want an error naming the setting", raw, err)
		}
	}
	// The memory limit off and no GOMEMLIMIT: no limit to be under (the
	// runtime's, which other tests' serve may have set, is none).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	if got, err := (&config{HeapFloor: "1GiB"}).heapFloor(-1); err != nil || got != 1<<30 {
		t.Errorf("heapFloor(1GiB) without a memory limit = %d, %v", got, err)
	}
	t.Setenv("GOGC", "200")
	if got, err := (&config{HeapFloor: "64MiB"}).heapFloor(384 << 20); err != nil || got != 0 {
		t.Errorf("with GOGC set: %d, %v; want the collector left to it", got, err)
	}
}

func TestAnalyzerWorkersSetting(t *testing.T) {
	for _, c := range []struct {
		raw  string
		pool int32
		want int
	}{{"", 8, 4}, {"", 20, 4}, {"", 4, 2}, {"", 1, 1}, {"3", 8, 3}, {" 4 ", 8, 4}, {"10", 20, 10}, {"1", 2, 1}} {
		got, err := (&config{AnalyzerWorkers: c.raw}).analyzerWorkers(c.pool)
		if err != nil || got != c.want {
			t.Errorf("analyzerWorkers(%q) with a pool of %d = %d, %v; want %d", c.raw, c.pool, got, err, c.want)
		}
	}
	for _, c := range []struct {
		raw  string
		pool int32
	}{{"5", 8}, {"0", 8}, {"-1", 8}, {"two", 8}, {"2.5", 8}, {"11", 20}} {
		_, err := (&config{AnalyzerWorkers: c.raw}).analyzerWorkers(c.pool)
		if err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_ANALYZER_WORKERS") || !strings.Contains(err.Error(), "--db-max-conns") {
			t.Errorf("analyzerWorkers(%q) with a pool of %d: %v, want an error naming the setting and the pool's", c.raw, c.pool, err)
		}
	}
}

// TestLimitSettingsOfServe: every setting of limits.Table is a flag of
// serve whose help names its environment variable, and serve without
// settings runs with the declared defaults.
func TestLimitSettingsOfServe(t *testing.T) {
	for _, l := range limits.Table {
		if l.Env != "" {
			t.Setenv(l.Env, "")
		}
	}
	c := &config{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.flags(fs)
	for _, l := range limits.Table {
		if l.Flag == "" {
			continue
		}
		if f := fs.Lookup(l.Flag); f == nil {
			t.Errorf("limits.%s: serve has no flag --%s", l.Name, l.Flag)
		} else if !strings.Contains(f.Usage, l.Env) {
			t.Errorf("limits.%s: the help of --%s does not name %s: %q", l.Name, l.Flag, l.Env, f.Usage)
		}
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name string
		got  func() (time.Duration, error)
		want time.Duration
	}{
		{"SearchTimeout", c.searchTimeout, limits.SearchTimeout},
		{"RequestTimeout", c.requestTimeout, limits.RequestTimeout},
		{"StatementTimeout", c.statementTimeout, limits.StatementTimeout},
	} {
		if got, err := d.got(); err != nil || got != d.want {
			t.Errorf("serve's default %s: %s, %v; want limits.%s = %s", d.name, got, err, d.name, d.want)
		}
	}
	if n, err := c.maxAnswerBytes(); err != nil || n != limits.AnswerBytes {
		t.Errorf("serve's default answer budget: %d, %v; want limits.AnswerBytes = %d", n, err, limits.AnswerBytes)
	}
	l, err := c.rateLimits(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key != ratelimit.Rate(limits.KeyRate) || l.DataOwner != ratelimit.Rate(limits.DataOwnerRate) ||
		l.Probe != ratelimit.Rate(limits.ProbeRate) || l.WebClients != ratelimit.Rate(limits.WebClientsRate) ||
		l.AnswerBytes != ratelimit.ByteRate(limits.AnswerBytesRate) || l.RepeatHold != limits.RepeatHold {
		t.Errorf("serve's default rates %+v, want those of package limits", l)
	}
}
