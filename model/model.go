// Package model holds the GraphQL output types that gqlgen binds to. They are
// the API's view of the data; store rows are converted into them by the
// resolvers. Unexported-to-GraphQL fields (ids of related records) let the
// field resolvers reach the dataloaders.
package model

import (
	"fmt"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/rawjson"
)

// JSON is a free-form JSON value passed through untouched.
type JSON struct{ Value any }

// MarshalGQL writes the value as json.Marshal does (null when it cannot),
// writing the stored documents in it (rawjson.Raw) as they are rather than
// validating and copying them again.
func (j JSON) MarshalGQL(w io.Writer) {
	if err := rawjson.Write(w, j.Value); err != nil {
		_, _ = w.Write([]byte("null"))
	}
}

// UnmarshalGQL accepts any JSON value.
func (j *JSON) UnmarshalGQL(v any) error {
	j.Value = v
	return nil
}

// Viewer describes the caller.
type Viewer struct {
	DataOwner string
	UserID    *int64
	Role      Role
	KeyKind   string
}

type Isp struct {
	ID               int64
	Name             string
	Type             IspType
	AlternativeNames []string
	AsNumbers        []string
	Country          string
	IsVpn            *bool
	Verified         *bool
	CreatedAt        time.Time

	// Attached by the edges below a query (engine/edges.go).
	IspContractsCount int64
	IspDetailsCount   int64
	IspContracts      []IspContract
	Connections       Connections
}

type IspContract struct {
	ID             int64
	IspID          int64
	ClientID       int64
	UploadSpeed    *int64
	DownloadSpeed  *int64
	MonthlyPrice   *float64
	Currency       *string
	AssumedTariff  *string
	ConnectionType *string
	Name           string
	ValidFrom      time.Time
	ValidUntil     *time.Time
	// IspName is read with the contract (store.IspContract).
	IspName string

	// Attached by the edges below a query (engine/edges.go).
	Isp    *Isp
	Client *Client
}

// ClientUUID is the UUID of the contract's client.
func (c *IspContract) ClientUUID() *string {
	if c.Client == nil {
		return nil
	}
	return &c.Client.UUID
}

// ClientLabel is the label of the contract's client.
func (c *IspContract) ClientLabel() *string {
	if c.Client == nil {
		return nil
	}
	return c.Client.Label
}

type Capability struct {
	ID                           int64
	Name                         string
	Comment                      *string
	AllowedMeasurementTypes      []string
	AllowedMeasurementSubjects   []string
	ForbiddenMeasurementTypes    []string
	ForbiddenMeasurementSubjects []string

	// Attached by the edges below a query (engine/edges.go).
	RegistrationKeysCount int64
	RegistrationKeys      []RegistrationKey
	Connections           Connections
}

type RegistrationKey struct {
	ID                   int64
	CapabilityID         int64
	RegistrationKey      string
	Comment              *string
	ValidFrom            time.Time
	ValidUntil           *time.Time
	NumRegistrationsLeft int64
	UsageLimitDays       *int64
	Testing              bool

	// Attached by the edges below a query (engine/edges.go).
	ClientsCount int64
	Capability   *Capability
	Connections  Connections
}

type Client struct {
	ID                             int64
	UUID                           string
	Type                           string
	AccessLevel                    AccessLevel
	Label                          *string
	ExtraLabel                     *string
	Tags                           []string
	CreatedAt                      time.Time
	UpdatedAt                      time.Time
	DisabledAt                     *time.Time
	DisabledReason                 *string
	LastMeasurementAt              *time.Time
	LastSeenAt                     *time.Time
	LastClientType                 *string
	LastClientVersion              *string
	ConfigManaged                  *bool
	AnomaliesMuted                 bool
	OfflineNotificationsMuted      bool
	SystemHealthNotificationsMuted bool
	Configuration                  ClientConfiguration

	// RegistrationKeyID is the key the client registered with, if any.
	RegistrationKeyID *int64

	// Attached by the edges below a query (engine/edges.go).
	ClientGroups             []ClientGroup
	RegistrationKey          *RegistrationKey
	IspContracts             []IspContract
	CurrentIspContract       *IspContract
	DeliveredPublicConfig    *ConfigRef
	DeliveredAutomatorConfig *ConfigRef
	LatestSystemStatusRecord *SystemStatusRecord
	// Offline is read with the client: not seen within the data owner's
	// offline threshold; nil when never seen or while the data owner's
	// client offline detection is off.
	Offline *bool
	// Pages are the measurement pages asked for, by their arguments
	// (loaders.PageArgs.Key): measurements takes arguments, so each alias
	// may ask for another page.
	Pages            map[string]*MeasurementConnection
	Health           *ClientHealthState
	OpenAnomalyCount int64
	// Connections are the pages of the connection fields that take
	// arguments (anomalyEvents, systemStatusRecords), by field and
	// arguments (engine/paged.go).
	Connections Connections
}

