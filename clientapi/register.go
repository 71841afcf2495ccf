package clientapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/respond"
	"github.com/fleetgraph/fleetgraph/store"
)

// Bounds of what a probe names about itself.
const (
	maxLabelLen = 255
	maxTags     = 50
	maxTagLen   = 100
	maxTextLen  = 100 // client_type, client_version
)

// registered is the answer of a registration; the secret is shown once.
type registered struct {
	ClientUUID  string     `json:"client_uuid"`
	Secret      string     `json:"secret"`
	Label       *string    `json:"label"`
	Tags        []string   `json:"tags"`
	ReportUntil *time.Time `json:"report_until"`
	CreatedAt   time.Time  `json:"created_at"`
}

// registrationBody is the body of POST /register as the API describes it
// (openapi.go); parseRegistration reads it field by field, to name each
// wrong one.
type registrationBody struct {
	RegistrationKey string   `json:"registration_key"`
	Label           *string  `json:"label,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	ClientType      *string  `json:"client_type,omitempty"`
	ClientVersion   *string  `json:"client_version,omitempty"`
}

// register exchanges a registration key for a new client and its secret:
// POST /register {"registration_key", "label"?, "tags"?, "client_type"?,
// "client_version"?} → 201.
func (a *API) register(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-API-KEY") != "" {
		a.fail(w, r, apierr.BadRequestf("POST %s/register takes the registration key in the body "+
			`({"registration_key": ...}), not an X-API-KEY header`, Base))
		return
	}
	in, err := parseRegistration(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	secret := auth.NewKey(auth.KindProbe)
	in.UUID = uuid.NewString()
	in.SecretDigest = auth.Digest(secret)
	if !a.registering.enter(r.Context()) {
		a.fail(w, r, r.Context().Err())
		return
	}
	c, err := a.Store.RegisterProbe(r.Context(), in)
	a.registering.leave()
	if err != nil {
		a.fail(w, r, err)
		return
	}
	respond.JSON(w, http.StatusCreated, registered{ClientUUID: c.UUID, Secret: secret, Label: in.Label,
		Tags: in.Tags, ReportUntil: c.ReportUntil, CreatedAt: c.CreatedAt})
}

// parseRegistration reads the body into a store.Registration, collecting
// field errors (a 422); unknown fields are errors too.
func parseRegistration(r *http.Request) (store.Registration, error) {
	var out store.Registration
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return out, bodyError(err)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &body); err != nil || body == nil {
		return out, apierr.BadRequestf(`the body must be a JSON object such as {"registration_key": "..."}`)
	}
	fe := apierr.FieldErrors{}
	for k, v := range body {
		switch k {
		case "registration_key":
			if s := text(fe, k, v, 1000); s != nil {
				out.RegistrationKey = *s
			}
		case "label":
			out.Label = text(fe, k, v, maxLabelLen)
			if out.Label != nil && strings.TrimSpace(*out.Label) == "" {
				fe.Add(k, "must not be blank")
			}
		case "tags":
			out.Tags = tags(fe, v)
		case "client_type":
			out.ClientType = text(fe, k, v, maxTextLen)
		case "client_version":
			out.ClientVersion = text(fe, k, v, maxTextLen)
		default:
			fe.Add(k, "is not a field of a registration (registration_key, label, tags, client_type, client_version)")
		}
	}
	if out.RegistrationKey == "" && fe["registration_key"] == nil {
		fe.Add("registration_key", "is required")
	}
	return out, fe.Err()
}

// text reads an optional string field of at most max characters (null:
// nil), without control characters.
func text(fe apierr.FieldErrors, field string, v json.RawMessage, max int) *string {
	var s *string
	if err := json.Unmarshal(v, &s); err != nil {
		fe.Add(field, "must be a string")
		return nil
	}
	if s != nil {
		if msg := badText(*s, max); msg != "" {
			fe.Add(field, msg)
			return nil
		}
	}
	return s
}

// badText says what is wrong with a probe's text, or "".
func badText(s string, max int) string {
	switch {
	case utf8.RuneCountInString(s) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "must not contain control characters"
	}
	return ""
}

// tags reads the optional tags: distinct non-blank strings.
func tags(fe apierr.FieldErrors, v json.RawMessage) []string {
	var ts []string
	if err := json.Unmarshal(v, &ts); err != nil {
		fe.Add("tags", "must be an array of strings")
		return nil
	}
	if len(ts) > maxTags {
		fe.Add("tags", fmt.Sprintf("must hold at most %d tags", maxTags))
		return nil
	}
	seen := map[string]bool{}
	for i, t := range ts {
		field := fmt.Sprintf("tags.%d", i)
		switch {
		case strings.TrimSpace(t) == "":
			fe.Add(field, "must not be blank")
		case badText(t, maxTagLen) != "":
			fe.Add(field, badText(t, maxTagLen))
		case seen[t]:
			fe.Add(field, "repeats tag "+t)
		}
		seen[t] = true
	}
	return ts
}

// bodyError is the answer to a body that could not be read.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apierr.Errorf(apierr.ErrTooLarge, "request body is larger than %d bytes", tooBig.Limit)
	}
	return apierr.BadRequestf("could not read the request body")
}
