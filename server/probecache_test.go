package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
)

// checkInTrips checks the probe in at base and answers the status and the
// round trips to PostgreSQL the server's counter saw.
func checkInTrips(t *testing.T, base, secret string, counter *store.StatementCounter) (int, int64) {
	t.Helper()
	before := counter.RoundTrips()
	r := apitest.DoAt(t, base, http.MethodGet, clientapi.Base+"/config", secret, nil)
	return r.Status, counter.RoundTrips() - before
}

// waitCached checks the probe in at base until a check-in takes one round
// trip: the server's cache holds the probe (and its listener is up).
func waitCached(t *testing.T, base, secret string, counter *store.StatementCounter) {
	t.Helper()
	apitest.Eventually(t, "a check-in still takes more than one round trip", func() bool {
		status, trips := checkInTrips(t, base, secret, counter)
		if status != http.StatusOK {
			t.Fatalf("check-in answered %d", status)
		}
		return trips == 1
	})
}

// TestClientAPICheckInIsOneRoundTrip: a probe's check-in looks its secret
// up once; after that the server holds the probe in memory and a check-in
// (the record of the visit and the delivered configs, one batch) is one
// round trip to PostgreSQL. With the probe rate limit on (fleetgraph
// serve's default) check-ins far from the limit pass on credit and are
// charged afterwards, many in one statement (ratelimit/credit.go).
func TestClientAPICheckInIsOneRoundTrip(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-trips")
	o.NewConfigWith(t, apitest.ConfigOpts{Name: "Default", IsDefault: true,
		Published: map[string]any{"version": 1, "studies": []any{}}})
	p := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)

	if status, trips := checkInTrips(t, e.URL, p.Secret, e.Counter); status != http.StatusOK || trips != 2 {
		t.Fatalf("first check-in: %d in %d round trips, want 200 in 2 (the secret, then the check-in)", status, trips)
	}
	waitCached(t, e.URL, p.Secret, e.Counter)
	for range 3 {
		if status, trips := checkInTrips(t, e.URL, p.Secret, e.Counter); status != http.StatusOK || trips != 1 {
			t.Fatalf("check-in of a cached probe: %d in %d round trips, want 200 in 1", status, trips)
		}
	}

	limited := limitedServer(t, ratelimit.Rate{}, ratelimit.Rate{}, perHour(1000))
	for range 4 {
		if status, trips := checkInTrips(t, limited, p.Secret, e.Counter); status != http.StatusOK || trips != 1 {
			t.Fatalf("check-in of a cached probe with the probe rate limit on: %d in %d round trips, want 200 in 1 (on credit)", status, trips)
		}
	}
	// The four on credit (a probe not seen yet counts as having its whole
	// limit) are charged afterwards: four in the probe's bucket.
	emission := time.Hour / 1000
	apitest.Eventually(t, "the check-ins on credit are charged", func() bool {
		var tat time.Time
		if err := e.Store.Pool().QueryRow(t.Context(), `SELECT coalesce(max(to_timestamp(tat / 1e6)), now()) FROM rate_buckets WHERE bucket = $1`,
			fmt.Sprintf("probe:%d", p.ID)).Scan(&tat); err != nil {
			t.Fatal(err)
		}
		return int((time.Until(tat)+emission/2)/emission) == 4
	})
}

// TestClientAPIDisabledProbeRefusedOnEveryServer: two servers over one
// database, each holding the probe in its cache. Disabled through one, the
// probe is refused by that one at its very next request and by the other
// as soon as the notification reaches it; enabled again, the same.
func TestClientAPIDisabledProbeRefusedOnEveryServer(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probe-disable-2")
	other, otherCounter := e.StartServerOwnStore(t)
	p := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
	cached := func() {
		t.Helper()
		waitCached(t, e.URL, p.Secret, e.Counter)
		waitCached(t, other, p.Secret, otherCounter)
	}
	status := func(base string) int {
		s, _ := checkInTrips(t, base, p.Secret, e.Counter)
		return s
	}

	cached()
	apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/clients/%d/disable", p.ID), o.Key,
		map[string]any{"reason": "stolen"}), http.StatusOK, "client")
	apitest.WantMessage(t, apitest.DoAt(t, e.URL, http.MethodGet, clientapi.Base+"/config", p.Secret, nil),
		http.StatusForbidden, "stolen")
	apitest.Eventually(t, "the other server still admits the disabled probe", func() bool {
		return status(other) == http.StatusForbidden
	})

	apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, fmt.Sprintf("/clients/%d/enable", p.ID), o.Key, nil),
		http.StatusOK, "client")
	if s := status(e.URL); s != http.StatusOK {
		t.Fatalf("the enabled probe's next check-in answered %d", s)
	}
	apitest.Eventually(t, "the other server still refuses the enabled probe", func() bool {
		return status(other) == http.StatusOK
	})

	// Disabled through the other server: this one learns it by notification.
	cached()
	apitest.WantEnvelope(t, apitest.DoAt(t, other, http.MethodPost, fmt.Sprintf("%s/clients/%d/disable", server.AdminBase, p.ID),
		o.Key, map[string]any{"reason": "lost"}), http.StatusOK, "client")
	if s := status(other); s != http.StatusForbidden {
		t.Fatalf("the disabled probe's next check-in on the server that disabled it answered %d", s)
	}
	apitest.Eventually(t, "this server still admits the probe disabled on the other", func() bool {
		return status(e.URL) == http.StatusForbidden
	})
}
