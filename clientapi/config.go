package clientapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/store"
)

// checkIn is the answer of GET /config. It holds nothing that changes by
// itself (no server time), so that its ETag changes only when what the
// probe should run does.
type checkIn struct {
	ClientUUID     string           `json:"client_uuid"`
	Label          *string          `json:"label"`
	ReportUntil    *time.Time       `json:"report_until"`
	ConfigManaged  bool             `json:"config_managed"`
	PublicConfig   *deliveredConfig `json:"public_config"`
	ScheduleConfig *deliveredConfig `json:"schedule_config"`
}

// deliveredConfig is a config as a probe receives it.
type deliveredConfig struct {
	ID        int64           `json:"id"`
	Name      string          `json:"name"`
	IsDefault bool            `json:"is_default"`
	Revision  *int64          `json:"revision"`
	Data      json.RawMessage `json:"data"`
}

// config is the check-in: GET /config answers the probe's delivered public
// and schedule configs with an ETag over the answer (and so over their
// ids and revisions), 304 when If-None-Match names it, and records the
// probe as seen with the client type and version it names
// (X-Client-Type/X-Client-Version headers or client_type/client_version
// query parameters).
func (a *API) config(w http.ResponseWriter, r *http.Request) {
	p := auth.From(r.Context()).Probe
	if err := refuseDisabled(p); err != nil {
		a.fail(w, r, err)
		return
	}
	clientType, clientVersion, err := clientSoftware(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := noBody(r); err != nil {
		a.fail(w, r, err)
		return
	}
	// One round trip: the check-in and the delivered configs.
	var b store.Batch
	var seen []bool // whether the client was marked offline
	var seenErr, deliveryErr error
	var d store.ClientDelivery
	store.QueueCheckIn(&b, p.DataOwnerID, p.ClientID, clientType, clientVersion, func(rows []bool, err error) {
		seen, seenErr = rows, err
	})
	if p.ConfigManaged {
		store.QueueDeliveredConfigs(&b, p.DataOwnerID, p.ClientID, &d, func(err error) { deliveryErr = err })
	}
	out := checkIn{ClientUUID: p.UUID, Label: p.Label, ReportUntil: p.ReportUntil, ConfigManaged: p.ConfigManaged}
	err = a.Store.Send(r.Context(), &b)
	switch {
	case err == nil && seenErr == nil && len(seen) == 0:
		err = apierr.ErrUnauthenticated // the client was deleted since its secret was checked
	case err == nil && seenErr != nil:
		err = seenErr
	case err == nil && deliveryErr != nil:
		err = deliveryErr
	case err == nil && seen[0]:
		err = a.Store.ClientOnline(r.Context(), p.DataOwnerID, p.ClientID)
	}
	if err == nil && p.ConfigManaged {
		out.PublicConfig, out.ScheduleConfig, err = a.deliveredConfigs(d)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	body, _ := json.Marshal(out)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// deliveredConfigs answers the configs the probe gets: of each kind the
// published version of the one assigned to it (directly, else through a
// client group), else the data owner's default (store.QueueDeliveredConfigs,
// the one delivery rule). The public config carries the stored secrets of
// the service credentials it names: only a registered probe sees them.
func (a *API) deliveredConfigs(d store.ClientDelivery) (public, schedule *deliveredConfig, err error) {
	if d.Public != nil {
		data, err := d.WithSecrets(a.Sealer.Open)
		if err != nil {
			return nil, nil, err
		}
		public = delivered(d.Public, data)
	}
	if d.Automator != nil {
		schedule = delivered(d.Automator, d.Automator.Data)
	}
	return public, schedule, nil
}

func delivered(c *store.DeliveredConfig, data []byte) *deliveredConfig {
	rev := c.Revision
	return &deliveredConfig{ID: c.ID, Name: c.Name, IsDefault: c.IsDefault, Revision: &rev, Data: data}
}

// etagMatches: an If-None-Match list names etag (weakly compared) or is *.
func etagMatches(values []string, etag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
	}
	return false
}

// clientSoftware reads the client type and version a probe names, from
// the X-Client-Type/X-Client-Version headers or the client_type/
// client_version query parameters (the same value may come both ways; two
// different ones are a 400). Other query parameters are a 400.
func clientSoftware(r *http.Request) (clientType, clientVersion *string, err error) {
	q := r.URL.Query()
	for k := range q {
		if k != "client_type" && k != "client_version" {
			return nil, nil, apierr.BadRequestf("unknown query parameter %q: GET %s/config takes client_type and client_version", k, Base)
		}
	}
	read := func(header, param string) (*string, error) {
		var v *string
		for _, s := range append(r.Header.Values(header), q[param]...) {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if msg := badText(s, maxTextLen); msg != "" {
				return nil, apierr.BadRequestf("%s %s", param, msg)
			}
			if v != nil && *v != s {
				return nil, apierr.BadRequestf("%s is given twice with different values (%q, %q): send it once, as the %s header or the %s query parameter",
					param, *v, s, header, param)
			}
			v = &s
		}
		return v, nil
	}
	if clientType, err = read("X-Client-Type", "client_type"); err != nil {
		return nil, nil, err
	}
	clientVersion, err = read("X-Client-Version", "client_version")
	return clientType, clientVersion, err
}

// noBody refuses a body on GET /config: whatever it asked would be ignored.
func noBody(r *http.Request) error {
	if r.ContentLength > 0 {
		return apierr.BadRequestf("GET %s/config takes no request body", Base)
	}
	return nil
}
