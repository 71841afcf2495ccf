package obs

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// GraphQL is the gqlgen extension that names the request's operation for
// the metrics (Metrics set: the operation label of /graphql) and, when
// Tracer is set, wraps each operation in a span named after it
// ("query ClientGet"), parent of the spans of its statements.
type GraphQL struct {
	Metrics *Metrics     // nil: no operation label
	Tracer  trace.Tracer // nil: no spans
}

var (
	_ graphql.HandlerExtension          = GraphQL{}
	_ graphql.OperationParameterMutator = GraphQL{}
	_ graphql.OperationInterceptor      = GraphQL{}
)

func (GraphQL) ExtensionName() string                   { return "Observability" }
func (GraphQL) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters labels the request before parsing and
// validation: a refused document keeps this label (a name already learned,
// else OpUnknown).
func (g GraphQL) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if g.Metrics != nil {
		setOperation(ctx, g.Metrics.opNames.label(p.OperationName, false))
	}
	return nil
}

// InterceptOperation labels a validated operation by its name (learning
// it) and starts its span.
func (g GraphQL) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	name, typ := oc.OperationName, ""
	if oc.Operation != nil {
		name, typ = oc.Operation.Name, string(oc.Operation.Operation)
	}
	if g.Metrics != nil {
		setOperation(ctx, g.Metrics.opNames.label(name, true))
	}
	if g.Tracer == nil {
		return next(ctx)
	}
	spanName := typ
	if name != "" {
		spanName += " " + name
	}
	ctx, span := g.Tracer.Start(ctx, spanName, trace.WithAttributes(
		attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", name),
	))
	h := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp != nil && len(resp.Errors) > 0 {
			span.SetAttributes(attribute.Int("graphql.errors", len(resp.Errors)))
			span.SetStatus(codes.Error, resp.Errors[0].Message)
		}
		span.End()
		return resp
	}
}
