package resolvers

import (
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
)

// requireNotAbove refuses to grant a role above the caller's own.
func requireNotAbove(p *auth.Principal, role model.Role) error {
	if !p.Role.AtLeast(role) {
		return forbidden("you cannot grant the %s role: it is above your own (%s)", role, p.Role)
	}
	return nil
}
