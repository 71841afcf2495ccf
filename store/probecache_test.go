package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// probeOf looks the probe up as authentication does.
func probeOf(e *apitest.Env, p apitest.Probe) (store.Probe, error) {
	return e.Store.ProbeByDigest(context.Background(), auth.Digest(p.Secret))
}

// TestProbeCacheSeesChangesMadeElsewhere: a probe, its registration key or
// its capability changed or removed in another session (another server, an
// operator's psql) is seen at once by the server that cached the probe,
// through the triggers' notification.
func TestProbeCacheSeesChangesMadeElsewhere(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probecache")
	ctx := context.Background()
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p := o.NewProbe(t, key.RegistrationKey)
	sql := func(q string, args ...any) {
		t.Helper()
		if _, err := e.Store.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}

	if got := lookupCached(t, e, e.Store.ProbeByDigest, p.Secret); got.ClientID != p.ID || got.DisabledAt != nil {
		t.Fatalf("cached probe: %+v", got)
	}
	sql(`UPDATE clients SET disabled_at = now(), disabled_reason = 'stolen' WHERE id = $1`, p.ID)
	apitest.Eventually(t, "the disable written in another session is not seen", func() bool {
		got, err := probeOf(e, p)
		return err == nil && got.DisabledAt != nil && got.DisabledReason != nil && *got.DisabledReason == "stolen"
	})

	lookupCached(t, e, e.Store.ProbeByDigest, p.Secret)
	sql(`UPDATE capabilities SET forbidden_measurement_types = '{WebMeasurement}' WHERE id = $1`, key.CapabilityID)
	apitest.Eventually(t, "the capability's new list is not seen", func() bool {
		got, err := probeOf(e, p)
		return err == nil && slices.Equal(got.Capability.ForbiddenMeasurementTypes, []string{"WebMeasurement"})
	})

	other := o.NewCapability(t, store.CapabilityInput{Name: apitest.Ptr("moved-to")})
	lookupCached(t, e, e.Store.ProbeByDigest, p.Secret)
	sql(`UPDATE registration_keys SET capability_id = $2 WHERE id = $1`, key.ID, other.ID)
	apitest.Eventually(t, "the registration key's new capability is not seen", func() bool {
		got, err := probeOf(e, p)
		return err == nil && got.CapabilityName != nil && *got.CapabilityName == "moved-to"
	})

	lookupCached(t, e, e.Store.ProbeByDigest, p.Secret)
	sql(`DELETE FROM clients WHERE id = $1`, p.ID)
	apitest.Eventually(t, "the probe deleted in another session still authenticates", func() bool {
		_, err := probeOf(e, p)
		return errors.Is(err, store.ErrNotFound)
	})
}

