package resolvers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

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
			gqlErr.Extensions["code"] = apierr.ErrInvalid.Code
			gqlErr.Extensions["errors"] = map[string][]string{field: {gqlErr.Message}}
		} else if _, ok := gqlErr.Extensions["code"]; !ok {
			gqlErr.Extensions["code"] = apierr.ErrInvalid.Code
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
		out.Extensions = map[string]any{"code": apierr.ErrInvalid.Code, "errors": map[string][]string{field: {inputErr.Msg}}}
		return out
	}
	class, msg, fields := apierr.Describe(fromLoaders(err))
	if class.Status >= 500 {
		r.logFailure(ctx, class, out.Path, err)
	}
	out.Message = msg
	out.Extensions = map[string]any{"code": class.Code}
	if fields != nil {
		out.Extensions["errors"] = map[string][]string(fields)
	}
	if secs, ok := apierr.RetryAfter(err); ok {
		out.Extensions["retryAfter"] = secs
	}
	return out
}

// logFailure logs a server-side failure of one field, but not the failures
// of a request given up by its client or past its deadline: the access log
// reports such a request once, where its fields would fill the log with one
// line each.
func (r *Resolver) logFailure(ctx context.Context, class *apierr.Class, path ast.Path, err error) {
	switch {
	case ctx.Err() != nil && apierr.Canceled(err):
	case class == apierr.ErrDatabaseUnavailable:
		r.Logger.WarnContext(ctx, "database unavailable", "path", path.String(), "err", err)
	case class == apierr.ErrUnavailable:
		r.Logger.WarnContext(ctx, "search backend unavailable", "path", path.String(), "err", err)
	default:
		r.Logger.ErrorContext(ctx, "resolver failed", "path", path.String(), "err", err)
	}
}

// fromLoaders gives the loaders' refusal of a page its class.
func fromLoaders(err error) error {
	var tooMany *loaders.TooManyMeasurementsError
	if errors.As(err, &tooMany) {
		return &apierr.BadRequest{Msg: tooMany.Error()}
	}
	return err
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

// forbidden is a 403 that says what the caller may not do.
func forbidden(format string, args ...any) error {
	return apierr.Errorf(apierr.ErrForbidden, format, args...)
}

// conflict wraps a store conflict with a message naming what collided.
func conflict(err error, msg string) error {
	if errors.Is(err, store.ErrConflict) {
		return &apierr.Error{Class: apierr.ErrConflict, Msg: msg}
	}
	return err
}

// RecoverPanic turns a panic in a resolver into an internal error.
func (r *Resolver) RecoverPanic(ctx context.Context, p any) error {
	r.Panicked(ctx, "resolver panicked", p)
	return errors.New("internal panic")
}
