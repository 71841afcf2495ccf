// Package apierr is the one table of the failures fleetgraph's APIs tell
// apart: every class with its GraphQL extensions.code, its HTTP status and
// the message a caller reads, plus the few types that carry a message of
// their own (BadRequest, Error, ValidationError). Domain packages return a
// class or wrap one (store.ErrNotFound is ErrNotFound); the GraphQL error
// presenter, the REST adapter and the auth middleware all answer through
// Describe, so one failure reads the same on every interface. Modelled on
// golang/pkgsite's internal/derrors.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Class is a kind of failure. It is an error value: domain sentinels are
// classes, or wrap one, and errors.Is tells the class of any error.
type Class struct {
	Code   string // GraphQL extensions.code
	Status int    // HTTP status of the REST APIs
	text   string // Error(), for the log
	// message is what a caller reads of an error of this class that
	// carries no message for callers; "" means the error's own text (it
	// names nothing internal).
	message string
}

func (c *Class) Error() string { return c.text }

// The table. Describe tries the classes in the order of classes below.
var (
	ErrUnauthenticated = &Class{"UNAUTHENTICATED", http.StatusUnauthorized,
		"missing, unknown, expired or revoked API key", "missing, unknown, expired or revoked API key"}
	ErrForbidden = &Class{"FORBIDDEN", http.StatusForbidden,
		"your role does not allow this operation", "your role does not allow this operation"}
	ErrNotFound = &Class{"NOT_FOUND", http.StatusNotFound, "not found", "Not found"}
	ErrConflict = &Class{"CONFLICT", http.StatusConflict, "already exists", "Conflicts with an existing record"}
	// ErrInvalid: the input parsed, but some fields are invalid (a 422;
	// ValidationError says which).
	ErrInvalid = &Class{"BAD_USER_INPUT", http.StatusUnprocessableEntity, "invalid input", "Validation failed"}
	// ErrBadRequest: the request cannot be understood as asked (BadRequest).
	ErrBadRequest      = &Class{"BAD_REQUEST", http.StatusBadRequest, "bad request", ""}
	ErrTooLarge        = &Class{"PAYLOAD_TOO_LARGE", http.StatusRequestEntityTooLarge, "request body too large", "request body is too large"}
	ErrTooManyRequests = &Class{"TOO_MANY_REQUESTS", http.StatusTooManyRequests, "too many requests", ""}
	// ErrBadGateway: a service the server called on the caller's behalf
	// (the AI model provider) failed; the details go to the log only.
	ErrBadGateway = &Class{"BAD_GATEWAY", http.StatusBadGateway, "upstream failed", "An upstream service failed; try again later"}
	// ErrUnavailable: a backend failed, is overloaded or did not answer in
	// time; the caller may try again, the details go to the log only.
	ErrUnavailable = &Class{"SERVICE_UNAVAILABLE", http.StatusServiceUnavailable,
		"service unavailable", "Search is unavailable at the moment; try again later"}
	// ErrDatabaseUnavailable: PostgreSQL is down, restarting, refusing
	// connections, or did not answer within the request's time limit
	// (Outage tells these apart from other failures). Like ErrUnavailable
	// it is a 503 answered with Retry-After: the caller may try again.
	ErrDatabaseUnavailable = &Class{"SERVICE_UNAVAILABLE", http.StatusServiceUnavailable,
		"database unavailable", "The database is unavailable or did not answer in time; try again later"}
	// ErrInternal is every error of no other class; its cause goes to the
	// log only.
	ErrInternal = &Class{"INTERNAL_SERVER_ERROR", http.StatusInternalServerError, "internal error", "Internal server error"}
	// ErrGraphQLValidation is gqlgen's code for a document that does not
	// validate against the schema (no error of ours carries it).
	ErrGraphQLValidation = &Class{"GRAPHQL_VALIDATION_FAILED", http.StatusUnprocessableEntity,
		"invalid GraphQL document", "Invalid GraphQL document"}
)

var classes = []*Class{ErrInvalid, ErrBadRequest, ErrUnauthenticated, ErrForbidden, ErrNotFound, ErrConflict,
	ErrTooLarge, ErrTooManyRequests, ErrBadGateway, ErrUnavailable, ErrDatabaseUnavailable, ErrGraphQLValidation}

// ClassOf is the class of err: the first of the table that errors.Is
// finds in it, else ErrDatabaseUnavailable for an Outage, else
// ErrInternal.
func ClassOf(err error) *Class {
	for _, c := range classes {
		if errors.Is(err, c) {
			return c
		}
	}
	if Outage(err) {
		return ErrDatabaseUnavailable
	}
	return ErrInternal
}

// RetryAfterSeconds is the Retry-After of every 503: PostgreSQL restarts
// in well under a second once it is back, so a few seconds is enough.
const RetryAfterSeconds = 5

