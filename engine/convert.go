package engine

import (
	"encoding/json"
	"time"

	"github.com/fleetgraph/fleetgraph/fleethealth"
	"github.com/fleetgraph/fleetgraph/limits"

	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Converters from store rows to API types.

func ConvertAll[R, M any](rows []R, f func(R) M) []M {
	out := make([]M, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

func IspOf(i store.Isp) model.Isp {
	return model.Isp{ID: i.ID, Name: i.Name, Type: model.IspType(i.Type), AlternativeNames: i.AlternativeNames,
		AsNumbers: i.AsNumbers, Country: i.Country, IsVpn: i.IsVpn, Verified: i.Verified, CreatedAt: i.CreatedAt}
}

func ContractOf(c store.IspContract) model.IspContract {
	return model.IspContract{ID: c.ID, IspID: c.IspID, ClientID: c.ClientID, UploadSpeed: c.UploadSpeed,
		DownloadSpeed: c.DownloadSpeed, MonthlyPrice: c.MonthlyPrice, Currency: c.Currency,
		AssumedTariff: c.AssumedTariff, ConnectionType: c.ConnectionType, Name: c.Name,
		ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil, IspName: c.IspName}
}

func CapabilityOf(c store.Capability) model.Capability {
	return model.Capability{ID: c.ID, Name: c.Name, Comment: c.Comment,
		AllowedMeasurementTypes: c.AllowedMeasurementTypes, AllowedMeasurementSubjects: c.AllowedMeasurementSubjects,
		ForbiddenMeasurementTypes: c.ForbiddenMeasurementTypes, ForbiddenMeasurementSubjects: c.ForbiddenMeasurementSubjects}
}

func RegistrationKeyOf(k store.RegistrationKey) model.RegistrationKey {
	return model.RegistrationKey{ID: k.ID, CapabilityID: k.CapabilityID, RegistrationKey: k.RegistrationKey,
		Comment: k.Comment, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		NumRegistrationsLeft: k.NumRegistrationsLeft, UsageLimitDays: k.UsageLimitDays, Testing: k.Testing}
}

func ClientOf(c store.Client) model.Client {
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

func GroupOf(g store.ClientGroup) model.ClientGroup {
	return model.ClientGroup{ID: g.ID, Name: g.Name, CreatedAt: g.CreatedAt}
}

func configRefOf(c store.DeliveredConfig) *model.ConfigRef {
	return &model.ConfigRef{ID: c.ID, Name: c.Name, IsDefault: c.IsDefault}
}

// pendingEmailTTL is how long an e-mail change token stays usable.
const pendingEmailTTL = 48 * time.Hour

func UserOf(u store.User) model.User {
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

func AdminKeyOf(k store.APIKey) model.ClientAdminAPIKey {
	var uid int64
	if k.UserID != nil {
		uid = *k.UserID
	}
	return model.ClientAdminAPIKey{ID: k.ID, Name: k.Name, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		KeyPreview: k.KeyPreview, EffectiveRole: roleOf(k.EffectiveRole), LastUsedAt: k.LastUsedAt,
		CreatedAt: k.CreatedAt, ClientAdminUserID: uid}
}

func ExportKeyOf(k store.APIKey) model.ExportAPIKey {
	return model.ExportAPIKey{ID: k.ID, Name: k.Name, ValidFrom: k.ValidFrom, ValidUntil: k.ValidUntil,
		KeyPreview: k.KeyPreview}
}

func CredentialOf(c store.ServiceCredential) model.ServiceCredential {
	return model.ServiceCredential{ID: c.ID, Name: c.Name, Service: c.Service, Username: c.Username,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, PasswordSet: len(c.SealedPassword) > 0}
}

// Deref is *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// MeasurementOf is a measurement document as the API answers it.
func MeasurementOf(d store.Document) model.Measurement {
	return model.Measurement{ID: d.DocID, Document: documentJSON(d.Doc)}
}

// AnomalyEventOf is an anomaly event document as the API answers it.
// Its typed fields are the document's, nil where absent or of another
// type; MeasurementIDs are the first limits.MaxEventMeasurements of
// measurement_ids.
func AnomalyEventOf(d store.Document) model.AnomalyEvent {
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
	for _, id := range ids[:min(len(ids), limits.MaxEventMeasurements)] {
		switch v := id.(type) {
		case string:
			a.MeasurementIDs = append(a.MeasurementIDs, v)
		case json.Number:
			a.MeasurementIDs = append(a.MeasurementIDs, v.String())
		}
	}
	return a
}

func HealthStateOf(h store.HealthState) model.ClientHealthState {
	reasons := make([]model.HealthReason, len(h.Reasons))
	for i, r := range h.Reasons {
		reasons[i] = model.HealthReason{Metric: r.Metric, Percent: r.Percent, Severity: model.HealthSeverity(r.Severity)}
	}
	sum := func(m string) model.HealthMetricSummary {
		s := h.MetricSummary[m]
		return model.HealthMetricSummary{Percent: s.Percent, WarningPercent: s.WarningPercent, CriticalPercent: s.CriticalPercent}
	}
	sn := h.Snapshot
	return model.ClientHealthState{ClientID: h.ClientID, ClientUUID: h.ClientUUID, ClientLabel: h.ClientLabel,
		State: model.HealthState(h.State), Reasons: reasons,
		MetricSummary: model.HealthMetricSummaries{CPU: sum(fleethealth.MetricCPU), Memory: sum(fleethealth.MetricMemory),
			Filesystem: sum(fleethealth.MetricFilesystem)},
		EvaluatedAt: h.EvaluatedAt,
		ThresholdSnapshot: model.HealthThresholdSnapshot{CPUWarningPercent: int64(sn.CPUWarningPercent),
			CPUCriticalPercent: int64(sn.CPUCriticalPercent), MemoryWarningPercent: int64(sn.MemoryWarningPercent),
			MemoryCriticalPercent: int64(sn.MemoryCriticalPercent), FilesystemWarningPercent: int64(sn.FilesystemWarningPercent),
			FilesystemCriticalPercent: int64(sn.FilesystemCriticalPercent), OfflineThresholdMinutes: int64(sn.OfflineThresholdMinutes),
			ClientDegradedDetectionEnabled: sn.DegradedDetectionEnabled},
		ThresholdsOutdated: h.ThresholdsOutdated, SourceSystemStatusRecordID: h.SourceRecordID,
		NetworkTransport: h.NetworkTransport}
}

func SystemStatusOf(s store.SystemStatus) model.SystemStatusRecord {
	fss := make([]model.SystemStatusFilesystem, len(s.Filesystems))
	for i, f := range s.Filesystems {
		fss[i] = model.SystemStatusFilesystem{Writable: f.Writable, ValidSampleCount: f.ValidSampleCount,
			Device: f.Device, Mount: f.Mount, Type: f.Type, TotalBytes: f.TotalBytes,
			MinimumAvailableBytes: f.MinimumAvailableBytes, FinalAvailableBytes: f.FinalAvailableBytes,
			AveragePercent: f.AveragePercent, MaximumPercent: f.MaximumPercent, FinalPercent: f.FinalPercent}
	}
	cds := make([]model.JSON, len(s.ConnectionDetails))
	for i, c := range s.ConnectionDetails {
		cds[i] = model.JSON{Value: c}
	}
	return model.SystemStatusRecord{ID: s.ID, ClientUUID: Deref(s.ClientUUID), RunID: s.RunID,
		StudyIds: orEmpty(s.StudyIDs), MeasurementIds: orEmpty(s.MeasurementIDs),
		StartedAt: s.StartedAt, FinishedAt: s.FinishedAt, Platform: s.Platform, RuntimeScope: s.RuntimeScope,
		SampleIntervalSeconds: Deref(s.SampleIntervalSeconds), ConnectionDetailTraceID: s.ConnectionDetailTraceID,
		CPUValidSampleCount: Deref(s.CPUValidSampleCount), CPUAveragePercent: s.CPUAveragePercent,
		CPUMaxPercent: s.CPUMaxPercent, CPUFinalPercent: s.CPUFinalPercent,
		MemoryValidSampleCount: Deref(s.MemoryValidSampleCount), MemoryEffectiveTotalBytes: s.MemoryEffectiveTotalBytes,
		MemoryAveragePercent: s.MemoryAveragePercent, MemoryMaxPercent: s.MemoryMaxPercent,
		MemoryFinalPercent: s.MemoryFinalPercent, Filesystems: fss, ConnectionDetails: cds,
		CollectionErrors: orEmpty(s.CollectionErrors), CreatedAt: s.CreatedAt}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// DeliveryOf converts a stored delivery.
func DeliveryOf(d store.WebhookDelivery) model.WebhookDelivery {
	var payload any
	_ = json.Unmarshal(d.Payload, &payload) // jsonb: valid
	return model.WebhookDelivery{ID: d.ID, WebhookEndpointID: d.WebhookEndpointID, EventID: d.EventID,
		EventType: d.EventType, Status: d.Status, Attempts: d.Attempts, MaxAttempts: d.MaxAttempts,
		NextAttemptAt: d.NextAttemptAt, ResponseStatus: d.ResponseStatus, ErrorMessage: d.ErrorMessage,
		DurationMs: d.DurationMs, DeliveredAt: d.DeliveredAt, Manual: d.Manual, CreatedAt: d.CreatedAt,
		UpdatedAt: d.UpdatedAt, Payload: model.JSON{Value: payload}, ResponseBody: d.ResponseBody,
		RenderedBody: d.RenderedBody, PayloadFormat: d.PayloadFormat, RenderedContentType: d.RenderedContentType}
}
