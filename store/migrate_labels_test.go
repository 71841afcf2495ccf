package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// TestMigrationUniqueLabels: migration 00012 builds the unique label and
// group name indexes on a database whose rows collide (written before the
// rule), keeping the oldest row's text and appending the id to the others',
// and leaving other data owners, blank labels and NULLs alone.
func TestMigrationUniqueLabels(t *testing.T) {
	ctx := context.Background()
	db, st, err := testdb.Create(ctx, "fleetgraph_migrate_labels", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	sqlDB := stdlib.OpenDBFromPool(st.Pool())
	defer sqlDB.Close()
	p, err := store.MigrationProvider(sqlDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatalf("down to 11: %v", err)
	}

	pool := st.Pool()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO data_owners (id, slug, name) VALUES (901, 'mig_a', 'A'), (902, 'mig_b', 'B')`)
	exec(`INSERT INTO clients (id, data_owner_id, uuid, type, label) VALUES
		(9001, 901, gen_random_uuid(), 'probe', 'Berlin'), (9002, 901, gen_random_uuid(), 'probe', ' berlin '),
		(9003, 901, gen_random_uuid(), 'probe', 'BERLIN'), (9004, 902, gen_random_uuid(), 'probe', 'Berlin'),
		(9005, 901, gen_random_uuid(), 'probe', '  '), (9006, 901, gen_random_uuid(), 'probe', '  '),
		(9007, 901, gen_random_uuid(), 'probe', NULL), (9008, 901, gen_random_uuid(), 'probe', NULL)`)
	exec(`INSERT INTO client_groups (id, data_owner_id, name) VALUES (9101, 901, 'Roof'), (9102, 901, 'roof'), (9103, 902, 'Roof')`)

	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	want := map[int64]*string{9001: ptr("Berlin"), 9002: ptr("berlin (9002)"), 9003: ptr("BERLIN (9003)"), 9004: ptr("Berlin"),
		9005: ptr("  "), 9006: ptr("  "), 9007: nil, 9008: nil}
	for id, w := range want {
		var got *string
		if err := pool.QueryRow(ctx, `SELECT label FROM clients WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (w == nil) || got != nil && *got != *w {
			t.Errorf("client %d label = %v, want %v", id, deref(got), deref(w))
		}
	}
	for id, w := range map[int64]string{9101: "Roof", 9102: "roof (9102)", 9103: "Roof"} {
		var got string
		if err := pool.QueryRow(ctx, `SELECT name FROM client_groups WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("group %d name = %q, want %q", id, got, w)
		}
	}
	// The rule holds from now on.
	if _, err := pool.Exec(ctx, `UPDATE clients SET label = 'berlin' WHERE id = 9002`); err == nil {
		t.Error("a second client of data owner 901 could take the label Berlin")
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