// Connections are the pages of an object's connection fields that take
// arguments, attached by the edges below a query, by field and arguments:
// each alias may ask for another page.
type Connections map[string]any

type ClientConfiguration struct {
	Managed           bool
	PublicConfigID    *int64
	AutomatorConfigID *int64
}

type ConfigRef struct {
	ID        int64
	Name      string
	IsDefault bool
}

type ClientGroup struct {
	ID        int64
	Name      string
	CreatedAt time.Time

	// Attached by the edges below a query (engine/edges.go).
	Clients     []Client
	Connections Connections
}

type LabelAvailability struct {
	Available bool
	Label     string
}

type User struct {
	ID                          int64
	Email                       string
	Username                    string
	Role                        Role
	FirstName                   *string
	LastName                    *string
	AiUsageAccepted             *bool
	AiCustomPrompt              *string
	LastVisitedDashboardVersion *string
	DashboardWhatsNewDisabled   bool
	PendingEmail                *string
	PendingEmailTokenSentAt     *time.Time
	PendingEmailState           *string
	NotificationConfig          NotificationConfig

	// Attached by the edges below a query (engine/edges.go).
	APIKeys []ClientAdminAPIKey
}

// NotificationConfig mirrors the stored JSON object; absent keys are nil.
type NotificationConfig struct {
	AnomalyEvents                    *bool   `json:"anomaly_events,omitempty"`
	ClientOffline                    *bool   `json:"client_offline,omitempty"`
	ClientDegraded                   *bool   `json:"client_degraded,omitempty"`
	StudyExecutionFailures           *bool   `json:"study_execution_failures,omitempty"`
	AnomalyEventsFrequency           *string `json:"anomaly_events_frequency,omitempty"`
	AnomalyEventsDigestHours         *int64  `json:"anomaly_events_digest_hours,omitempty"`
	AnomalyEventsDigestIntervalUnit  *string `json:"anomaly_events_digest_interval_unit,omitempty"`
	AnomalyEventsDigestIntervalCount *int64  `json:"anomaly_events_digest_interval_count,omitempty"`
	AnomalyEventsDigestAtTime        *string `json:"anomaly_events_digest_at_time,omitempty"`
	AnomalyEventsDigestDayOfWeek     *int64  `json:"anomaly_events_digest_day_of_week,omitempty"`
}

type ClientAdminAPIKey struct {
	ID                int64
	Name              *string
	ValidFrom         time.Time
	ValidUntil        time.Time
	KeyPreview        string
	EffectiveRole     *Role
	LastUsedAt        *time.Time
	CreatedAt         time.Time
	ClientAdminUserID int64
	APIKey            *string
}

type ClientAnalyticsAPIKey struct {
	ID         int64
	Name       *string
	ValidFrom  time.Time
	ValidUntil time.Time
	APIKey     string
}

type ExportAPIKey struct {
	ID         int64
	Name       *string
	ValidFrom  time.Time
	ValidUntil time.Time
	KeyPreview string
	APIKey     *string
}

type ServiceCredential struct {
	ID          int64
	Name        string
	Service     string
	Username    *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	PasswordSet bool
}