// TestProbeCacheOwnWritesAreImmediate: what the store itself changes of a
// probe's authentication is seen by the very next lookup. The store under
// test caches without listening (store.CacheDeaf), so no notification can
// have emptied its cache: only its own writes did.
func TestProbeCacheOwnWritesAreImmediate(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probecacheown")
	ctx := context.Background()
	st, err := store.Open(ctx, e.DatabaseURL, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.CacheDeaf()
	lookup := func(p apitest.Probe) (store.Probe, error) { return st.ProbeByDigest(ctx, auth.Digest(p.Secret)) }
	config := o.NewConfig(t, "public", "assigned", false)
	disable := func(p apitest.Probe) error {
		_, err := st.DisableClient(ctx, o.ID, store.ClientRef{ID: &p.ID}, "stolen")
		return err
	}
	tests := []struct {
		name  string
		write func(t *testing.T, p apitest.Probe, key store.RegistrationKey) error
		want  func(p store.Probe, err error) bool
	}{
		{"disable refuses at once", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error { return disable(p) },
			func(p store.Probe, err error) bool { return err == nil && p.DisabledAt != nil }},
		{"enable admits at once", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error {
			if err := disable(p); err != nil {
				return err
			}
			if got, err := lookup(p); err != nil || got.DisabledAt == nil {
				return fmt.Errorf("disabled probe looked up as %+v, %v", got, err)
			}
			_, err := st.EnableClient(ctx, o.ID, store.ClientRef{ID: &p.ID})
			return err
		}, func(p store.Probe, err error) bool { return err == nil && p.DisabledAt == nil }},
		{"a new label", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error {
			_, err := st.UpdateClient(ctx, o.ID, store.ClientRef{ID: &p.ID},
				store.ClientUpdate{SetLabel: true, Label: apitest.Ptr("relabelled " + p.UUID)})
			return err
		}, func(p store.Probe, err error) bool {
			return err == nil && p.Label != nil && *p.Label == "relabelled "+p.UUID
		}},
		{"a config assigned", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error {
			return st.AssignConfig(ctx, o.ID, "public", config, store.ConfigAssignment{ClientIDs: []int64{p.ID}}, true)
		}, func(p store.Probe, err error) bool {
			return err == nil && p.PublicConfigID != nil && *p.PublicConfigID == config
		}},
		{"the assigned config deleted", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error {
			doomed := o.NewConfig(t, "public", "doomed "+p.UUID, false)
			if err := st.AssignConfig(ctx, o.ID, "public", doomed, store.ConfigAssignment{ClientIDs: []int64{p.ID}}, true); err != nil {
				return err
			}
			if got, err := lookup(p); err != nil || got.PublicConfigID == nil {
				return fmt.Errorf("assigned probe looked up as %+v, %v", got, err)
			}
			return st.DeleteConfig(ctx, o.ID, "public", doomed)
		}, func(p store.Probe, err error) bool { return err == nil && p.PublicConfigID == nil }},
		{"the capability's lists", func(t *testing.T, _ apitest.Probe, key store.RegistrationKey) error {
			_, err := st.UpdateCapability(ctx, o.ID, key.CapabilityID,
				store.CapabilityInput{AllowedMeasurementTypes: []string{"VideoMeasurement"}})
			return err
		}, func(p store.Probe, err error) bool {
			return err == nil && slices.Equal(p.Capability.AllowedMeasurementTypes, []string{"VideoMeasurement"})
		}},
		{"the registration key deleted", func(t *testing.T, _ apitest.Probe, key store.RegistrationKey) error {
			return st.DeleteRegistrationKey(ctx, o.ID, key.ID)
		}, func(p store.Probe, err error) bool { return err == nil && p.CapabilityName == nil }},
		{"the capability deleted", func(t *testing.T, _ apitest.Probe, key store.RegistrationKey) error {
			return st.DeleteCapability(ctx, o.ID, key.CapabilityID)
		}, func(p store.Probe, err error) bool { return err == nil && p.CapabilityName == nil }},
		{"the client deleted", func(t *testing.T, p apitest.Probe, _ store.RegistrationKey) error {
			return st.DeleteClient(ctx, o.ID, store.ClientRef{ID: &p.ID})
		}, func(_ store.Probe, err error) bool { return errors.Is(err, store.ErrNotFound) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
			p := o.NewProbe(t, key.RegistrationKey)
			if _, err := lookup(p); err != nil {
				t.Fatal(err)
			}
			if err := tt.write(t, p, key); err != nil {
				t.Fatal(err)
			}
			if got, err := lookup(p); !tt.want(got, err) {
				t.Fatalf("the next lookup answered %+v, %v", got, err)
			}
		})
	}

	t.Run("the cache answers without notifications", func(t *testing.T) {
		p := o.NewProbe(t, o.NewRegistrationKey(t, store.RegistrationKeyInput{}).RegistrationKey)
		if _, err := lookup(p); err != nil {
			t.Fatal(err)
		}
		e.SQL(t, `UPDATE clients SET label = 'changed elsewhere' WHERE id = $1`, p.ID)
		if got, err := lookup(p); err != nil || got.Label != nil {
			t.Fatalf("a store that does not listen answered %+v, %v: it did not cache the probe", got, err)
		}
	})
}

// TestProbeAuthTriggersSkipCheckIns: a probe's check-in, its return from
// offline, the offline sweep and registrations do not notify (else every
// check-in would empty the caches); a change of what authentication reads
// does.
func TestProbeAuthTriggersSkipCheckIns(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probecachequiet")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `LISTEN fleetgraph_auth`); err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		n, err := conn.WaitForNotification(wait)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return n.Payload
	}
	marker := func() {
		t.Helper()
		if _, err := e.Store.Pool().Exec(ctx, `SELECT pg_notify('fleetgraph_auth', 'marker')`); err != nil {
			t.Fatal(err)
		}
	}

	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{NumRegistrationsLeft: apitest.Ptr(int64(5))})
	marker()
	if got := next(); got != "marker" { // creating notifies nothing either
		t.Fatalf("notified %q before the marker", got)
	}
	p := o.NewProbe(t, key.RegistrationKey)
	var b store.Batch
	var checkInErr error
	store.QueueCheckIn(&b, o.ID, p.ID, apitest.Ptr("automator"), apitest.Ptr("1.2.3"), func(_ []bool, err error) { checkInErr = err })
	if err := e.Store.Send(ctx, &b); err != nil || checkInErr != nil {
		t.Fatalf("check in: %v, %v", err, checkInErr)
	}
	if _, err := e.Store.Pool().Exec(ctx, `UPDATE clients SET offline_since = now() WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.ClientOnline(ctx, o.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.MarkOfflineClients(ctx); err != nil {
		t.Fatal(err)
	}
	marker()
	if got := next(); got != "marker" {
		t.Fatalf("a registration, check-in or offline mark notified %q", got)
	}

	if _, err := e.Store.DisableClient(ctx, o.ID, store.ClientRef{ID: &p.ID}, "stolen"); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "clients" {
		t.Fatalf("disabling a client notified %q, want clients", got)
	}
}

// TestProbeCacheSurvivesListenerLoss: when the listening connection is
// killed, a probe disabled meanwhile is still refused (the cache is
// emptied and bypassed until the listener is back), and the cache is used
// again once it reconnects.
func TestProbeCacheSurvivesListenerLoss(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "probecachekill")
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	p := o.NewProbe(t, key.RegistrationKey)
	lookupCached(t, e, e.Store.ProbeByDigest, p.Secret)

	killListener(t, e)
	if _, err := e.Store.Pool().Exec(context.Background(), `UPDATE clients SET disabled_at = now() WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	apitest.Eventually(t, "a disable written while the listener was gone is not seen", func() bool {
		got, err := probeOf(e, p)
		return err == nil && got.DisabledAt != nil
	})
	lookupCached(t, e, e.Store.ProbeByDigest, o.NewProbe(t, key.RegistrationKey).Secret) // the listener came back
}
