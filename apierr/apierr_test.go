package apierr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		class  *Class
		msg    string
		fields bool
	}{
		{"a store miss reads Not found", fmt.Errorf("load client: %w", ErrNotFound), ErrNotFound, "Not found", false},
		{"a message for the caller wins over the class's", Errorf(ErrNotFound, "no client 7"), ErrNotFound, "no client 7", false},
		{"a unique violation reads as a conflict", fmt.Errorf("insert isp: %w", ErrConflict), ErrConflict, "Conflicts with an existing record", false},
		{"a bad request keeps its own words", fmt.Errorf("parse: %w", BadRequestf("size must be %d or less", 10)), ErrBadRequest, "size must be 10 or less", false},
		{"validation failures carry their fields", FieldErrors{"name": {"is required"}}.Err(), ErrInvalid, "Validation failed: name is required", true},
		{"a sentinel of a class without a message reads its own text",
			fmt.Errorf("%w: finish the open ones", Sentinel(ErrTooManyRequests, "too many open scrolls")),
			ErrTooManyRequests, "too many open scrolls: finish the open ones", false},
		{"a backend failure hides its cause", fmt.Errorf("es: %w: dial tcp", Sentinel(ErrUnavailable, "search backend unavailable")),
			ErrUnavailable, "Search is unavailable at the moment; try again later", false},
		{"anything else is internal and says nothing of itself", errors.New("connection refused"), ErrInternal, "Internal server error", false},
		{"a refused connection is a database outage", fmt.Errorf("authenticate: find api key: %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
			ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"a reset connection too", fmt.Errorf("list isps: %w", syscall.ECONNRESET), ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"a connection closed mid-answer too", fmt.Errorf("list isps: %w", io.ErrUnexpectedEOF), ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"the request's deadline too", fmt.Errorf("acquire: %w", context.DeadlineExceeded), ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"statement_timeout too", &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"admin shutdown too", &pgconn.PgError{Code: "57P01"}, ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"a server starting up or shutting down too", &pgconn.PgError{Code: "57P03"}, ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"a connection exception too", &pgconn.PgError{Code: "08006"}, ErrDatabaseUnavailable, ErrDatabaseUnavailable.message, false},
		{"a client that left is not an outage", fmt.Errorf("list isps: %w", context.Canceled), ErrInternal, "Internal server error", false},
		{"another SQL error is internal", &pgconn.PgError{Code: "42601"}, ErrInternal, "Internal server error", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			class, msg, fields := Describe(c.err)
			if class != c.class || msg != c.msg || (fields != nil) != c.fields {
				t.Errorf("Describe = %s %q %v, want %s %q (fields: %v)", class.Code, msg, fields, c.class.Code, c.msg, c.fields)
			}
		})
	}
}

func TestByCodeIsTheTableReadBackwards(t *testing.T) {
	for _, c := range classes {
		// The one code of two classes: both 503s, which the REST adapter
		// reads back as the same status (the message travels as written).
		if c == ErrDatabaseUnavailable {
			if got := ByCode(c.Code); got != ErrUnavailable || got.Status != c.Status {
				t.Errorf("ByCode(%s) = %s %d, want the search's 503 class", c.Code, got.Code, got.Status)
			}
			continue
		}
		if got := ByCode(c.Code); got != c {
			t.Errorf("ByCode(%s) = %s", c.Code, got.Code)
		}
	}
	if got := ByCode("COMPLEXITY_LIMIT_EXCEEDED"); got != ErrInternal {
		t.Errorf("a code of no class = %s, want INTERNAL_SERVER_ERROR", got.Code)
	}
}

func TestCanceled(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"context cancelled", fmt.Errorf("load: %w", context.Canceled), true},
		{"deadline passed", fmt.Errorf("load: %w", context.DeadlineExceeded), true},
		{"statement cancelled by PostgreSQL", fmt.Errorf("load: %w", &pgconn.PgError{Code: "57014",
			Message: "canceling statement due to user request"}), true},
		{"another database error", &pgconn.PgError{Code: "23505"}, false},
		{"a plain failure", errors.New("boom"), false},
	} {
		if got := Canceled(c.err); got != c.want {
			t.Errorf("%s: Canceled = %v, want %v", c.name, got, c.want)
		}
	}
}
