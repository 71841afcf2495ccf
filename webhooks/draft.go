package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/limits"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/fleethealth"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Webhooks: validation is parsing the input into a complete webhook (the
// stored one with the input's changes) or field errors; headers and the
// secret are sealed like service credential passwords.

// maskedHeader is how header values are shown; sent back, it keeps the
// stored value.
const maskedHeader = "********"

var (
	headerNameRe   = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_` + "`" + `|~-]{1,100}$`)
	slackUserRe    = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)
	slackGroupRe   = regexp.MustCompile(`^S[A-Z0-9]{2,30}$`)
	teamsUserRe    = regexp.MustCompile(`^[^@\s<>]+@[^@\s<>]+$`)
	reservedHeader = map[string]bool{"webhook-id": true, "webhook-timestamp": true, "webhook-signature": true,
		"content-type": true, "content-length": true, "host": true, "user-agent": true, "transfer-encoding": true,
		"connection": true}
)

// webhookDraft is a webhook as it will be stored.
type Draft struct {
	Name          string
	Description   *string
	URL           string
	PayloadFormat string
	FormatOptions model.WebhookFormatOptions
	EventTypes    []string
	Filters       model.WebhookFilters
	Enabled       bool
	Headers       map[string]string
}

// draftOf is the stored webhook as a draft (its headers opened).
func DraftOf(sealer *auth.Sealer, w store.WebhookEndpoint) (Draft, error) {
	d := Draft{Name: w.Name, Description: w.Description, URL: w.URL, PayloadFormat: w.PayloadFormat,
		EventTypes: w.EventTypes, Enabled: w.Enabled}
	_ = json.Unmarshal(w.FormatOptions, &d.FormatOptions) // written by this file: valid
	_ = json.Unmarshal(w.Filters, &d.Filters)
	h, err := openHeaders(sealer, w.SealedHeaders)
	d.Headers = h
	return d, err
}

func openHeaders(sealer *auth.Sealer, sealed []byte) (map[string]string, error) {
	h := map[string]string{}
	if len(sealed) == 0 {
		return h, nil
	}
	plain, err := sealer.Open(sealed)
	if err != nil {
		return nil, err
	}
	return h, json.Unmarshal([]byte(plain), &h)
}

// validate checks the draft as a whole and adds what is wrong to fe.
func (d *Draft) Validate(fe apierr.FieldErrors) {
	if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
		u.User != nil || u.Fragment != "" {
		fe.Add("url", "must be an http or https URL with a host (no user info, no fragment)")
	} else if len(d.URL) > 2048 {
		fe.Add("url", "is too long (maximum is 2048 characters)")
	}
	if len(d.EventTypes) == 0 {
		fe.Add("event_types", "can't be empty")
	}
	for _, t := range d.EventTypes {
		if !IsEventType(t) {
			fe.Add("event_types", fmt.Sprintf("%q is not an event type (see GET /webhooks/event_types)", t))
		}
	}
	if !slices.Contains([]string{"standard", "slack", "microsoft_teams"}, d.PayloadFormat) {
		fe.Add("payload_format", "must be one of standard, slack, microsoft_teams")
	}
	d.validateFormatOptions(fe)
	for name := range d.Headers {
		if !headerNameRe.MatchString(name) {
			fe.Add("headers", fmt.Sprintf("%q is not a valid header name", name))
		} else if reservedHeader[strings.ToLower(name)] {
			fe.Add("headers", fmt.Sprintf("%q is set by the server", name))
		}
	}
	if len(d.Headers) > limits.MaxWebhookHeaders {
		fe.Add("headers", fmt.Sprintf("at most %d headers", limits.MaxWebhookHeaders))
	}
}

