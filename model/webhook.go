package model

import "time"

// Webhook is an outbound webhook endpoint (schema/webhook.graphqls).
type Webhook struct {
	ID                  int64
	Name                string
	Description         *string
	URL                 string
	PayloadFormat       string
	FormatOptions       WebhookFormatOptions
	EventTypes          []string
	Filters             WebhookFilters
	Enabled             bool
	Active              bool
	Headers             JSON
	SecretHint          string
	AutoDisabledAt      *time.Time
	AutoDisabledReason  *string
	ConsecutiveFailures int64
	LastDeliveryAt      *time.Time
	LastSuccessAt       *time.Time
	LastFailureAt       *time.Time
	LastResponseStatus  *int64
	LastError           *string
	CreatedByID         *int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Secret              *string

	// Attached by the edges below a query (engine/edges.go).
	Connections Connections
}

// WebhookFormatOptions are the mentions of chat-formatted deliveries.
type WebhookFormatOptions struct {
	MentionUsers   []string `json:"mention_users"`
	MentionGroups  []string `json:"mention_groups"`
	MentionChannel *string  `json:"mention_channel"`
}

// WebhookFilters is what an event must match to be delivered.
type WebhookFilters struct {
	ClientTags       []string `json:"client_tags"`
	MeasurementTypes []string `json:"measurement_types"`
	MinSeverity      *string  `json:"min_severity"`
	HealthMetrics    []string `json:"health_metrics"`
}

// WebhookDelivery is one event for one webhook.
type WebhookDelivery struct {
	ID                  int64
	WebhookEndpointID   int64
	EventID             string
	EventType           string
	Status              string
	Attempts            int64
	MaxAttempts         int64
	NextAttemptAt       *time.Time
	ResponseStatus      *int64
	ErrorMessage        *string
	DurationMs          *int64
	DeliveredAt         *time.Time
	Manual              bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Payload             JSON
	ResponseBody        *string
	RenderedBody        string
	PayloadFormat       string
	RenderedContentType string
}

// WebhookDeliveryPage is a page of a webhook's deliveries.
type WebhookDeliveryPage struct {
	Items      []WebhookDelivery
	Pagination WebhookDeliveryPagination
}

// WebhookDeliveryPagination says which page it is of how many deliveries.
type WebhookDeliveryPagination struct {
	Page, PerPage, TotalCount int64
}

// WebhookCatalogue lists the event types webhooks subscribe to.
type WebhookCatalogue struct {
	Groups           []WebhookEventGroup
	Filters          []WebhookFilterInfo
	Severities       []string
	HealthMetrics    []string
	MeasurementTypes []string
	EventTypes       []WebhookEventType
}

// WebhookEventGroup groups event types in the catalogue.
type WebhookEventGroup struct{ Key, Label string }

// WebhookFilterInfo describes a filter key.
type WebhookFilterInfo struct{ Key, Description string }

// WebhookEventType is one event type of the catalogue.
type WebhookEventType struct {
	Type, Group, Description string
	Filters                  []string
	Sample                   JSON
}

// WebhookConnection is one page of webhooks.
type WebhookConnection struct {
	Edges      []WebhookEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// WebhookEdge is one of a page's webhooks.
type WebhookEdge struct {
	Cursor string
	Node   *Webhook
}

// WebhookDeliveryConnection is one page of webhook deliveries.
type WebhookDeliveryConnection struct {
	Edges      []WebhookDeliveryEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// WebhookDeliveryEdge is one of a page's webhook deliveries.
type WebhookDeliveryEdge struct {
	Cursor string
	Node   *WebhookDelivery
}
