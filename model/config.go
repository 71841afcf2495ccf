package model

import (
	"fmt"
	"io"
	"time"
)

// ConfigKind is a measurement config's kind, as stored.
type ConfigKind string

const (
	ConfigPublic    ConfigKind = "public"
	ConfigAutomator ConfigKind = "automator"
)

func (k ConfigKind) String() string { return string(k) }

func (k *ConfigKind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	if s != string(ConfigPublic) && s != string(ConfigAutomator) {
		return fmt.Errorf("%v is not a valid ConfigKind", v)
	}
	*k = ConfigKind(s)
	return nil
}

func (k ConfigKind) MarshalGQL(w io.Writer) { fmt.Fprintf(w, "%q", string(k)) }

// MeasurementConfig is a config of either kind.
type MeasurementConfig struct {
	ID                 int64
	Kind               ConfigKind
	Name               string
	Description        *string
	ImportSource       *string
	IsDefault          bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DraftVersionID     *int64
	PublishedVersionID *int64
	DraftRevision      *int64
	PublishedRevision  *int64

	// Attached by the edges below a query (engine/edges.go).
	DraftVersion         *ConfigVersion
	PublishedVersion     *ConfigVersion
	Revisions            []ConfigRevision
	DeliveredClientCount int64
	DeliveredClients     []ConfigClient
	ClientGroups         []ConfigClientGroup
	ScheduleConfigs      []ScheduleConfigRef
	Warnings             []string
}

// ConfigVersion is a config's draft or published version.
type ConfigVersion struct {
	ID              int64
	Revision        int64
	Data            JSON
	DataHash        string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	CreatedByID     *int64
	CreatedByName   *string
	PublishedAt     *time.Time
	PublishedByID   *int64
	PublishedByName *string
	Published       bool
	StudyCount      int64

	// Attached by the edges below a query (engine/edges.go).
	Studies []ConfigStudy
}

// ConfigRevision is a version's summary.
type ConfigRevision struct {
	ID              int64
	Revision        int64
	State           string
	DataHash        string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	CreatedByID     *int64
	CreatedByName   *string
	PublishedAt     *time.Time
	PublishedByID   *int64
	PublishedByName *string
	Published       bool
	StudyCount      int64
}

type ConfigStudy struct {
	ID                        int64
	Position                  int64
	StudyDescriptionVersionID int64
	StudyDescriptionID        int64
	Revision                  int64
	LatestRevision            *int64
	LatestVersionID           *int64
	Name                      string
	StudyID                   string
	StudyType                 string
	Subject                   string
	InternalID                *string
}

type ConfigClient struct {
	ID         int64
	UUID       string
	Label      *string
	LastSeenAt *time.Time
}

type ConfigClientGroup struct {
	ID   int64
	Name string
}

type ScheduleConfigRef struct {
	ID                int64
	Name              string
	IsDefault         bool
	DraftRevision     *int64
	PublishedRevision *int64
	StudyIDs          []string
}

// MeasurementConfigConnection is one page of measurement configs.
type MeasurementConfigConnection struct {
	Edges      []MeasurementConfigEdge
	PageInfo   *PageInfo
	TotalCount int64
}

// MeasurementConfigEdge is one of a page's measurement configs.
type MeasurementConfigEdge struct {
	Cursor string
	Node   *MeasurementConfig
}
