package model

// LicenseUsageReport is the license usage of a data owner over a range of
// months (package license computes it).
type LicenseUsageReport struct {
	MonthlyUsage           []LicenseMonthUsage
	TotalUnits             int64
	UsageByRegistrationKey []RegistrationKeyLicenseUsage
}

// LicenseMonthUsage is one month of a report; BreakdownBySubjectCount is
// keyed by the number of subjects ("1", "2", ...).
type LicenseMonthUsage struct {
	Month                   string
	LicenseUnits            int64
	UniqueClients           int64
	BreakdownBySubjectCount JSON
}

// SubjectCountUsage is one entry of a month's breakdown by subject count.
type SubjectCountUsage struct {
	Clients int64 `json:"clients"`
	Units   int64 `json:"units"`
}

// RegistrationKeyLicenseUsage is the usage of the clients of one
// registration key (RegistrationKeyID nil: clients without one).
type RegistrationKeyLicenseUsage struct {
	RegistrationKeyID  *int64
	RegistrationKey    *string
	Comment            *string
	TotalUnits         int64
	TotalUniqueClients int64
	MonthlyUsage       []RegistrationKeyMonthUsage
}

// RegistrationKeyMonthUsage is one month of a registration key's usage.
type RegistrationKeyMonthUsage struct {
	Month         string
	LicenseUnits  int64
	UniqueClients int64
}

// SoftwareDownloads is the release catalogue as one data owner sees it.
type SoftwareDownloads struct {
	Provider   string
	Customer   string
	Components []SoftwareComponent
}

// SoftwareComponent is one downloadable component and its versions.
type SoftwareComponent struct {
	ID       string
	Label    string
	Versions []SoftwareVersion
	Latest   *SoftwareLatest
}

// SoftwareVersion is one released version of a component.
type SoftwareVersion struct {
	Version  string
	Filename string
	URL      string
}

// SoftwareLatest is a component's latest version with the commands that
// fetch and unpack it for the data owner.
type SoftwareLatest struct {
	Version         string
	Filename        string
	URL             string
	ResolvedURL     string
	DownloadCommand string
	ExtractCommand  string
}
