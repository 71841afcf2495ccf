package resolvers

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
)

// Validation helpers: each checks one value and records failures in fe
// under the GraphQL input field name.

var (
	countryRe   = regexp.MustCompile(`^[A-Za-z]{2}$`)
	versionRe   = regexp.MustCompile(`^\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$`)
	clockTimeRe = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)
)

const maxText = 255

// text trims s and checks it is non-empty (when required) and not too long.
func text(fe apierr.FieldErrors, field string, s *string, required bool) *string {
	return textMax(fe, field, s, required, maxText)
}

// textMax is text with a limit of max bytes.
func textMax(fe apierr.FieldErrors, field string, s *string, required bool, max int) *string {
	if s == nil {
		if required {
			fe.Add(field, "can't be blank")
		}
		return nil
	}
	t := strings.TrimSpace(*s)
	switch {
	case t == "" && required:
		fe.Add(field, "can't be blank")
	case len(t) > max:
		fe.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", max))
	}
	return &t
}

// longText allows up to 20,000 characters (prompts).
func longText(fe apierr.FieldErrors, field string, s *string) *string {
	if s != nil && len(*s) > 20000 {
		fe.Add(field, "is too long (maximum is 20000 characters)")
	}
	return s
}

func country(fe apierr.FieldErrors, field string, s *string) *string {
	if s == nil {
		return nil
	}
	if !countryRe.MatchString(*s) {
		fe.Add(field, "must be a two-letter ISO country code")
		return nil
	}
	up := strings.ToUpper(*s)
	return &up
}

func email(fe apierr.FieldErrors, field, s string) string {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndex(s, "@")+1:], ".") {
		fe.Add(field, "is not a valid e-mail address")
	}
	return s
}

func intRange(fe apierr.FieldErrors, field string, v *int64, lo, hi int64) {
	if v != nil && (*v < lo || *v > hi) {
		fe.Add(field, fmt.Sprintf("must be between %d and %d", lo, hi))
	}
}

func oneOf(fe apierr.FieldErrors, field string, v *string, allowed ...string) {
	if v == nil {
		return
	}
	for _, a := range allowed {
		if *v == a {
			return
		}
	}
	fe.Add(field, "must be one of "+strings.Join(allowed, ", "))
}

func stringList(fe apierr.FieldErrors, field string, vs []string) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		v = strings.TrimSpace(v)
		if v == "" {
			fe.Add(field, "must not contain blank entries")
			continue
		}
		out = append(out, v)
	}
	if len(out) > limits.MaxCapabilityListEntries {
		fe.Add(field, fmt.Sprintf("must have at most %d entries", limits.MaxCapabilityListEntries))
	}
	return out
}

func future(fe apierr.FieldErrors, field string, t *time.Time) {
	if t != nil && !t.After(time.Now()) {
		fe.Add(field, "must be in the future")
	}
}

// omitted splits an Omittable into (value, set, null).
func omitted[T any](o graphql.Omittable[*T]) (v *T, set, null bool) {
	v, set = o.ValueOK()
	return v, set, set && v == nil
}

func ptr[T any](v T) *T { return &v }
