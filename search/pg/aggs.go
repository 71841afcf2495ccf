package pg

import (
	"context"

	"github.com/fleetgraph/fleetgraph/search"
)

// aggregations answers the body's "aggs"/"aggregations" clause over the
// documents matching where (a SQL condition on alias d using a's placeholders).
func (b *Backend) aggregations(ctx context.Context, a *args, where string, aggs map[string]any) (map[string]any, error) {
	return nil, search.Badf("aggregations are not supported yet")
}
