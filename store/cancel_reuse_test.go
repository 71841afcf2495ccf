package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

// TestCancelledConnectionIsNotReused: a statement cancelled by its
// context (a request that ended) leaves its connection to be closed, not
// reused: the cancel request reaches the backend some time after it was
// sent, and a late one stopped the next statement on the same connection.
func TestCancelledConnectionIsNotReused(t *testing.T) {
	ctx := context.Background()
	db, st, err := testdb.Create(ctx, "fleetgraph_cancelreuse", store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	pool := st.Pool()
	var before int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	var pgErr *pgconn.PgError
	if _, err := pool.Exec(cctx, `SELECT pg_sleep(10)`); !errors.Is(err, context.DeadlineExceeded) &&
		!(errors.As(err, &pgErr) && pgErr.Code == "57014") {
		t.Fatalf("the sleep ended with %v, want it cancelled", err)
	}
	var after int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Errorf("the next statement ran on backend %d, the cancelled one's: want a new connection", after)
	}
	// A statement that is not cancelled keeps its connection.
	var again int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&again); err != nil {
		t.Fatal(err)
	}
	if again != after {
		t.Errorf("backend %d then %d: a connection not cancelled should stay in the pool", after, again)
	}
}
