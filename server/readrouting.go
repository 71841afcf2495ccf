package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// readRouting decides, per operation, where its reads may go
// (docs/operating.md "Read replicas"): a query only reads, so its store
// reads are marked store.ReadOnly and may go to the read replica; after a
// mutation, its data owner's reads stay on the primary until the replica
// has replayed it (store.Wrote). Subscriptions, and everything without a
// replica, read from the primary. REST's stored operations pass here too.
type readRouting struct{ Store *store.Store }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = readRouting{}

// ExtensionName names the extension.
func (readRouting) ExtensionName() string { return "FleetgraphReadRouting" }

// Validate accepts every schema.
func (readRouting) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation marks a query's context, and records a mutation's
// write once it has answered.
func (rr readRouting) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	p := auth.From(ctx)
	oc := graphql.GetOperationContext(ctx)
	if p == nil || rr.Store == nil || oc == nil || oc.Operation == nil {
		return next(ctx)
	}
	switch oc.Operation.Operation {
	case ast.Query:
		return next(store.ReadOnly(ctx, p.DataOwnerID))
	case ast.Mutation:
		answer := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			resp := answer(ctx)
			rr.Store.Wrote(ctx, p.DataOwnerID)
			return resp
		}
	}
	return next(ctx)
}