// Outage reports whether err says that the database cannot answer now, as
// opposed to a failure of the request itself. Every such failure is a 503
// (ErrDatabaseUnavailable), none a 504: fleetgraph is the origin server,
// not a gateway, and a caller cannot tell a dead database from a frozen
// one, nor should it act differently (wait, then retry: 503 with
// Retry-After says exactly that).
//
//   - no connection: refused, reset, broken pipe, unreachable, a connect
//     that failed (pgconn.ConnectError), a connection closed mid-answer
//     (unexpected EOF), a network timeout;
//   - the server going away or not taking connections: SQLSTATE class 08
//     (connection exception), 57P01 admin_shutdown (pg_ctl stop -m fast,
//     pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now
//     (starting up, shutting down, recovering), 53300 too_many_connections;
//   - the request's deadline: context.DeadlineExceeded (also waiting for a
//     pool connection past it), and 57014 query_canceled, which is either
//     statement_timeout or the cancel request pgx sends when the deadline
//     passes. A statement the caller cancelled (client gone) also reads
//     57014, but nobody is left to read that answer.
//
// context.Canceled is not an outage: it is the client leaving.
func Outage(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, e) {
			return true
		}
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		switch code := pg.SQLState(); {
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03", code == "53300", code == "57014":
			return true
		}
	}
	return false
}

// ByCode is the class of an extensions.code (ErrInternal for codes of no
// class, e.g. gqlgen's own).
func ByCode(code string) *Class {
	for _, c := range classes {
		if c.Code == code {
			return c
		}
	}
	return ErrInternal
}

// public is an error whose message is written for the caller.
type public interface {
	error
	PublicMessage() string
}

// Describe is how the APIs answer err: its class, the message for the
// caller (never an internal cause) and, for a ValidationError, the
// failures per field.
func Describe(err error) (c *Class, msg string, fields FieldErrors) {
	c = ClassOf(err)
	var ve *ValidationError
	var p public
	switch {
	case c == ErrInternal:
		return c, c.message, nil
	case errors.As(err, &ve):
		return c, ve.Error(), ve.Fields
	case errors.As(err, &p):
		return c, p.PublicMessage(), nil
	case c.message == "":
		return c, err.Error(), nil
	}
	return c, c.message, nil
}

// Canceled reports whether err is the work of a request given up: its
// context cancelled or past its deadline, or PostgreSQL cancelling the
// statement for it (SQLSTATE 57014, "canceling statement due to user
// request", which pgx provokes when the context ends).
func Canceled(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var pg interface{ SQLState() string }
	return errors.As(err, &pg) && pg.SQLState() == "57014"
}

// Error is a failure of a class with a message written for the caller
// ("client 7 not found" where the class would say "Not found").
type Error struct {
	Class *Class
	Msg   string
}

// Errorf makes an *Error of class c.
func Errorf(c *Class, format string, args ...any) error {
	return &Error{Class: c, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string         { return e.Msg }
func (e *Error) Unwrap() error         { return e.Class }
func (e *Error) PublicMessage() string { return e.Msg }

// Sentinel makes a domain sentinel of class c: text is for the log, the
// caller reads the class's message.
func Sentinel(c *Class, text string) error { return &sentinel{class: c, text: text} }

type sentinel struct {
	class *Class
	text  string
}

func (s *sentinel) Error() string { return s.text }
func (s *sentinel) Unwrap() error { return s.class }

// BadRequest is a 400: the request cannot be understood as asked (a
// malformed parameter, an unsupported search clause). Every package that
// refuses a request this way uses this type.
type BadRequest struct{ Msg string }

// BadRequestf makes a *BadRequest.
func BadRequestf(format string, args ...any) error {
	return &BadRequest{Msg: fmt.Sprintf(format, args...)}
}

// NotFoundf is a 404 that says what is missing (where "Not found" would
// leave the caller guessing which part of the path named nothing).
func NotFoundf(format string, args ...any) error {
	return Errorf(ErrNotFound, format, args...)
}

func (e *BadRequest) Error() string         { return e.Msg }
func (e *BadRequest) Unwrap() error         { return ErrBadRequest }
func (e *BadRequest) PublicMessage() string { return e.Msg }

// FieldErrors collects validation failures per input field (GraphQL names
// in resolvers, snake_case paths in the REST input mapper).
type FieldErrors map[string][]string

// Add records msg against field.
func (fe FieldErrors) Add(field, msg string) { fe[field] = append(fe[field], msg) }

// Invalid is a one-field validation error.
func Invalid(field, msg string) error {
	return FieldErrors{field: {msg}}.Err()
}

// Err returns the collected failures as an error, or nil when there are none.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return &ValidationError{Fields: fe}
}

// ValidationError is a 422: the input parsed, but some fields are invalid.
type ValidationError struct{ Fields FieldErrors }

func (e *ValidationError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, f := range names {
		parts[i] = f + " " + strings.Join(e.Fields[f], ", ")
	}
	return "Validation failed: " + strings.Join(parts, "; ")
}

func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Later is a refusal the caller may retry at a known time (an AI token
// budget used up until the month's end): /graphql carries the seconds to
// wait in extensions.retryAfter, REST answers them as Retry-After.
type Later struct {
	Err error
	At  time.Time
}

func (e *Later) Error() string { return e.Err.Error() }
func (e *Later) Unwrap() error { return e.Err }

// RetryAfter is how many whole seconds (at least 1) the caller of err
// should wait, when err is a Later.
func RetryAfter(err error) (int64, bool) {
	var l *Later
	if !errors.As(err, &l) {
		return 0, false
	}
	return max(1, int64(time.Until(l.At).Seconds()+0.999)), true
}