func (d *Draft) validateFormatOptions(fe apierr.FieldErrors) {
	o := d.FormatOptions
	empty := len(o.MentionUsers) == 0 && len(o.MentionGroups) == 0 && o.MentionChannel == nil
	switch {
	case empty:
	case d.PayloadFormat == "standard":
		fe.Add("format_options", "are only allowed with the slack and microsoft_teams formats")
	case d.PayloadFormat == "slack":
		for _, u := range o.MentionUsers {
			if !slackUserRe.MatchString(u) {
				fe.Add("format_options", fmt.Sprintf("mention_users: %q is not a Slack member id (U…)", u))
			}
		}
		for _, g := range o.MentionGroups {
			if !slackGroupRe.MatchString(g) {
				fe.Add("format_options", fmt.Sprintf("mention_groups: %q is not a Slack user group id (S…)", g))
			}
		}
	case d.PayloadFormat == "microsoft_teams":
		for _, u := range o.MentionUsers {
			if !teamsUserRe.MatchString(u) {
				fe.Add("format_options", fmt.Sprintf("mention_users: %q is not a user principal name (name@domain)", u))
			}
		}
		if len(o.MentionGroups) > 0 || o.MentionChannel != nil {
			fe.Add("format_options", "mention_groups and mention_channel are Slack's: Teams mentions users only")
		}
	}
	if o.MentionChannel != nil && *o.MentionChannel != "here" && *o.MentionChannel != "channel" {
		fe.Add("format_options", "mention_channel must be here, channel or null")
	}
	if len(o.MentionUsers) > limits.MaxWebhookMentions || len(o.MentionGroups) > limits.MaxWebhookMentions {
		fe.Add("format_options", fmt.Sprintf("at most %d mentions of each kind", limits.MaxWebhookMentions))
	}
}

// jsonObject is the object j holds: none when j is null, and the error
// msg on field when it holds anything else.
func jsonObject(fe apierr.FieldErrors, field, msg string, j *model.JSON) map[string]any {
	if j == nil || j.Value == nil {
		return nil
	}
	obj, ok := j.Value.(map[string]any)
	if !ok {
		fe.Add(field, msg)
	}
	return obj
}

// parseFilters reads the filters object: only its four keys, each checked.
func ParseFilters(fe apierr.FieldErrors, j *model.JSON) model.WebhookFilters {
	f := model.WebhookFilters{ClientTags: []string{}, MeasurementTypes: []string{}, HealthMetrics: []string{}}
	for k, v := range jsonObject(fe, "filters", "must be an object", j) {
		switch k {
		case FilterClientTags:
			f.ClientTags = jsonStrings(fe, "filters", k, v, nil)
		case FilterMeasurementTypes:
			f.MeasurementTypes = jsonStrings(fe, "filters", k, v, vocab.MeasurementTypes)
		case FilterHealthMetrics:
			f.HealthMetrics = jsonStrings(fe, "filters", k, v, fleethealth.Metrics)
		case FilterMinSeverity:
			f.MinSeverity = jsonNullableString(fe, "filters", v, Severities,
				"min_severity must be warning, critical or null")
		default:
			fe.Add("filters", fmt.Sprintf("unknown key %q (client_tags, measurement_types, min_severity, health_metrics)", k))
		}
	}
	return f
}

// parseFormatOptions reads the format_options object.
func ParseFormatOptions(fe apierr.FieldErrors, j *model.JSON) model.WebhookFormatOptions {
	o := model.WebhookFormatOptions{MentionUsers: []string{}, MentionGroups: []string{}}
	for k, v := range jsonObject(fe, "format_options", "must be an object", j) {
		switch k {
		case "mention_users":
			o.MentionUsers = jsonStrings(fe, "format_options", k, v, nil)
		case "mention_groups":
			o.MentionGroups = jsonStrings(fe, "format_options", k, v, nil)
		case "mention_channel": // here or channel: checked with the format (validateFormatOptions)
			o.MentionChannel = jsonNullableString(fe, "format_options", v, nil,
				"mention_channel must be here, channel or null")
		default:
			fe.Add("format_options", fmt.Sprintf("unknown key %q (mention_users, mention_groups, mention_channel)", k))
		}
	}
	return o
}

// jsonNullableString reads a string (one of allowed, when given) or null;
// anything else adds msg on field and reads as null.
func jsonNullableString(fe apierr.FieldErrors, field string, v any, allowed []string, msg string) *string {
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok || (allowed != nil && !slices.Contains(allowed, s)) {
		fe.Add(field, msg)
		return nil
	}
	return &s
}

// jsonStrings reads an array of distinct non-blank strings (of allowed,
// when given) for key of field.
func jsonStrings(fe apierr.FieldErrors, field, key string, v any, allowed []string) []string {
	arr, ok := v.([]any)
	if !ok {
		fe.Add(field, key+" must be an array of strings")
		return []string{}
	}
	out := []string{}
	for _, e := range arr {
		s, ok := e.(string)
		switch {
		case !ok || strings.TrimSpace(s) == "" || len(s) > 255:
			fe.Add(field, key+" must hold non-blank strings of at most 255 characters")
		case allowed != nil && !slices.Contains(allowed, s):
			fe.Add(field, fmt.Sprintf("%s: %q is not one of %s", key, s, strings.Join(allowed, ", ")))
		case !slices.Contains(out, s):
			out = append(out, s)
		}
	}
	if len(out) > limits.MaxFilterValues {
		fe.Add(field, fmt.Sprintf("%s: at most %d values", key, limits.MaxFilterValues))
	}
	return out
}

