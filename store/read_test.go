package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// TestReadsRunOnGenericPlans: the reads (store.Read, alone or batched) run
// with plan_cache_mode force_generic_plan, and only they: the setting ends
// with their round trip, also when one of them fails, so the statements
// that come next on the connection (searches, export filters) keep
// PostgreSQL's choice of plan.
func TestReadsRunOnGenericPlans(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	st, err := store.Open(ctx, e.DatabaseURL, store.Options{MaxConns: 1}) // one connection: what follows runs on it
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	after := func(when string) {
		t.Helper()
		var mode string
		if err := st.Pool().QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "auto" {
			t.Errorf("%s: the connection's next statement runs with plan_cache_mode %q, want auto", when, mode)
		}
	}

	got, err := store.All(ctx, st, store.SettingRead("plan_cache_mode"))
	if err != nil || len(got) != 1 || got[0] != "force_generic_plan" {
		t.Fatalf("a read alone ran with plan_cache_mode %v (%v), want force_generic_plan", got, err)
	}
	after("after a read alone")

	var b store.Batch
	var modes []string
	for range 3 {
		store.Queue(&b, store.SettingRead("plan_cache_mode"), func(rs []string, err error) {
			if err != nil {
				t.Error(err)
			}
			modes = append(modes, rs...)
		})
	}
	if err := st.Send(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if strings.Join(modes, ",") != "force_generic_plan,force_generic_plan,force_generic_plan" {
		t.Errorf("batched reads ran with %v", modes)
	}
	after("after a batch")

	if _, err := store.All(ctx, st, store.SettingRead("no_such.setting_here")); err == nil {
		t.Fatal("reading an unknown setting succeeded")
	}
	after("after a failed read")

	// The effect: the client read by id, run ten times, was planned once
	// (a generic plan), never per execution.
	owner := e.NewOwner(t, "generic-plans")
	for range 10 {
		if _, err := st.Client(ctx, owner.ID, 1<<40); err != store.ErrNotFound {
			t.Fatalf("unknown client: %v, want ErrNotFound", err)
		}
	}
	var generic, custom int64
	if err := st.Pool().QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%AND c.id = $2'`).Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if custom != 0 || generic != 10 {
		t.Errorf("the client read ran on %d generic and %d custom plans, want 10 generic and 0 custom", generic, custom)
	}
}

// TestTextColumnsRead: a row's text columns, read as parts of one string
// (store's texts), come back as they were stored, an empty one apart from a
// NULL one, for a client, its contract and its registration key.
func TestTextColumnsRead(t *testing.T) {
	ctx := context.Background()
	e := apitest.Get(t)
	o := e.NewOwner(t, "texts")
	label, empty, currency := "é 😀 \"label\"", "", "EUR"
	key := o.NewRegistrationKey(t, store.RegistrationKeyInput{Comment: &empty})
	c := o.NewClient(t, store.NewClient{Label: &label, ExtraLabel: &empty, RegistrationKeyID: &key.ID})
	o.NewContract(t, store.NewContract{ClientID: c.ID, Name: "contract ü", Currency: &currency})
	got, err := e.Store.Client(ctx, o.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID != c.UUID || got.Type == "" || got.Label == nil || *got.Label != label ||
		got.ExtraLabel == nil || *got.ExtraLabel != "" || got.DisabledReason != nil || got.LastClientVersion != nil {
		t.Errorf("client read as uuid %q type %q label %v extra label %v disabled reason %v version %v",
			got.UUID, got.Type, got.Label, got.ExtraLabel, got.DisabledReason, got.LastClientVersion)
	}
	cs, err := store.All(ctx, e.Store, store.ContractsByClient(o.ID, []int64{c.ID}))
	if err != nil || len(cs) != 1 {
		t.Fatalf("contracts %v: %v", cs, err)
	}
	if k := cs[0]; k.Name != "contract ü" || k.Currency == nil || *k.Currency != "EUR" || k.AssumedTariff != nil || k.ConnectionType != nil || k.IspName == "" {
		t.Errorf("contract read as name %q currency %v tariff %v connection %v isp %q", k.Name, k.Currency, k.AssumedTariff, k.ConnectionType, k.IspName)
	}
	ks, err := store.All(ctx, e.Store, store.RegistrationKeysByClients(o.ID, []int64{c.ID}))
	if err != nil || len(ks) != 1 {
		t.Fatalf("registration keys %v: %v", ks, err)
	}
	if k := ks[0]; k.ClientID != c.ID || k.ID != key.ID || k.RegistrationKey.RegistrationKey != key.RegistrationKey || k.Comment == nil || *k.Comment != "" ||
		k.ValidUntil != nil || k.UsageLimitDays != nil {
		t.Errorf("registration key read as %+v, created as %+v", k, key)
	}
}
