package resolvers

import (
	"context"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

func (r *Resolver) createKey(ctx context.Context, p *auth.Principal, kind auth.Kind, name *string, validUntil *time.Time, role *string) (store.APIKey, string, error) {
	fe := apierr.FieldErrors{}
	name = text(fe, "name", name, false)
	future(fe, "validUntil", validUntil)
	if err := fe.Err(); err != nil {
		return store.APIKey{}, "", err
	}
	plain, rec := auth.NewKeyRecord(r.Sealer, kind, p.UserID, name, validUntil, role)
	k, err := r.Store.CreateAPIKey(ctx, p.DataOwnerID, rec)
	return k, plain, err
}

func (r *Resolver) listKeys(ctx context.Context, kind auth.Kind) ([]store.APIKey, error) {
	p, err := auth.Require(ctx, model.RoleAdmin)
	if err != nil {
		return nil, err
	}
	return r.Store.APIKeys(ctx, p.DataOwnerID, string(kind))
}

// keyPage reads a page of the caller's data owner's keys of kind.
func (r *Resolver) keyPage(kind auth.Kind) func(context.Context, int64, store.IDPage, bool) (store.PagedList[store.APIKey], error) {
	return func(ctx context.Context, ownerID int64, p store.IDPage, count bool) (store.PagedList[store.APIKey], error) {
		return r.Store.APIKeyPage(ctx, ownerID, string(kind), p, count)
	}
}

func (r *Resolver) getKey(ctx context.Context, kind auth.Kind, id int64) (store.APIKey, error) {
	p, err := auth.Require(ctx, model.RoleAdmin)
	if err != nil {
		return store.APIKey{}, err
	}
	return r.Store.APIKey(ctx, p.DataOwnerID, string(kind), id)
}

// deleteKey removes a key; an admin cannot remove a key that acts above
// their own role (an org_admin's key, say).
func (r *Resolver) deleteKey(ctx context.Context, kind auth.Kind, id int64) (bool, error) {
	p, err := auth.Require(ctx, model.RoleAdmin)
	if err != nil {
		return false, err
	}
	if kind == auth.KindClientAdmin {
		keyRole, err := r.keyRole(ctx, p.DataOwnerID, id)
		if err != nil {
			return false, err
		}
		if !p.Role.AtLeast(keyRole) {
			return false, forbidden("you cannot delete a key that acts as %s, above your own role", keyRole)
		}
	}
	return true, r.Store.DeleteAPIKey(ctx, p.DataOwnerID, string(kind), id)
}

// keyRole is the role an admin key acts with: its creator's role capped by
// its effective_role.
func (r *Resolver) keyRole(ctx context.Context, ownerID, id int64) (model.Role, error) {
	k, err := r.Store.APIKey(ctx, ownerID, string(auth.KindClientAdmin), id)
	if err != nil {
		return "", err
	}
	role := model.RoleOrgAdmin
	if k.UserID != nil {
		u, err := r.Store.User(ctx, ownerID, *k.UserID)
		if err != nil {
			return "", err
		}
		role = model.Role(u.Role)
	}
	if k.EffectiveRole != nil {
		role = role.Min(model.Role(*k.EffectiveRole))
	}
	return role, nil
}

func (r *Resolver) analyticsKeyOf(k store.APIKey) (*model.ClientAnalyticsAPIKey, error) {
	plain, err := r.Sealer.Open(k.SealedKey)
	if err != nil {
		return nil, err
	}
	return &model.ClientAnalyticsAPIKey{ID: k.ID, Name: k.Name, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil, APIKey: plain}, nil
}
