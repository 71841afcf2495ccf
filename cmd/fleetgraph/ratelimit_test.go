package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/ratelimit"
)

func TestRateLimitSettings(t *testing.T) {
	c := config{RateKey: "10/1s", RateDataOwner: "off", RateProbe: ratelimit.DefaultProbe.String()}
	l, err := c.rateLimits(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key != (ratelimit.Rate{Limit: 10, Period: time.Second}) || !l.DataOwner.Off() || l.Probe != ratelimit.DefaultProbe {
		t.Errorf("limits %+v", l)
	}
	c.RateDataOwner = "6000"
	if _, err := c.rateLimits(nil, nil); err == nil || !strings.Contains(err.Error(), "FLEETGRAPH_RATE_LIMIT_DATA_OWNER") ||
		!strings.Contains(err.Error(), "1200/1m") {
		t.Errorf("a rate without a period: %v, want an error naming the setting and an example", err)
	}
}
