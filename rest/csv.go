package rest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// CSV answers (Route.CSV): the operation's data, turned into records by the
// route, written as text/csv with a header row.

// CSVContentType is the content type of CSV answers.
const CSVContentType = "text/csv; charset=utf-8"

// writeCSV writes the records (the first is the header) as an attachment
// named filename.
func writeCSV(w http.ResponseWriter, status int, filename string, records [][]string) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.WriteAll(records) // a bytes.Buffer does not fail
	w.Header().Set("Content-Type", CSVContentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// csvText keeps a text cell from being read as a formula by spreadsheet
// programs (a registration key or comment starting with =, +, - or @).
func csvText(s *string) string {
	if s == nil {
		return ""
	}
	if *s != "" && strings.ContainsRune("=+-@\t\r", rune((*s)[0])) {
		return "'" + *s
	}
	return *s
}

// LicenseUsageCSVHeader is the header row of GET /license_usage/export.
var LicenseUsageCSVHeader = []string{"month", "registration_key_id", "registration_key", "comment", "license_units", "unique_clients"}

// licenseUsageCSV has one row per registration key and month, keys in the
// report's order (total units descending, clients without a key last),
// months oldest first.
func licenseUsageCSV(data json.RawMessage) ([][]string, error) {
	var d struct {
		Report struct {
			UsageByRegistrationKey []struct {
				RegistrationKeyID *int64  `json:"registration_key_id"`
				RegistrationKey   *string `json:"registration_key"`
				Comment           *string `json:"comment"`
				MonthlyUsage      []struct {
					Month         string `json:"month"`
					LicenseUnits  int64  `json:"license_units"`
					UniqueClients int64  `json:"unique_clients"`
				} `json:"monthly_usage"`
			} `json:"usage_by_registration_key"`
		} `json:"report"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("license usage csv: %w", err)
	}
	records := [][]string{LicenseUsageCSVHeader}
	for _, k := range d.Report.UsageByRegistrationKey {
		id := ""
		if k.RegistrationKeyID != nil {
			id = strconv.FormatInt(*k.RegistrationKeyID, 10)
		}
		for _, m := range k.MonthlyUsage {
			records = append(records, []string{m.Month, id, csvText(k.RegistrationKey), csvText(k.Comment),
				strconv.FormatInt(m.LicenseUnits, 10), strconv.FormatInt(m.UniqueClients, 10)})
		}
	}
	return records, nil
}
