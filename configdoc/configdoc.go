// Package configdoc is the measurement config document: parsed and checked
// into a Doc or field errors under "data.…" (studies, credentials without
// secrets, schedules and their cron expressions), and the version it saves.
package configdoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// Config documents (docs/design.md "Fleet"): parsed into a checked document or
// field errors under "data.…" (the document's own key names, as written).

// ServiceName is the name of a service: of its credentials, and of the
// credentials a config document names.
var ServiceName = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// Limits of a config document.
const (
	MaxConfigDocumentBytes = 256 << 10 // canonical JSON
	MaxConfigStudies       = 500
	MaxStudyIDLength       = 128
)

// secretKeys are the keys of a credentials entry that hold secrets: they
// belong in service credentials, never in a config document.
var secretKeys = []string{"password", "secret", "token", "api_key", "apiKey", "access_token", "accessToken", "passphrase", "private_key", "privateKey"}

// Doc is a checked config document.
type Doc struct {
	doc     map[string]any
	studies []store.StudyInput // public configs
	// credentials are the services the document names, in key order.
	Credentials []string
	// dropped lists the secret keys an import removed, as "service.key".
	Dropped []string
}

// Parse checks v (an object, or with fromText also its JSON
// text) as a document of kind. With dropSecrets, secrets in credentials
// are removed (and listed) instead of refused.
func Parse(fe apierr.FieldErrors, kind model.ConfigKind, v any, fromText, dropSecrets bool) *Doc {
	raw, err := json.Marshal(v)
	if s, isText := v.(string); isText && fromText {
		raw, err = []byte(s), nil
	}
	if err != nil {
		fe.Add("data", "is not a JSON value")
		return nil
	}
	if len(raw) > MaxConfigDocumentBytes*2 {
		fe.Add("data", fmt.Sprintf("is too large (at most %d bytes of JSON)", MaxConfigDocumentBytes))
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	err = dec.Decode(&doc)
	if err == nil && dec.More() {
		err = errors.New("text after the document")
	}
	if err != nil || doc == nil {
		if fromText {
			fe.Add("data", "must be a JSON object (or its JSON text)")
		} else {
			fe.Add("data", "must be a JSON object")
		}
		return nil
	}
	d := &Doc{doc: doc}
	switch ver := doc["version"].(type) {
	case nil:
		doc["version"] = json.Number("1")
	case json.Number:
		if ver.String() != "1" {
			fe.Add("data.version", "must be 1")
		}
	default:
		fe.Add("data.version", "must be 1")
	}
	if kind == model.ConfigPublic {
		d.checkStudies(fe)
		d.checkCredentials(fe, dropSecrets)
	} else {
		checkSchedules(fe, doc)
	}
	if u, ok := doc["updates"]; ok && kind == model.ConfigAutomator {
		if _, isObj := u.(map[string]any); !isObj {
			fe.Add("data.updates", "must be an object")
		}
	}
	return d
}

// checkStudies checks the studies and makes their description inputs.
func (d *Doc) checkStudies(fe apierr.FieldErrors) {
	list, ok := docList(fe, d.doc, "studies", "studies")
	if !ok {
		return
	}
	seen := map[string]int{}
	for i, v := range list {
		at := fmt.Sprintf("data.studies.%d", i)
		st, ok := v.(map[string]any)
		if !ok {
			fe.Add(at, "must be an object")
			continue
		}
		in := store.StudyInput{}
		in.StudyID = docText(fe, st, "id", at+".id", MaxStudyIDLength)
		if j, dup := seen[in.StudyID]; dup && in.StudyID != "" {
			fe.Add(at+".id", fmt.Sprintf("is the id of study %d too", j))
		}
		seen[in.StudyID] = i
		in.Type = docText(fe, st, "type", at+".type", 32)
		if _, known := vocab.StudyTypes[in.Type]; in.Type != "" && !known {
			fe.Add(at+".type", "must be one of "+strings.Join(vocab.StudyTypeNames, ", "))
		}
		in.Subject = docText(fe, st, "subject", at+".subject", 64)
		for _, key := range []string{"params", "names"} {
			if p, has := st[key]; has {
				if _, isObj := p.(map[string]any); !isObj {
					fe.Add(at+"."+key, "must be an object")
				}
			}
		}
		if n, has := st["native"]; has {
			if _, isBool := n.(bool); !isBool {
				fe.Add(at+".native", "must be true or false")
			}
		}
		if iid, has := st["internalId"]; has {
			s, isText := iid.(string)
			if !isText {
				fe.Add(at+".internalId", "must be a string")
			}
			in.InternalID = &s
		}
		checkNames(fe, st, at)
		in.Name = studyName(st, in.StudyID)
		in.Data, in.Hash = canonical(st)
		d.studies = append(d.studies, in)
	}
}

// checkNames checks names: locale -> {short, long} strings.
func checkNames(fe apierr.FieldErrors, st map[string]any, at string) {
	names, _ := st["names"].(map[string]any)
	for locale, v := range names {
		n, ok := v.(map[string]any)
		if !ok {
			fe.Add(at+".names."+locale, "must be an object with short and long")
			continue
		}
		for _, k := range []string{"short", "long"} {
			if s, has := n[k]; has {
				if _, isText := s.(string); !isText {
					fe.Add(at+".names."+locale+"."+k, "must be a string")
				}
			}
		}
	}
}

// studyName is how a study description is named: its en_US long name,
// else its en_US short name, else its id.
func studyName(st map[string]any, id string) string {
	names, _ := st["names"].(map[string]any)
	en, _ := names["en_US"].(map[string]any)
	for _, k := range []string{"long", "short"} {
		if s, _ := en[k].(string); strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return id
}

// checkCredentials checks that credentials is an object of service ->
// object without secrets.
func (d *Doc) checkCredentials(fe apierr.FieldErrors, dropSecrets bool) {
	v, has := d.doc["credentials"]
	if !has {
		return
	}
	creds, ok := v.(map[string]any)
	if !ok {
		fe.Add("data.credentials", "must be an object of service names")
		return
	}
	for service, entry := range creds {
		at := "data.credentials." + service
		if !ServiceName.MatchString(service) {
			fe.Add(at, "must be named by a service: lower-case letters, digits and _ (at most 64)")
			continue
		}
		d.Credentials = append(d.Credentials, service)
		e, ok := entry.(map[string]any)
		if !ok {
			fe.Add(at, "must be an object")
			continue
		}
		for _, k := range secretKeys {
			if _, secret := e[k]; !secret {
				continue
			}
			if dropSecrets {
				delete(e, k)
				d.Dropped = append(d.Dropped, service+"."+k)
				continue
			}
			fe.Add(at+"."+k, "must not be in a config: store secrets as a service credential of service \""+service+"\" (POST /service_credentials)")
		}
	}
	slices.Sort(d.Credentials)
	slices.Sort(d.Dropped)
}

// checkSchedules checks a schedule config's studySchedules.
func checkSchedules(fe apierr.FieldErrors, doc map[string]any) {
	list, ok := docList(fe, doc, "studySchedules", "schedules")
	if !ok {
		return
	}
	for i, v := range list {
		at := fmt.Sprintf("data.studySchedules.%d", i)
		s, ok := v.(map[string]any)
		if !ok {
			fe.Add(at, "must be an object with studyIds and cron")
			continue
		}
		ids, ok := s["studyIds"].([]any)
		if !ok || len(ids) == 0 || len(ids) > MaxConfigStudies {
			fe.Add(at+".studyIds", fmt.Sprintf("must be an array of 1 to %d study ids", MaxConfigStudies))
		}
		for j, id := range ids {
			if t, isText := id.(string); !isText || strings.TrimSpace(t) == "" || len(t) > MaxStudyIDLength {
				fe.Add(fmt.Sprintf("%s.studyIds.%d", at, j), fmt.Sprintf("must be a study id (1 to %d characters)", MaxStudyIDLength))
			}
		}
		expr, isText := s["cron"].(string)
		if !isText {
			fe.Add(at+".cron", "must be a cron expression such as \"0 */6 * * *\"")
			continue
		}
		if err := checkCron(expr); err != nil {
			fe.Add(at+".cron", err.Error())
		}
	}
}

// docList is the array doc holds at key, of at most MaxConfigStudies
// elements (of what, for the messages); false, and the error on
// data.key, when it is anything else.
func docList(fe apierr.FieldErrors, doc map[string]any, key, what string) ([]any, bool) {
	list, ok := doc[key].([]any)
	if !ok {
		fe.Add("data."+key, "must be an array of "+what)
		return nil, false
	}
	if len(list) > MaxConfigStudies {
		fe.Add("data."+key, fmt.Sprintf("must have at most %d %s", MaxConfigStudies, what))
		return nil, false
	}
	return list, true
}

// docText reads obj's key, a required string of at most max bytes (field
// is where errors go: the path of the key).
func docText(fe apierr.FieldErrors, obj map[string]any, key, field string, max int) string {
	s, ok := obj[key].(string)
	switch {
	case !ok:
		fe.Add(field, "must be a string")
	case strings.TrimSpace(s) == "":
		fe.Add(field, "can't be blank")
	case len(s) > max:
		fe.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", max))
	}
	return s
}

// canonical is v's canonical JSON (object keys sorted, no insignificant
// space, numbers as written, no HTML escaping) and its SHA-256 in hex.
func canonical(v any) ([]byte, string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of decoded JSON always encode
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	sum := sha256.Sum256(out)
	return out, hex.EncodeToString(sum[:])
}

// Version makes the stored version of the document for a revision: the
// document carries its revision.
func (d *Doc) Version(fe apierr.FieldErrors) store.BuildVersion {
	return func(revision int64) (store.VersionInput, error) {
		d.doc["revision"] = json.Number(strconv.FormatInt(revision, 10))
		data, hash := canonical(d.doc)
		if len(data) > MaxConfigDocumentBytes {
			fe.Add("data", fmt.Sprintf("is too large (at most %d bytes of JSON)", MaxConfigDocumentBytes))
			return store.VersionInput{}, fe.Err()
		}
		return store.VersionInput{Data: data, Hash: hash, Studies: d.studies}, nil
	}
}

// Cron expressions: five fields (minute hour day-of-month month
// day-of-week) of *, values, ranges, steps and lists, month and weekday
// names, or one of the @ macros.
var (
	cronMacros = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
	cronFields = []struct {
		name   string
		lo, hi int
		names  []string
	}{
		{"minute", 0, 59, nil},
		{"hour", 0, 23, nil},
		{"day of month", 1, 31, nil},
		{"month", 1, 12, []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
		{"day of week", 0, 7, []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
	}
	cronItemRe = regexp.MustCompile(`^(\*|[0-9A-Za-z]+(?:-[0-9A-Za-z]+)?)(?:/([0-9]+))?$`)
)

// checkCron reports what is wrong with a cron expression, or nil.
func checkCron(expr string) error {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "@") {
		if slices.Contains(cronMacros, expr) {
			return nil
		}
		return fmt.Errorf("%q is not a cron macro (%s)", expr, strings.Join(cronMacros, ", "))
	}
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return fmt.Errorf("%q must have 5 fields (minute hour day-of-month month day-of-week), not %d", expr, len(fields))
	}
	for i, f := range fields {
		spec := cronFields[i]
		for _, item := range strings.Split(f, ",") {
			m := cronItemRe.FindStringSubmatch(item)
			if m == nil {
				return fmt.Errorf("%q: %s %q is not *, a value, a range or a step", expr, spec.name, item)
			}
			if m[2] != "" {
				if n, _ := strconv.Atoi(m[2]); n < 1 || n > spec.hi {
					return fmt.Errorf("%q: %s step %q must be between 1 and %d", expr, spec.name, m[2], spec.hi)
				}
			}
			if m[1] == "*" {
				continue
			}
			bounds := strings.SplitN(m[1], "-", 2)
			vals := make([]int, len(bounds))
			for j, b := range bounds {
				v, ok := cronValue(b, spec.lo, spec.names)
				if !ok || v < spec.lo || v > spec.hi {
					return fmt.Errorf("%q: %s %q is out of range %d-%d", expr, spec.name, b, spec.lo, spec.hi)
				}
				vals[j] = v
			}
			if len(vals) == 2 && vals[0] > vals[1] {
				return fmt.Errorf("%q: %s range %q runs backwards", expr, spec.name, m[1])
			}
		}
	}
	return nil
}

// cronValue reads a number or a (case-insensitive) name of a field.
func cronValue(s string, lo int, names []string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	for i, name := range names {
		if strings.EqualFold(s, name) {
			return lo + i, true
		}
	}
	return 0, false
}

// Build checks a config document of kind as the API does
// (refusing secrets) and answers what saves it as a version; for tools
// that write configs without a request (serve --demo, test factories).
func Build(kind model.ConfigKind, doc any) (store.BuildVersion, error) {
	fe := apierr.FieldErrors{}
	d := Parse(fe, kind, doc, false, false)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return d.Version(fe), nil
}
