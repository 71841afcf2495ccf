package resolvers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleetgraph/fleetgraph/engine"
	"github.com/fleetgraph/fleetgraph/limits"

	"github.com/99designs/gqlgen/graphql"
	"golang.org/x/text/currency"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// Client management: parsing the inputs of the client, client group and
// ISP contract mutations into store values or field errors.

const (
	maxTags      = 50
	maxTagLength = 64
	maxReason    = 1000
	maxSpeed     = math.MaxInt32 // the columns are integer
	maxPrice     = 1e10          // numeric(12, 2)
)

// tagRe: letters, digits, space and a few separators; tags are filter
// values of webhooks and searches, not free text.
var tagRe = regexp.MustCompile(`^[\p{L}\p{N} _\-.:/@#]+$`)

func clientRefsOf(ids []string) ([]store.ClientRef, error) {
	refs := make([]store.ClientRef, len(ids))
	for i, id := range ids {
		var err error
		if refs[i], err = engine.ClientRefOf(id); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// clientUpdateOf parses clientUpdate's input.
func clientUpdateOf(in gqlmodel.ClientUpdateInput) (store.ClientUpdate, error) {
	fe := apierr.FieldErrors{}
	var u store.ClientUpdate
	if v, set, _ := omitted(in.Label); set {
		u.SetLabel, u.Label = true, blankAsNull(text(fe, "label", v, false))
	}
	if v, set, _ := omitted(in.ExtraLabel); set {
		u.SetExtraLabel, u.ExtraLabel = true, blankAsNull(text(fe, "extraLabel", v, false))
	}
	if v, set := in.Tags.ValueOK(); set {
		u.SetTags, u.Tags = true, tags(fe, "tags", v)
	}
	for field, f := range map[string]struct {
		in  graphql.Omittable[*bool]
		dst **bool
	}{"anomaliesMuted": {in.AnomaliesMuted, &u.AnomaliesMuted},
		"offlineNotificationsMuted":      {in.OfflineNotificationsMuted, &u.OfflineNotificationsMuted},
		"systemHealthNotificationsMuted": {in.SystemHealthNotificationsMuted, &u.SystemHealthNotificationsMuted}} {
		var null bool
		if *f.dst, _, null = omitted(f.in); null {
			fe.Add(field, "must be true or false")
		}
	}
	return u, fe.Err()
}

// blankAsNull: an empty text clears the column.
func blankAsNull(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// tags trims each tag and checks length, characters, count and repeats;
// nil stays nil (no tags).
func tags(fe apierr.FieldErrors, field string, vs []string) []string {
	if vs == nil {
		return nil
	}
	if len(vs) > maxTags {
		fe.Add(field, fmt.Sprintf("must have at most %d entries", maxTags))
		return nil
	}
	out := make([]string, 0, len(vs))
	seen := map[string]bool{}
	for i, v := range vs {
		v = strings.TrimSpace(v)
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case v == "":
			fe.Add(at, "can't be blank")
		case utf8.RuneCountInString(v) > maxTagLength:
			fe.Add(at, fmt.Sprintf("is too long (maximum is %d characters)", maxTagLength))
		case !tagRe.MatchString(v):
			fe.Add(at, "may hold only letters, digits, spaces and _ - . : / @ #")
		case seen[v]:
			fe.Add(at, fmt.Sprintf("repeats the tag %q", v))
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// labelConflict says which label collided.
func labelConflict(err error, label *string) error {
	if label == nil {
		return err
	}
	return conflict(err, fmt.Sprintf("the label %q is already taken by another client", *label))
}

// groupConflict says which group name collided.
func groupConflict(err error, name string) error {
	return conflict(err, fmt.Sprintf("a client group named %q already exists", name))
}

// groupMembersOf checks the caller may change groups and parses the clients
// to add or remove.
func groupMembersOf(ctx context.Context, in gqlmodel.ClientGroupMembersInput) (*auth.Principal, []store.ClientRef, error) {
	p, err := auth.Require(ctx, model.RoleEditor)
	if err != nil {
		return nil, nil, err
	}
	if len(in.ClientIds) == 0 || len(in.ClientIds) > limits.MaxGroupMembers {
		return nil, nil, apierr.Invalid("clientIds", fmt.Sprintf("must have 1 to %d entries", limits.MaxGroupMembers))
	}
	refs, err := clientRefsOf(in.ClientIds)
	return p, refs, err
}

// contractCreateOf parses ispContractCreate's input.
func contractCreateOf(in gqlmodel.IspContractCreateInput) (store.ContractInput, error) {
	fe := apierr.FieldErrors{}
	c := store.ContractInput{IspID: in.IspID, Name: text(fe, "name", in.Name, false),
		UploadSpeed: speed(fe, "uploadSpeed", in.UploadSpeed), DownloadSpeed: speed(fe, "downloadSpeed", in.DownloadSpeed),
		MonthlyPrice: price(fe, "monthlyPrice", in.MonthlyPrice), Currency: currencyCode(fe, "currency", in.Currency),
		AssumedTariff:  blankAsNull(text(fe, "assumedTariff", in.AssumedTariff, false)),
		ConnectionType: blankAsNull(text(fe, "connectionType", in.ConnectionType, false)),
		ValidFrom:      in.ValidFrom, ValidUntil: in.ValidUntil}
	if c.ValidFrom != nil && c.ValidUntil != nil && !c.ValidUntil.After(*c.ValidFrom) {
		fe.Add("validUntil", "must be after validFrom")
	}
	return c, fe.Err()
}

// contractUpdateOf parses ispContractUpdate's input.
func contractUpdateOf(in gqlmodel.IspContractUpdateInput) (store.ContractInput, error) {
	fe := apierr.FieldErrors{}
	var c store.ContractInput
	if v, set, null := omitted(in.IspID); set {
		if null {
			fe.Add("ispId", "can't be blank")
		} else {
			c.IspID = *v
		}
	}
	if v, set, _ := omitted(in.Name); set {
		c.Name = text(fe, "name", v, false)
		if c.Name == nil {
			c.Name = ptr("")
		}
	}
	var v *int64
	v, c.SetUploadSpeed, _ = omitted(in.UploadSpeed)
	c.UploadSpeed = speed(fe, "uploadSpeed", v)
	v, c.SetDownloadSpeed, _ = omitted(in.DownloadSpeed)
	c.DownloadSpeed = speed(fe, "downloadSpeed", v)
	var p *float64
	p, c.SetMonthlyPrice, _ = omitted(in.MonthlyPrice)
	c.MonthlyPrice = price(fe, "monthlyPrice", p)
	var s *string
	s, c.SetCurrency, _ = omitted(in.Currency)
	c.Currency = currencyCode(fe, "currency", s)
	s, c.SetAssumedTariff, _ = omitted(in.AssumedTariff)
	c.AssumedTariff = blankAsNull(text(fe, "assumedTariff", s, false))
	s, c.SetConnectionType, _ = omitted(in.ConnectionType)
	c.ConnectionType = blankAsNull(text(fe, "connectionType", s, false))
	c.ValidFrom, c.SetValidFrom, _ = omitted(in.ValidFrom)
	c.ValidUntil, c.SetValidUntil, _ = omitted(in.ValidUntil)
	return c, fe.Err()
}

// contractDatesError puts the store's date refusals on validUntil.
func contractDatesError(err error) error {
	switch {
	case errors.Is(err, store.ErrContractDates):
		return apierr.Invalid("validUntil", "must be after validFrom")
	case errors.Is(err, store.ErrContractEnded):
		return apierr.Invalid("validUntil", "the contract has already ended")
	}
	return err
}

func speed(fe apierr.FieldErrors, field string, v *int64) *int64 {
	intRange(fe, field, v, 0, maxSpeed)
	return v
}

// price is 0 or more with at most two decimal places (numeric(12, 2)
// would round the rest away).
func price(fe apierr.FieldErrors, field string, v *float64) *float64 {
	switch {
	case v == nil:
	case *v < 0 || *v >= maxPrice || math.IsNaN(*v):
		fe.Add(field, "must be 0 or more and below 10000000000")
	case math.Abs(*v*100-math.Round(*v*100)) > 1e-6:
		fe.Add(field, "must have at most two decimal places")
	}
	return v
}

// currencyCode is an ISO 4217 code, upper-cased.
func currencyCode(fe apierr.FieldErrors, field string, s *string) *string {
	if s == nil {
		return nil
	}
	code := strings.ToUpper(strings.TrimSpace(*s))
	if _, err := currency.ParseISO(code); err != nil || len(code) != 3 {
		fe.Add(field, "must be an ISO 4217 currency code, e.g. EUR")
		return nil
	}
	return &code
}

// endOf is when ispContractEnd ends a contract: the given time, else now.
func endOf(in *gqlmodel.IspContractEndInput) time.Time {
	if in != nil && in.ValidUntil != nil {
		return *in.ValidUntil
	}
	return time.Now()
}

// clientOrders maps the schema's orders onto the store's.
var clientOrders = map[gqlmodel.ClientOrderField]store.ClientOrder{
	gqlmodel.ClientOrderFieldID:        store.ClientOrderID,
	gqlmodel.ClientOrderFieldCreatedAt: store.ClientOrderCreatedAt,
	gqlmodel.ClientOrderFieldLabel:     store.ClientOrderLabel,
}

// clientPageQueryOf parses clientsConnection's arguments.
func clientPageQueryOf(w engine.PageWindow, filter *gqlmodel.ClientFilter, orderBy *gqlmodel.ClientOrder) (store.ClientPageQuery, error) {
	q := store.ClientPageQuery{Order: store.ClientOrderID, Limit: w.Size + 1, FromEnd: w.FromEnd}
	if orderBy != nil {
		q.Order, q.Desc = clientOrders[orderBy.Field], orderBy.Direction == gqlmodel.OrderDirectionDesc
	}
	order := string(q.Order)
	if q.Desc {
		order += " desc"
	}
	for _, b := range []struct {
		field string
		arg   *string
		dst   **store.ClientKey
	}{{"after", w.After, &q.After}, {"before", w.Before, &q.Before}} {
		if b.arg == nil {
			continue
		}
		c, err := engine.DecodeCursor(b.field, *b.arg, order)
		if err != nil {
			return q, err
		}
		*b.dst = &store.ClientKey{ID: c.ID, CreatedAt: c.Time}
		if c.Text != nil {
			(*b.dst).Label = *c.Text
		}
	}
	var err error
	q.Filter, err = clientFilterOf(filter)
	return q, err
}

// clientFilterOf parses the clients connection's filter.
func clientFilterOf(in *gqlmodel.ClientFilter) (store.ClientFilter, error) {
	var f store.ClientFilter
	if in == nil {
		return f, nil
	}
	fe := apierr.FieldErrors{}
	if in.Search != nil {
		s := strings.TrimSpace(*in.Search)
		if n := utf8.RuneCountInString(s); n < 1 || n > limits.MaxClientSearchLength {
			fe.Add("filter.search", fmt.Sprintf("must have 1 to %d characters (leave it out to match every client)", limits.MaxClientSearchLength))
		}
		f.Search = &s
	}
	if in.Tags != nil {
		f.Tags = tags(fe, "filter.tags", in.Tags)
	}
	if in.Type != nil && strings.TrimSpace(*in.Type) == "" {
		fe.Add("filter.type", "must not be blank (leave it out to match every type)")
	}
	f.GroupID, f.Type, f.Offline, f.Disabled, f.RegistrationKeyID = in.GroupID, in.Type, in.Offline, in.Disabled, in.RegistrationKeyID
	for _, s := range in.HealthStates {
		f.HealthStates = append(f.HealthStates, string(s))
	}
	return f, fe.Err()
}