type DataOwnerSettings struct {
	AiSystemPrompt                         *string
	OfflineThresholdMinutes                *int64
	OfflineThresholdMinutesDefault         int64
	RetentionDays                          *int64
	RetentionDaysDefault                   *int64
	ClientOfflineDetectionEnabled          bool
	ClientDegradedDetectionEnabled         bool
	StudyFailureDetectionEnabled           bool
	ClientOfflineDetectionEnabledOnServer  bool
	ClientDegradedDetectionEnabledOnServer bool
	StudyFailureDetectionEnabledOnServer   bool
	AnalyticsNewClients                    *int64
	AnalyticsNewClientsDefault             *int64
	AnalyticsNewClientsPeriod              string
}

type AiAssistantStatus struct {
	Enabled   bool
	DataOwner string
}

// Enums are defined here (not generated) so store and auth can share them.

type Role string

const (
	RoleOrgAdmin Role = "org_admin"
	RoleAdmin    Role = "admin"
	RoleEditor   Role = "editor"
	RoleViewer   Role = "viewer"
)

var roleRank = map[Role]int{RoleViewer: 1, RoleEditor: 2, RoleAdmin: 3, RoleOrgAdmin: 4}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// AtLeast reports whether r includes the rights of min.
func (r Role) AtLeast(min Role) bool { return roleRank[r] >= roleRank[min] && r.Valid() }

// Min returns the lower of two roles.
func (r Role) Min(o Role) Role {
	if roleRank[o] < roleRank[r] {
		return o
	}
	return r
}

func (r Role) String() string { return string(r) }

func (r *Role) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok || !Role(s).Valid() {
		return fmt.Errorf("%v is not a valid Role", v)
	}
	*r = Role(s)
	return nil
}

func (r Role) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(r)) }

type IspType string

var ispTypes = map[IspType]bool{"fixed": true, "mobile": true, "satellite": true, "other": true}

// Valid reports whether t is a known ISP type.
func (t IspType) Valid() bool { return ispTypes[t] }

func (t IspType) String() string { return string(t) }

func (t *IspType) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok || !IspType(s).Valid() {
		return fmt.Errorf("%v is not a valid IspType", v)
	}
	*t = IspType(s)
	return nil
}

func (t IspType) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(t)) }

type AccessLevel string

const (
	AccessOwner  AccessLevel = "owner"
	AccessShared AccessLevel = "shared"
)

func (a AccessLevel) String() string { return string(a) }

func (a *AccessLevel) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if s != "owner" && s != "shared" {
		return fmt.Errorf("%v is not a valid AccessLevel", v)
	}
	*a = AccessLevel(s)
	return nil
}

func (a AccessLevel) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(a)) }

// MarshalStrictString writes a GraphQL String.
func MarshalStrictString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalStrictString accepts only JSON strings for String inputs, so that
// GraphQL rejects a number where text belongs, as REST does (gqlgen's
// default String coerces numbers and booleans into text).
func UnmarshalStrictString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", &InputError{Msg: "must be a string"}
	}
	return s, nil
}

// InputError is a bad input value found while decoding GraphQL arguments.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Measurement is a measurement document of the data owner.
type Measurement struct {
	ID       string
	Document JSON

	// Attached by the edges below a query (engine/edges.go).
	Client                                  *Client
	Reports                                 []ClientReport
	P1203ClientReport                       *JSON
	NetworkPerformanceReport                *JSON
	LightweightVideoPlayerPerformanceReport *JSON
}

// ClientReport is a client report document of a measurement.
type ClientReport struct {
	ID       string
	Type     *string
	Document JSON
}

// MeasurementConnection is one page of a client's measurements.
type MeasurementConnection struct {
	Edges    []MeasurementEdge
	PageInfo *PageInfo
}

// MeasurementEdge is one measurement of a page.
type MeasurementEdge struct {
	Cursor string
	Node   *Measurement
}

// PageInfo is where a page is in its connection.
type PageInfo struct {
	HasNextPage     bool
	HasPreviousPage bool
	StartCursor     *string
	EndCursor       *string
}

