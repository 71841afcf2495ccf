package resolvers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/search"
	"github.com/fleetgraph/fleetgraph/store"
)

// Error codes carried in extensions.code; rest maps them to HTTP status.
const (
	CodeUnauthenticated = "UNAUTHENTICATED"
	CodeForbidden       = "FORBIDDEN"
	CodeNotFound        = "NOT_FOUND"
	CodeBadUserInput    = "BAD_USER_INPUT"
	CodeBadRequest      = "BAD_REQUEST"
	CodeConflict        = "CONFLICT"
	CodeInternal        = "INTERNAL_SERVER_ERROR"
	CodeUnavailable     = "SERVICE_UNAVAILABLE"
	CodeTooManyRequests = "TOO_MANY_REQUESTS"
)

// FieldErrors collects validation failures per input field (GraphQL names).
type FieldErrors map[string][]string

// Add records msg against field.
func (fe FieldErrors) Add(field, msg string) { fe[field] = append(fe[field], msg) }

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

// invalid is a one-field validation error.
func invalid(field, msg string) error {
	return FieldErrors{field: {msg}}.Err()
}

// BadRequestError is a 400: the request cannot be understood as asked.
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

// PresentError shapes every resolver error: a known classification in
// extensions.code, field errors in extensions.errors, and for anything
// unexpected a generic message (the cause goes to the log only).
func (r *Resolver) PresentError(ctx context.Context, err error) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		// Parse, validation and coercion errors made by gqlgen itself.
		if gqlErr.Extensions == nil {
			gqlErr.Extensions = map[string]any{}
		}
		if field, ok := variableField(gqlErr.Path); ok {
			// A variable's value failed coercion: bad input, not a bad document.
			gqlErr.Extensions["code"] = CodeBadUserInput
			gqlErr.Extensions["errors"] = map[string][]string{field: {gqlErr.Message}}
		} else if _, ok := gqlErr.Extensions["code"]; !ok {
			gqlErr.Extensions["code"] = CodeBadUserInput
		}
		return gqlErr
	}
	out := graphql.DefaultErrorPresenter(ctx, err)
	var inputErr *model.InputError
	if !errors.As(err, &inputErr) {
		inputErr = timeInputError(err)
	}
	if inputErr != nil && len(out.Path) > 2 {
		// An argument failed to decode; its path is [field, argument, ...].
		field := formatPath(out.Path[2:])
		out.Message = "Validation failed: " + field + " " + inputErr.Msg
		out.Extensions = map[string]any{"code": CodeBadUserInput, "errors": map[string][]string{field: {inputErr.Msg}}}
		return out
	}
	code, msg, fields := classify(err)
	switch code {
	case CodeInternal:
		r.Logger.ErrorContext(ctx, "resolver failed", "path", out.Path.String(), "err", err)
	case CodeUnavailable:
		r.Logger.WarnContext(ctx, "search backend unavailable", "path", out.Path.String(), "err", err)
	}
	out.Message = msg
	out.Extensions = map[string]any{"code": code}
	if fields != nil {
		out.Extensions["errors"] = map[string][]string(fields)
	}
	return out
}

// timeInputError recognises the error of gqlgen's Time scalar (bound to
// graphql.Time) failing to decode an argument, which carries no type of
// its own: bad input, not a server fault.
func timeInputError(err error) *model.InputError {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "time should be RFC3339Nano formatted string" {
			return &model.InputError{Msg: "must be an RFC 3339 time, e.g. 2026-11-01T06:00:00Z"}
		}
	}
	return nil
}

// variableField names the input field of a variable coercion error, whose
// path is ["variable", name, field...]: the fields below an input object
// variable (notificationConfig.anomalyEventsDigestHours), else the variable.
func variableField(path ast.Path) (string, bool) {
	if len(path) < 2 || path[0] != ast.PathName("variable") {
		return "", false
	}
	rest := path[2:]
	if len(rest) == 0 {
		rest = path[1:2]
	}
	return formatPath(rest), true
}

// formatPath writes path elements as a dotted field path with [i] indexes.
func formatPath(els ast.Path) string {
	var b strings.Builder
	for _, el := range els {
		switch el := el.(type) {
		case ast.PathName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(el))
		case ast.PathIndex:
			fmt.Fprintf(&b, "[%d]", int(el))
		}
	}
	return b.String()
}

func classify(err error) (code, msg string, fields FieldErrors) {
	var ve *ValidationError
	var br *BadRequestError
	var tooMany *loaders.TooManyMeasurementsError
	switch {
	case errors.As(err, &ve):
		return CodeBadUserInput, ve.Error(), ve.Fields
	case errors.As(err, &br):
		return CodeBadRequest, br.Msg, nil
	case errors.As(err, &tooMany):
		return CodeBadRequest, tooMany.Error(), nil
	case errors.Is(err, auth.ErrUnauthenticated):
		return CodeUnauthenticated, auth.ErrUnauthenticated.Error(), nil
	case errors.Is(err, auth.ErrForbidden):
		return CodeForbidden, forbiddenMessage(err), nil
	case errors.Is(err, store.ErrNotFound):
		return CodeNotFound, notFoundMessage(err), nil
	case errors.Is(err, store.ErrConflict):
		return CodeConflict, conflictMessage(err), nil
	case errors.Is(err, store.ErrInvalidText):
		return CodeBadUserInput, store.ErrInvalidText.Error(), nil
	case errors.Is(err, search.ErrTooManyScrolls):
		return CodeTooManyRequests, err.Error(), nil
	case errors.Is(err, search.ErrUnavailable):
		var ue *search.UnavailableError
		if errors.As(err, &ue) {
			return CodeUnavailable, ue.Msg, nil
		}
		return CodeUnavailable, "Search is unavailable at the moment; try again later", nil
	}
	return CodeInternal, "Internal server error", nil
}

func forbiddenMessage(err error) string {
	var fe *forbiddenError
	if errors.As(err, &fe) {
		return fe.msg
	}
	return auth.ErrForbidden.Error()
}

type forbiddenError struct{ msg string }

func (e *forbiddenError) Error() string { return e.msg }
func (e *forbiddenError) Unwrap() error { return auth.ErrForbidden }

func forbidden(format string, args ...any) error {
	return &forbiddenError{msg: fmt.Sprintf(format, args...)}
}

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return store.ErrNotFound }

// notFound is a 404 that says what is missing (where "Not found" would
// leave the caller guessing which part of the path named nothing).
func notFound(format string, args ...any) error {
	return &notFoundError{msg: fmt.Sprintf(format, args...)}
}

func notFoundMessage(err error) string {
	var nf *notFoundError
	if errors.As(err, &nf) {
		return nf.msg
	}
	return "Not found"
}

type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }
func (e *conflictError) Unwrap() error { return store.ErrConflict }

// conflict wraps a store conflict with a message naming what collided.
func conflict(err error, msg string) error {
	if errors.Is(err, store.ErrConflict) {
		return &conflictError{msg: msg}
	}
	return err
}

func conflictMessage(err error) string {
	var ce *conflictError
	if errors.As(err, &ce) {
		return ce.msg
	}
	return "Conflicts with an existing record"
}

// RecoverPanic turns a panic in a resolver into an internal error.
func (r *Resolver) RecoverPanic(ctx context.Context, p any) error {
	r.Logger.ErrorContext(ctx, "resolver panicked", "panic", p)
	return errors.New("internal panic")
}