// parseHeaders reads the headers object; a value of eight asterisks keeps
// the value stored under that name (stored: the current headers).
func ParseHeaders(fe apierr.FieldErrors, j *model.JSON, stored map[string]string) map[string]string {
	h := map[string]string{}
	for k, v := range jsonObject(fe, "headers", "must be an object of header names to string values", j) {
		s, ok := v.(string)
		switch {
		case !ok:
			fe.Add("headers", fmt.Sprintf("the value of %q must be a string", k))
		case s == maskedHeader:
			old, found := stored[k]
			if !found {
				fe.Add("headers", fmt.Sprintf("%q has no stored value to keep", k))
			}
			h[k] = old
		case strings.ContainsAny(s, "\r\n\x00") || len(s) > 4096:
			fe.Add("headers", fmt.Sprintf("the value of %q must be one line of at most 4096 characters", k))
		default:
			h[k] = s
		}
	}
	return h
}

// storeInput makes the store's input of the draft (headers sealed).
func StoreInput(sealer *auth.Sealer, d Draft) store.WebhookInput {
	opts, _ := json.Marshal(d.FormatOptions) // plain structs: cannot fail
	filters, _ := json.Marshal(d.Filters)
	in := store.WebhookInput{Name: &d.Name, Description: d.Description, SetDescription: true, URL: &d.URL,
		PayloadFormat: &d.PayloadFormat, FormatOptions: opts, EventTypes: d.EventTypes, Filters: filters,
		Enabled: &d.Enabled, SealedHeaders: []byte{}}
	if len(d.Headers) > 0 {
		h, _ := json.Marshal(d.Headers)
		in.SealedHeaders = sealer.Seal(string(h))
	}
	return in
}

// newWebhookSecret makes a signing secret: whsec_ and 32 random bytes in
// base64 (Standard Webhooks), and its hint.
func NewSecret() (secret, hint string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret = "whsec_" + base64.StdEncoding.EncodeToString(b)
	return secret, "whsec_…" + secret[len(secret)-4:]
}

// modelOf converts a stored webhook; header values are masked.
func ModelOf(sealer *auth.Sealer, w store.WebhookEndpoint) (*model.Webhook, error) {
	d, err := DraftOf(sealer, w)
	if err != nil {
		return nil, err
	}
	masked := map[string]string{}
	names := make([]string, 0, len(d.Headers))
	for k := range d.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		masked[k] = maskedHeader
	}
	if d.FormatOptions.MentionUsers == nil {
		d.FormatOptions.MentionUsers = []string{}
	}
	if d.FormatOptions.MentionGroups == nil {
		d.FormatOptions.MentionGroups = []string{}
	}
	for _, l := range []*[]string{&d.Filters.ClientTags, &d.Filters.MeasurementTypes, &d.Filters.HealthMetrics} {
		if *l == nil {
			*l = []string{}
		}
	}
	return &model.Webhook{ID: w.ID, Name: w.Name, Description: w.Description, URL: w.URL, PayloadFormat: w.PayloadFormat,
		FormatOptions: d.FormatOptions, EventTypes: w.EventTypes, Filters: d.Filters, Enabled: w.Enabled, Active: w.Active,
		Headers: model.JSON{Value: masked}, SecretHint: w.SecretHint, AutoDisabledAt: w.AutoDisabledAt,
		AutoDisabledReason: w.AutoDisabledReason, ConsecutiveFailures: w.ConsecutiveFailures,
		LastDeliveryAt: w.LastDeliveryAt, LastSuccessAt: w.LastSuccessAt, LastFailureAt: w.LastFailureAt,
		LastResponseStatus: w.LastResponseStatus, LastError: w.LastError, CreatedByID: w.CreatedByID,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}, nil
}

// DeliveryPage reads page and per_page of the delivery list
// (docs/design.md "Lists"): page from 1, per_page 1 to
// limits.MaxListPerPage, limits.ListPerPage when not given.
func DeliveryPage(page, perPage *int64) (int64, int64, error) {
	p, pp := int64(1), int64(limits.ListPerPage)
	if page != nil {
		p = *page
	}
	if perPage != nil {
		pp = *perPage
	}
	if p < 1 || pp < 1 || pp > limits.MaxListPerPage {
		return 0, 0, apierr.BadRequestf("page must be 1 or more and per_page 1 to %d", limits.MaxListPerPage)
	}
	return p, pp, nil
}
