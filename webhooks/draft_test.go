package webhooks

import (
	"reflect"
	"testing"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
)

// TestWebhookObjectParsing: the filters, format_options and headers objects
// parse into their values, and what is wrong is named with the same field
// and message.
func TestWebhookObjectParsing(t *testing.T) {
	type parser func(apierr.FieldErrors, *model.JSON) any
	var (
		filters  parser = func(fe apierr.FieldErrors, j *model.JSON) any { return ParseFilters(fe, j) }
		severity parser = func(fe apierr.FieldErrors, j *model.JSON) any { return ParseFilters(fe, j).MinSeverity }
		tags     parser = func(fe apierr.FieldErrors, j *model.JSON) any { return ParseFilters(fe, j).ClientTags }
		options  parser = func(fe apierr.FieldErrors, j *model.JSON) any { return ParseFormatOptions(fe, j) }
		channel  parser = func(fe apierr.FieldErrors, j *model.JSON) any { return ParseFormatOptions(fe, j).MentionChannel }
		headers  parser = func(fe apierr.FieldErrors, j *model.JSON) any {
			return ParseHeaders(fe, j, map[string]string{"X-A": "a"})
		}
	)
	js := func(v any) *model.JSON { return &model.JSON{Value: v} }
	str := func(s string) *string { return &s }
	noFilters := model.WebhookFilters{ClientTags: []string{}, MeasurementTypes: []string{}, HealthMetrics: []string{}}
	noOptions := model.WebhookFormatOptions{MentionUsers: []string{}, MentionGroups: []string{}}
	none := apierr.FieldErrors{}
	tests := []struct {
		name   string
		parse  parser
		in     *model.JSON
		want   any
		errors apierr.FieldErrors
	}{
		{"filters absent", filters, nil, noFilters, none},
		{"filters not an object", filters, js("x"), noFilters, apierr.FieldErrors{"filters": {"must be an object"}}},
		{"min_severity null", severity, js(map[string]any{"min_severity": nil}), (*string)(nil), none},
		{"min_severity critical", severity, js(map[string]any{"min_severity": "critical"}), str("critical"), none},
		{"min_severity not a severity", severity, js(map[string]any{"min_severity": "info"}), (*string)(nil),
			apierr.FieldErrors{"filters": {"min_severity must be warning, critical or null"}}},
		{"min_severity not a string", severity, js(map[string]any{"min_severity": 3.0}), (*string)(nil),
			apierr.FieldErrors{"filters": {"min_severity must be warning, critical or null"}}},
		{"filters unknown key", tags, js(map[string]any{"tags": []any{"a"}}), []string{},
			apierr.FieldErrors{"filters": {`unknown key "tags" (client_tags, measurement_types, min_severity, health_metrics)`}}},
		{"client_tags distinct", tags, js(map[string]any{"client_tags": []any{"a", "b", "a"}}), []string{"a", "b"}, none},
		{"format_options absent", options, nil, noOptions, none},
		{"format_options not an object", options, js([]any{}), noOptions,
			apierr.FieldErrors{"format_options": {"must be an object"}}},
		{"mention_channel null", channel, js(map[string]any{"mention_channel": nil}), (*string)(nil), none},
		{"mention_channel any string (checked with the format)", channel, js(map[string]any{"mention_channel": "everyone"}),
			str("everyone"), none},
		{"mention_channel not a string", channel, js(map[string]any{"mention_channel": true}), (*string)(nil),
			apierr.FieldErrors{"format_options": {"mention_channel must be here, channel or null"}}},
		{"format_options unknown key", channel, js(map[string]any{"channel": "here"}), (*string)(nil),
			apierr.FieldErrors{"format_options": {`unknown key "channel" (mention_users, mention_groups, mention_channel)`}}},
		{"headers absent", headers, nil, map[string]string{}, none},
		{"headers null", headers, js(nil), map[string]string{}, none},
		{"headers not an object", headers, js("x"), map[string]string{},
			apierr.FieldErrors{"headers": {"must be an object of header names to string values"}}},
		{"headers kept and set", headers, js(map[string]any{"X-A": maskedHeader, "X-B": "b"}),
			map[string]string{"X-A": "a", "X-B": "b"}, none},
		{"header not a string", headers, js(map[string]any{"X-B": 1.0}), map[string]string{},
			apierr.FieldErrors{"headers": {`the value of "X-B" must be a string`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := apierr.FieldErrors{}
			if got := tt.parse(fe, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			if !reflect.DeepEqual(fe, tt.errors) {
				t.Errorf("errors %v, want %v", fe, tt.errors)
			}
		})
	}
}
