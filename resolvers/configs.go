package resolvers

import (
	"context"
	"fmt"
	"slices"

	"github.com/fleetgraph/fleetgraph/configdoc"
	"github.com/fleetgraph/fleetgraph/limits"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// loadConfig reads one of the data owner's configs of kind.
func (r *Resolver) loadConfig(ctx context.Context, ownerID int64, kind model.ConfigKind, id int64) (*model.MeasurementConfig, error) {
	c, err := r.Store.Config(ctx, ownerID, string(kind), id)
	if err != nil {
		return nil, err
	}
	return ptr(configOf(c)), nil
}

// assign assigns (or unassigns) the config to clients and client groups.
func (r *mutationResolver) assign(ctx context.Context, kind model.ConfigKind, id int64, input gqlmodel.ConfigAssignmentInput, assign bool) (*model.MeasurementConfig, error) {
	p, err := auth.Require(ctx, model.RoleEditor)
	if err != nil {
		return nil, err
	}
	fe := apierr.FieldErrors{}
	a := store.ConfigAssignment{ClientIDs: uniqueIDs(input.ClientIds), ClientGroupIDs: uniqueIDs(input.ClientGroupIds)}
	if len(a.ClientIDs) == 0 && len(a.ClientGroupIDs) == 0 {
		fe.Add("clientIds", "give clientIds or clientGroupIds (at least one id)")
	}
	for field, ids := range map[string][]int64{"clientIds": a.ClientIDs, "clientGroupIds": a.ClientGroupIDs} {
		if len(ids) > limits.MaxAssignmentIDs {
			fe.Add(field, fmt.Sprintf("must have at most %d ids", limits.MaxAssignmentIDs))
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if err := r.Store.AssignConfig(ctx, p.DataOwnerID, string(kind), id, a, assign); err != nil {
		return nil, err
	}
	return r.loadConfig(ctx, p.DataOwnerID, kind, id)
}

func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// importReport says what an import did: the study descriptions it made or
// reused, and how the services its credentials name are linked.
func (r *Resolver) importReport(ctx context.Context, ownerID int64, doc *configdoc.Doc, actions []store.StudyAction) (*gqlmodel.ConfigImportReport, error) {
	rep := &gqlmodel.ConfigImportReport{StudyDescriptions: []gqlmodel.StudyDescriptionImport{},
		ServiceCredentials: []gqlmodel.ServiceCredentialImport{}, Warnings: []string{}}
	for _, a := range actions {
		rep.StudyDescriptions = append(rep.StudyDescriptions, gqlmodel.StudyDescriptionImport{StudyID: a.StudyID,
			Action: a.Action, StudyDescriptionID: a.StudyDescriptionID, Name: a.Name,
			StudyDescriptionVersionID: a.StudyDescriptionVersionID, Revision: a.Revision, FromRevision: a.FromRevision})
	}
	if len(doc.Credentials) == 0 {
		return rep, nil
	}
	stored, err := r.Store.ServiceCredentials(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	for _, d := range doc.Dropped {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("credentials.%s: dropped; configs hold no secrets, a probe gets the stored service credential's", d))
	}
	for _, service := range doc.Credentials {
		item := gqlmodel.ServiceCredentialImport{Service: service, Action: "missing"}
		if i := slices.IndexFunc(stored, func(c store.ServiceCredential) bool { return c.Service == service }); i >= 0 {
			item.Action, item.ServiceCredentialID = "linked", &stored[i].ID
			item.Reason = ptr(fmt.Sprintf("service credential %q (%d) of service %q is delivered to probes", stored[i].Name, stored[i].ID, service))
		} else {
			msg := fmt.Sprintf("no service credential for service %q is stored; create one (POST /service_credentials) or probes get none", service)
			item.Reason = &msg
			rep.Warnings = append(rep.Warnings, "credentials."+service+": "+msg)
		}
		rep.ServiceCredentials = append(rep.ServiceCredentials, item)
	}
	return rep, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func configOf(c store.Config) model.MeasurementConfig {
	return model.MeasurementConfig{ID: c.ID, Kind: model.ConfigKind(c.Kind), Name: c.Name, Description: c.Description,
		ImportSource: c.ImportSource, IsDefault: c.IsDefault, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		DraftVersionID: c.DraftVersionID, PublishedVersionID: c.PublishedVersionID, DraftRevision: c.DraftRevision,
		PublishedRevision: c.PublishedRevision, Revisions: []model.ConfigRevision{}, DeliveredClients: []model.ConfigClient{},
		ClientGroups: []model.ConfigClientGroup{}, ScheduleConfigs: []model.ScheduleConfigRef{}, Warnings: []string{}}
}
