package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// TestMapErrRaces: constraint violations that races produce are mapped at
// the store boundary, never left as internal errors.
func TestMapErrRaces(t *testing.T) {
	for code, want := range map[string]error{"23505": ErrConflict, "23503": ErrNotFound, "23P01": ErrConflict,
		"40001": ErrConcurrentChange, "40P01": ErrConcurrentChange, "23514": apierr.ErrInvalid, "23502": apierr.ErrInvalid,
		"23001": apierr.ErrInvalid, "22001": apierr.ErrInvalid, "22003": apierr.ErrInvalid, "22021": ErrInvalidText} {
		err := mapErr("insert registration key", fmt.Errorf("exec: %w", &pgconn.PgError{Code: code}))
		if !errors.Is(err, want) {
			t.Errorf("SQLSTATE %s: %v, want %v", code, err, want)
		}
		if c := apierr.ClassOf(err); c.Status != 404 && c.Status != 409 && c.Status != 422 {
			t.Errorf("SQLSTATE %s: %s %d, want 404, 409 or 422", code, c.Code, c.Status)
		}
		if again := mapErr("transaction", err); apierr.ClassOf(again) != apierr.ClassOf(err) {
			t.Errorf("SQLSTATE %s: mapped twice is %s, once %s", code, apierr.ClassOf(again).Code, apierr.ClassOf(err).Code)
		}
	}
	// A not-null violation names its column.
	_, _, fields := apierr.Describe(mapErr("insert isp", &pgconn.PgError{Code: "23502", ColumnName: "name"}))
	if len(fields["name"]) == 0 {
		t.Errorf("not null on name: fields %v, want name", fields)
	}
}
