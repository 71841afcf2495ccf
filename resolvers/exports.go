package resolvers

import (
	"context"
	"fmt"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/export"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// exportDocuments runs one parsed listing over the data owner's documents
// of kind, shaping each stored document with conv.
func (r *queryResolver) exportDocuments(ctx context.Context, kind string, l export.Listing,
	conv func(store.ExportDocument) (model.JSON, error)) (*gqlmodel.ExportDocumentPage, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return nil, err
	}
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return nil, err
	}
	defer done()
	docs, total, err := r.Store.ExportDocuments(ctx, p.DataOwnerID, kind, l.Filter)
	if err != nil {
		return nil, err
	}
	items := make([]model.JSON, len(docs))
	for i, d := range docs {
		if items[i], err = conv(d); err != nil {
			return nil, fmt.Errorf("export %s: %w", kind, err)
		}
	}
	return &gqlmodel.ExportDocumentPage{Items: items, Total: total, Page: l.Page, PerPage: l.PerPage}, nil
}
