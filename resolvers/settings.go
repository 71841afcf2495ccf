package resolvers

import (
	"github.com/fleetgraph/fleetgraph/limits/ratelimit"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

func (r *Resolver) settingsOf(d store.DataOwner) model.DataOwnerSettings {
	return model.DataOwnerSettings{AiSystemPrompt: d.AiSystemPrompt, OfflineThresholdMinutes: d.OfflineThresholdMinutes,
		OfflineThresholdMinutesDefault:         store.DefaultOfflineThresholdMinutes,
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
