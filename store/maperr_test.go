package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestMapErrRaces: constraint violations that races produce are mapped at
// the store boundary, never left as internal errors.
func TestMapErrRaces(t *testing.T) {
	for code, want := range map[string]error{"23505": ErrConflict, "23503": ErrNotFound} {
		err := mapErr("insert registration key", fmt.Errorf("exec: %w", &pgconn.PgError{Code: code}))
		if !errors.Is(err, want) {
			t.Errorf("SQLSTATE %s: %v, want %v", code, err, want)
		}
	}
}
