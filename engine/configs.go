package engine

import (
	"encoding/json"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

func configVersionOf(v store.ConfigVersion) model.ConfigVersion {
	return model.ConfigVersion{ID: v.ID, Revision: v.Revision, Data: model.JSON{Value: json.RawMessage(v.Data)},
		DataHash: v.DataHash, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, CreatedByID: v.CreatedByID,
		CreatedByName: v.CreatedByName, PublishedAt: v.PublishedAt, PublishedByID: v.PublishedByID,
		PublishedByName: v.PublishedByName, Published: v.State == "published", StudyCount: v.StudyCount,
		Studies: []model.ConfigStudy{}}
}

func configRevisionOf(v store.ConfigVersion) model.ConfigRevision {
	return model.ConfigRevision{ID: v.ID, Revision: v.Revision, State: v.State, DataHash: v.DataHash,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, CreatedByID: v.CreatedByID, CreatedByName: v.CreatedByName,
		PublishedAt: v.PublishedAt, PublishedByID: v.PublishedByID, PublishedByName: v.PublishedByName,
		Published: v.State == "published", StudyCount: v.StudyCount}
}

func configStudyOf(s store.VersionStudy) model.ConfigStudy {
	return model.ConfigStudy{ID: s.ID, Position: s.Position, StudyDescriptionVersionID: s.StudyDescriptionVersionID,
		StudyDescriptionID: s.StudyDescriptionID, Revision: s.Revision, LatestRevision: s.LatestRevision,
		LatestVersionID: s.LatestVersionID, Name: s.Name, StudyID: s.StudyID, StudyType: s.StudyType,
		Subject: s.Subject, InternalID: s.InternalID}
}

func configClientOf(c store.ConfigClient) model.ConfigClient {
	return model.ConfigClient{ID: c.ID, UUID: c.UUID, Label: c.Label, LastSeenAt: c.LastSeenAt}
}

func configGroupOf(g store.ConfigGroup) model.ConfigClientGroup {
	return model.ConfigClientGroup{ID: g.ID, Name: g.Name}
}

func scheduleConfigRefOf(s store.ScheduleConfigRef) model.ScheduleConfigRef {
	ids := s.StudyIDs
	if ids == nil {
		ids = []string{}
	}
	return model.ScheduleConfigRef{ID: s.ID, Name: s.Name, IsDefault: s.IsDefault, DraftRevision: s.DraftRevision,
		PublishedRevision: s.PublishedRevision, StudyIDs: ids}
}

// loadConfigVersions attaches every config's revisions and its draft and
// published versions, from one read of its versions.
var loadConfigVersions = queued(always(configID), store.ConfigVersionsByConfig, func(parents []any, rows []store.ConfigVersion) {
	by := map[int64][]store.ConfigVersion{}
	for _, v := range rows {
		by[v.ConfigID] = append(by[v.ConfigID], v)
	}
	for _, p := range parents {
		c := p.(*model.MeasurementConfig)
		vs := by[c.ID]
		c.Revisions = ConvertAll(vs, configRevisionOf)
		c.DraftVersion, c.PublishedVersion = nil, nil
		for _, v := range vs {
			switch v.State {
			case "draft":
				c.DraftVersion = new(configVersionOf(v))
			case "published":
				c.PublishedVersion = new(configVersionOf(v))
			}
		}
	}
})

// loadConfigWarnings attaches every config's warnings.
var loadConfigWarnings = queued(always(configID), store.ConfigWarnings, func(parents []any, rows []store.ConfigWarning) {
	by := map[int64][]string{}
	for _, w := range rows {
		by[w.ConfigID] = append(by[w.ConfigID], w.Message)
	}
	for _, p := range parents {
		c := p.(*model.MeasurementConfig)
		c.Warnings = append([]string{}, by[c.ID]...)
	}
})

func configID(c *model.MeasurementConfig) int64 { return c.ID }

// publicConfigID keys public configs only (schedule configs have no
// schedule configs of their own).
func publicConfigID(c *model.MeasurementConfig) (int64, bool) {
	return c.ID, c.Kind == model.ConfigPublic
}

func configVersionID(v *model.ConfigVersion) int64 { return v.ID }
