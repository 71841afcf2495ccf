package resolvers

import (
	"encoding/json"
	"time"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/ratelimit"
	"github.com/fleetgraph/fleetgraph/store"
)

// Converters from store rows to API types.

func convertAll[R, M any](rows []R, f func(R) M) []M {
	out := make([]M, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

func ispOf(i store.Isp) model.Isp {
	return model.Isp{ID: i.ID, Name: i.Name, Type: model.IspType(i.Type), AlternativeNames: i.AlternativeNames,
		AsNumbers: i.AsNumbers, Country: i.Country, IsVpn: i.IsVpn, Verified: i.Verified, CreatedAt: i.CreatedAt}
}

func contractOf(c store.IspContract) model.IspContract {
	return model.IspContract{ID: c.ID, IspID: c.IspID, ClientID: c.ClientID, UploadSpeed: c.UploadSpeed,
		DownloadSpeed: c.DownloadSpeed, MonthlyPrice: c.MonthlyPrice, Currency: c.Currency,
		AssumedTariff: c.AssumedTariff, ConnectionType: c.ConnectionType, Name: c.Name,
		ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil, IspName: c.IspName}
}

func capabilityOf(c store.Capability) model.Capability {
	return model.Capability{ID: c.ID, Name: c.Name, Comment: c.Comment,
		AllowedMeasurementTypes: c.AllowedMeasurementTypes, AllowedMeasurementSubjects: c.AllowedMeasurementSubjects,
		ForbiddenMeasurementTypes: c.ForbiddenMeasurementTypes, ForbiddenMeasurementSubjects: c.ForbiddenMeasurementSubjects}
}

func registrationKeyOf(k store.RegistrationKey) model.RegistrationKey {
	return model.RegistrationKey{ID: k.ID, CapabilityID: k.CapabilityID, RegistrationKey: k.RegistrationKey,
		Comment: k.Comment, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		NumRegistrationsLeft: k.NumRegistrationsLeft, UsageLimitDays: k.UsageLimitDays, Testing: k.Testing}
}

func clientOf(c store.Client) model.Client {
	m := model.Client{ID: c.ID, UUID: c.UUID, Type: c.Type, AccessLevel: model.AccessOwner, Label: c.Label,
		ExtraLabel: c.ExtraLabel, Tags: c.Tags, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		DisabledAt: c.DisabledAt, DisabledReason: c.DisabledReason, LastMeasurementAt: c.LastMeasurementAt,
		LastSeenAt: c.LastSeenAt, LastClientType: c.LastClientType, LastClientVersion: c.LastClientVersion,
		Offline: c.Offline, AnomaliesMuted: c.AnomaliesMuted, OfflineNotificationsMuted: c.OfflineNotificationsMuted,
		SystemHealthNotificationsMuted: c.SystemHealthNotificationsMuted, RegistrationKeyID: c.RegistrationKeyID,
		Configuration: model.ClientConfiguration{Managed: c.ConfigManaged, PublicConfigID: c.PublicConfigID,
			AutomatorConfigID: c.AutomatorConfigID}}
	if c.Shared {
		// A shared client's configuration belongs to its owner.
		m.AccessLevel = model.AccessShared
		m.Configuration = model.ClientConfiguration{}
		m.RegistrationKeyID = nil
	} else {
		managed := c.ConfigManaged
		m.ConfigManaged = &managed
	}
	return m
}

func groupOf(g store.ClientGroup) model.ClientGroup {
	return model.ClientGroup{ID: g.ID, Name: g.Name, CreatedAt: g.CreatedAt}
}

func configRefOf(c store.DeliveredConfig) *model.ConfigRef {
	return &model.ConfigRef{ID: c.ID, Name: c.Name, IsDefault: c.IsDefault}
}

// pendingEmailTTL is how long an e-mail change token stays usable.
const pendingEmailTTL = 48 * time.Hour

func userOf(u store.User) model.User {
	m := model.User{ID: u.ID, Email: u.Email, Username: u.Username, Role: model.Role(u.Role),
		FirstName: u.FirstName, LastName: u.LastName, AiUsageAccepted: u.AiUsageAccepted,
		AiCustomPrompt: u.AiCustomPrompt, LastVisitedDashboardVersion: u.LastVisitedDashboardVersion,
		DashboardWhatsNewDisabled: u.DashboardWhatsNewDisabled, PendingEmail: u.PendingEmail,
		PendingEmailTokenSentAt: u.PendingEmailTokenSentAt}
	if u.PendingEmail != nil {
		state := "active"
		if u.PendingEmailTokenSentAt == nil || time.Since(*u.PendingEmailTokenSentAt) > pendingEmailTTL {
			state = "expired"
		}
		m.PendingEmailState = &state
	}
	_ = json.Unmarshal(u.NotificationConfig, &m.NotificationConfig) // written by us, always an object
	return m
}

func roleOf(s *string) *model.Role {
	if s == nil {
		return nil
	}
	r := model.Role(*s)
	return &r
}

func adminKeyOf(k store.APIKey) model.ClientAdminAPIKey {
	var uid int64
	if k.UserID != nil {
		uid = *k.UserID
	}
	return model.ClientAdminAPIKey{ID: k.ID, Name: k.Name, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		KeyPreview: k.KeyPreview, EffectiveRole: roleOf(k.EffectiveRole), LastUsedAt: k.LastUsedAt,
		CreatedAt: k.CreatedAt, ClientAdminUserID: uid}
}

func exportKeyOf(k store.APIKey) model.ExportAPIKey {
	return model.ExportAPIKey{ID: k.ID, Name: k.Name, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		KeyPreview: k.KeyPreview}
}

func credentialOf(c store.ServiceCredential) model.ServiceCredential {
	return model.ServiceCredential{ID: c.ID, Name: c.Name, Service: c.Service, Username: c.Username,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, PasswordSet: len(c.SealedPassword) > 0}
}

// DefaultOfflineThresholdMinutes applies when a data owner set none.
const DefaultOfflineThresholdMinutes = store.DefaultOfflineThresholdMinutes

func (r *Resolver) settingsOf(d store.DataOwner) model.DataOwnerSettings {
	return model.DataOwnerSettings{AiSystemPrompt: d.AiSystemPrompt, OfflineThresholdMinutes: d.OfflineThresholdMinutes,
		OfflineThresholdMinutesDefault:         DefaultOfflineThresholdMinutes,
		RetentionDays:                          d.RetentionDays,
		RetentionDaysDefault:                   r.RetentionDaysDefault,
		ClientOfflineDetectionEnabled:          d.ClientOfflineDetectionEnabled,
		ClientDegradedDetectionEnabled:         d.ClientDegradedDetectionEnabled,
		StudyFailureDetectionEnabled:           d.StudyFailureDetectionEnabled,
		ClientOfflineDetectionEnabledOnServer:  r.OfflineDetectionOnServer,
		ClientDegradedDetectionEnabledOnServer: r.DegradedDetectionOnServer,
		StudyFailureDetectionEnabledOnServer:   r.StudyFailureOnServer,
		AnalyticsNewClients:                    d.AnalyticsNewClients,
		AnalyticsNewClientsDefault:             webClientsDefault(r.RateLimits.WebClientBound()),
		AnalyticsNewClientsPeriod:              r.RateLimits.WebClientBound().BoundPeriod().String()}
}

// webClientsDefault is the server's bound on new web clients (nil: none).
func webClientsDefault(bound ratelimit.Rate) *int64 {
	if n := bound.DefaultLimit(); n >= 0 {
		return ptr(int64(n))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// measurementOf is a measurement document as the API answers it.
func measurementOf(d store.Document) model.Measurement {
	return model.Measurement{ID: d.DocID, Document: documentJSON(d.Doc)}
}

// anomalyEventOf is an anomaly event document as the API answers it.
// Its typed fields are the document's, nil where absent or of another
// type; MeasurementIDs are the first maxEventMeasurements of
// measurement_ids.
func anomalyEventOf(d store.Document) model.AnomalyEvent {
	a := model.AnomalyEvent{ID: d.DocID, Document: documentJSON(d.Doc), CreatedAt: d.CreatedAt}
	m, _ := a.Document.Value.(map[string]any)
	text := func(k string) *string {
		if s, ok := m[k].(string); ok {
			return &s
		}
		return nil
	}
	at := func(k string) *time.Time {
		if s := text(k); s != nil {
			if t, err := store.ParseTime(*s); err == nil {
				return &t
			}
		}
		return nil
	}
	a.RuleID, a.Status, a.Severity, a.Subject = text("rule_id"), text("status"), text("severity"), text("subject")
	a.MeasurementType, a.Metric, a.DetectionPass = text("measurement_type"), text("metric"), text("detection_pass")
	a.FirstSeenAt, a.LastSeenAt, a.ResolvedAt = at("first_seen_at"), at("last_seen_at"), at("resolved_at")
	if n, ok := m["value"].(json.Number); ok {
		if v, err := n.Float64(); err == nil {
			a.Value = &v
		}
	}
	ids, _ := m["measurement_ids"].([]any)
	for _, id := range ids[:min(len(ids), maxEventMeasurements)] {
		switch v := id.(type) {
		case string:
			a.MeasurementIDs = append(a.MeasurementIDs, v)
		case json.Number:
			a.MeasurementIDs = append(a.MeasurementIDs, v.String())
		}
	}
	return a
}

// maxEventMeasurements caps the measurements AnomalyEvent.measurements
// answers.
const maxEventMeasurements = 100
