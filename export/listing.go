// Package export is the Data Export API's own part of the core
// (docs/export-api.md): the parameters of its listings parsed into a
// store filter and a page (listing.go), each listing's documents shaped
// as the export spec answers them (documents.go), and the parameters of
// its /search merged into a checked Query DSL body (search.go). Every
// refusal is a 400 naming the parameter. The resolvers of
// schema/export.graphqls call it; the store reads the documents.
package export

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Types the export listings accept per endpoint (docs/design.md's vocabulary
// adds conferencing and gaming measurements to the spec's four).
var (
	measurementTypes = vocab.MeasurementTypes
	eventBundleTypes = vocab.EventBundleTypes
)

// Listing is the parsed request of one export listing.
type Listing struct {
	Filter        store.ExportFilter
	Page, PerPage int64
}

// Kind says what one listing accepts.
type Kind struct {
	// byMeasurement: measurement_id is accepted; self: it names the document itself.
	byMeasurement, self bool
	types               []string // allowed types; nil: any
	typeRequired        bool
}

// The listings, by what each accepts: measurement_id (naming the
// measurement itself for Measurements), and which type.
var (
	Measurements    = Kind{byMeasurement: true, self: true, types: measurementTypes}
	ClientReports   = Kind{byMeasurement: true}
	EventBundles    = Kind{byMeasurement: true, types: eventBundleTypes, typeRequired: true}
	NetworkRequests = Kind{byMeasurement: true}
	UserFeedbacks   = Kind{}
	Clients         = Kind{}
)

// ParseListing turns the common parameters, type and paging into a
// store filter, or a 400 naming the bad parameter. measurement_id, when
// given, overrides every other filter.
func ParseListing(k Kind, f *gqlmodel.ExportFilter, typ *string, page, perPage *int64) (Listing, error) {
	var l Listing
	var err error
	if l.Page, l.PerPage, err = parsePaging(page, perPage); err != nil {
		return l, err
	}
	l.Filter.Limit, l.Filter.Offset = l.PerPage, (l.Page-1)*l.PerPage
	if f == nil {
		f = &gqlmodel.ExportFilter{}
	}
	if f.MeasurementID != nil {
		if !k.byMeasurement {
			return l, apierr.BadRequestf("measurement_id is not a parameter of this listing")
		}
		id := strings.TrimSpace(*f.MeasurementID)
		if id == "" {
			return l, apierr.BadRequestf("measurement_id must not be empty")
		}
		if k.self {
			l.Filter.DocID = &id
		} else {
			l.Filter.MeasurementID = &id
		}
		return l, nil
	}
	if l.Filter.Start, err = ParseTimeParam("start_time", f.StartTime); err != nil {
		return l, err
	}
	if l.Filter.End, err = ParseTimeParam("end_time", f.EndTime); err != nil {
		return l, err
	}
	if l.Filter.Start != nil && l.Filter.End != nil && l.Filter.Start.After(*l.Filter.End) {
		return l, apierr.BadRequestf("start_time must not be after end_time")
	}
	if f.ClientUUID != nil {
		u, err := uuid.Parse(strings.TrimSpace(*f.ClientUUID))
		if err != nil {
			return l, apierr.BadRequestf("client_uuid must be a UUID")
		}
		canonical := u.String()
		l.Filter.ClientUUID = &canonical
	} else {
		l.Filter.Tags = NonEmpty(f.Tags)
	}
	if f.Label != nil && *f.Label != "" {
		l.Filter.Label = f.Label
	}
	if l.Filter.Type, err = parseType(k, typ); err != nil {
		return l, err
	}
	return l, nil
}

func parsePaging(page, perPage *int64) (int64, int64, error) {
	p, pp := int64(1), int64(limits.ExportPerPage)
	if page != nil {
		if *page < 1 {
			return 0, 0, apierr.BadRequestf("page must be 1 or more")
		}
		p = *page
	}
	if perPage != nil {
		if *perPage < 1 || *perPage > limits.MaxExportPerPage {
			return 0, 0, apierr.BadRequestf("per_page must be between 1 and %d", limits.MaxExportPerPage)
		}
		pp = *perPage
	}
	if p > math.MaxInt64/pp {
		return 0, 0, apierr.BadRequestf("page is too large")
	}
	return p, pp, nil
}

func parseType(k Kind, typ *string) (*string, error) {
	if typ == nil || strings.TrimSpace(*typ) == "" {
		if k.typeRequired {
			return nil, apierr.BadRequestf("type is required: one of %s", strings.Join(k.types, ", "))
		}
		return nil, nil
	}
	t := strings.TrimSpace(*typ)
	if k.types == nil {
		return &t, nil
	}
	for _, ok := range k.types {
		if t == ok {
			return &t, nil
		}
	}
	return nil, apierr.BadRequestf("type must be one of %s", strings.Join(k.types, ", "))
}

// NonEmpty drops blank entries (tags=a,,b) and returns nil for none.
func NonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// ParseTimeParam reads the time parameter name with ParseTime (nil: not
// given), or a 400 naming the parameter and the formats. License usage's
// start_time and end_time take the same (package license).
func ParseTimeParam(name string, raw *string) (*time.Time, error) {
	if raw == nil {
		return nil, nil
	}
	t, err := ParseTime(*raw)
	if err != nil {
		return nil, apierr.BadRequestf("%s must be an ISO 8601 time (e.g. 2024-05-01T12:00:00Z, 2024-05-01) or epoch seconds or milliseconds", name)
	}
	return &t, nil
}

var (
	epochPattern = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	// basicDate is ISO 8601's basic date (20240501), not epoch seconds.
	basicDate = regexp.MustCompile(`^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$`)
	// lowerISO is an ISO 8601 time written with a lower-case t (and z).
	lowerISO = regexp.MustCompile(`^\d{4}-?\d{2}-?\d{2}t`)
	// A "+" of an unencoded offset arrives as a space: 2024-05-01T12:00:00 02:00.
	lostPlus = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}(?::?\d{2})?)$`)
)

// ParseTime reads a time in any of the accepted formats: ISO 8601
// extended or basic (a T, t or a space between date and time, optional
// seconds, fractions and zone: Z, ±hh, ±hhmm, ±hh:mm), a date alone
// (midnight UTC; 2024-05-01 or 20240501), RFC 1123, or epoch seconds (up
// to 11 digits, fractions allowed; 8 digits that form a date are the basic
// date) or milliseconds (12 digits or more). Times without a zone are UTC.
// The layouts are isotime.Layouts' Export part.
func ParseTime(raw string) (time.Time, error) {
	s := strings.TrimSpace(raw)
	if lowerISO.MatchString(s) {
		s = strings.ToUpper(s)
	}
	if epochPattern.MatchString(s) && !basicDate.MatchString(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return time.Time{}, err
		}
		if digits := strings.TrimPrefix(strings.SplitN(s, ".", 2)[0], "-"); len(digits) >= 12 {
			return time.UnixMilli(int64(f)).UTC(), nil
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	if m := lostPlus.FindStringSubmatch(s); m != nil {
		s = m[1] + "+" + m[2]
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if t, _, ok := isotime.Parse(isotime.Export, s, nil); ok {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("unrecognised time %q", raw)
}

// exportDocuments runs one parsed listing over the data owner's documents
