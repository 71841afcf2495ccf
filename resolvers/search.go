package resolvers

import (
	"context"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits/budget"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/search"
)

// The search core: measurementSearch, anomalyEventSearch and the scroll
// continuation of GraphQL and of POST /measurements/search and
// /anomaly_events/search. The arguments are parsed and checked by package
// search (search.NewRequest) and run by the configured backend within the
// caller's data owner, admitted as heavy work.

// heavy admits a data owner's heavy work (a search, an ES|QL query, an
// export listing, a scroll page): refused while the data owner's answers
// are over their rate (ratelimit.AnswerRoom), then given a place of the
// admission gate. done leaves the place and charges what the work read
// (package budget's count) to the data owner's answer bytes.
func (r *Resolver) heavy(ctx context.Context, ownerID int64) (done func(), err error) {
	if err := r.RateLimits.AnswerRoom(ownerID); err != nil {
		return nil, err
	}
	leave, err := r.Heavy.Enter(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	return func() {
		leave()
		r.RateLimits.ChargeAnswer(ctx, ownerID, budget.Settle(ctx))
	}, nil
}

// runSearch answers one search of kind for the caller.
func (r *Resolver) runSearch(ctx context.Context, kind search.Kind, a search.Args) (model.JSON, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return model.JSON{}, err
	}
	if a.Scroll != nil && *a.Scroll != "" && a.SourceOnly != nil && *a.SourceOnly {
		// The _source array would drop the _scroll_id, leaving the scroll
		// unreachable. (REST streams a scroll and asks for the envelope.)
		return model.JSON{}, apierr.BadRequestf("sourceOnly cannot be used with scroll: the envelope carries the _scroll_id; measurementSearchScroll takes sourceOnly")
	}
	req, err := search.NewRequest(kind, a)
	if err != nil {
		return model.JSON{}, err
	}
	req.Scope.DataOwnerID, req.Scope.Slug = p.DataOwnerID, p.DataOwnerSlug
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return model.JSON{}, err
	}
	defer done()
	resp, err := r.Search.Search(ctx, req)
	if err != nil {
		return model.JSON{}, search.AsBadRequest(err)
	}
	return search.Answer(resp, a.SourceOnly), nil
}

// scrollNext answers the next page of one of the caller's scrolls.
func (r *Resolver) scrollNext(ctx context.Context, scrollID string, keepAlive *string, sourceOnly *bool) (model.JSON, error) {
	p, err := auth.Require(ctx, model.RoleViewer)
	if err != nil {
		return model.JSON{}, err
	}
	ka, err := search.ParseKeepAlive(keepAlive)
	if err != nil {
		return model.JSON{}, err
	}
	if ka == "" {
		ka = "1m"
	}
	done, err := r.heavy(ctx, p.DataOwnerID)
	if err != nil {
		return model.JSON{}, err
	}
	defer done()
	resp, err := r.Search.ScrollNext(ctx, p.DataOwnerID, scrollID, ka)
	if err != nil {
		return model.JSON{}, search.AsBadRequest(err)
	}
	return search.Answer(resp, sourceOnly), nil
}

// distinctIDs is ids without repeats, in first-seen order: requested in
// a resolve answer counts the distinct ids asked for, so updated equals
// requested exactly when every one of them was an active episode.
func distinctIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