// ClientConnection is one page of clients.
type ClientConnection struct {
	Edges      []ClientEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// ClientGroupConnection is one page of client groups.
type ClientGroupConnection struct {
	Edges      []ClientGroupEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// ClientGroupEdge is one of a page's client groups.
type ClientGroupEdge struct {
	Cursor string
	Node   *ClientGroup
}

// UserConnection is one page of users.
type UserConnection struct {
	Edges      []UserEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// UserEdge is one of a page's users.
type UserEdge struct {
	Cursor string
	Node   *User
}

// CapabilityConnection is one page of capabilities.
type CapabilityConnection struct {
	Edges      []CapabilityEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// CapabilityEdge is one of a page's capabilities.
type CapabilityEdge struct {
	Cursor string
	Node   *Capability
}

// IspConnection is one page of ISPs.
type IspConnection struct {
	Edges      []IspEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// IspEdge is one of a page's ISPs.
type IspEdge struct {
	Cursor string
	Node   *Isp
}

// ClientEdge is one client of a page.
type ClientEdge struct {
	Cursor string
	Node   *Client
}

// AnomalyEvent is an anomaly event document of the data owner.
type AnomalyEvent struct {
	ID       string
	Document JSON
	// The document's fields, typed (nil when absent or of another type).
	RuleID, Status, Severity, MeasurementType, Subject, Metric, DetectionPass *string
	FirstSeenAt, LastSeenAt, ResolvedAt                                       *time.Time
	Value                                                                     *float64
	CreatedAt                                                                 time.Time
	// MeasurementIDs are the document's first measurement_ids
	// (Measurements reads them).
	MeasurementIDs []string

	// Attached by the edges below a query (engine/edges.go).
	Client       *Client
	Measurements []Measurement
}

// AnomalyEventConnection is one page of anomaly events.
type AnomalyEventConnection struct {
	Edges      []AnomalyEventEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// AnomalyEventEdge is one anomaly event of a page.
type AnomalyEventEdge struct {
	Cursor string
	Node   *AnomalyEvent
}

// SystemStatusRecordConnection is one page of a client's system status records.
type SystemStatusRecordConnection struct {
	Edges      []SystemStatusRecordEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// SystemStatusRecordEdge is one record of a page.
type SystemStatusRecordEdge struct {
	Cursor string
	Node   *SystemStatusRecord
}

// AiConversation is a conversation with the AI assistant; Messages is nil
// in lists.
type AiConversation struct {
	ID           int64
	Title        *string
	DisplayTitle string
	Preview      string
	MessageCount int64
	Messages     []JSON
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// AiUsage is a data owner's AI token usage of the month.
type AiUsage struct {
	TotalTokens       int64
	Limit             int64
	Remaining         int64
	PercentageUsed    float64
	RequestCount      int64
	ConversationCount int64
	ResetsAt          time.Time
}

// ClientAdminAPIKeyConnection is one page of admin API keys.
type ClientAdminAPIKeyConnection struct {
	Edges      []ClientAdminAPIKeyEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// ClientAdminAPIKeyEdge is one of a page's admin API keys.
type ClientAdminAPIKeyEdge struct {
	Cursor string
	Node   *ClientAdminAPIKey
}

// ClientAnalyticsAPIKeyConnection is one page of analytics API keys.
type ClientAnalyticsAPIKeyConnection struct {
	Edges      []ClientAnalyticsAPIKeyEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// ClientAnalyticsAPIKeyEdge is one of a page's analytics API keys.
type ClientAnalyticsAPIKeyEdge struct {
	Cursor string
	Node   *ClientAnalyticsAPIKey
}

// ExportAPIKeyConnection is one page of export API keys.
type ExportAPIKeyConnection struct {
	Edges      []ExportAPIKeyEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// ExportAPIKeyEdge is one of a page's export API keys.
type ExportAPIKeyEdge struct {
	Cursor string
	Node   *ExportAPIKey
}

// AnomalyRule is an anomaly rule as the API answers it (store keeps
// analyzer.Rule).
type AnomalyRule struct {
	ID              string
	Name            string
	MeasurementType string
	Metric          string
	Subject         *string
	Direction       string
	Unit            string
	Passes          []string
	Enabled         bool
	Builtin         bool
}
