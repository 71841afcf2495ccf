package resolvers

import (
	"context"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
)

// requireRole returns the caller when it may act with at least role min.
func requireRole(ctx context.Context, min model.Role) (*auth.Principal, error) {
	p, err := auth.Require(ctx, min)
	if err != nil && p == nil && auth.From(ctx) != nil {
		return nil, forbidden("this operation needs the %s role or higher", min)
	}
	return p, err
}

// requireNotAbove refuses to grant a role above the caller's own.
func requireNotAbove(p *auth.Principal, role model.Role) error {
	if !p.Role.AtLeast(role) {
		return forbidden("you cannot grant the %s role: it is above your own (%s)", role, p.Role)
	}
	return nil
}
