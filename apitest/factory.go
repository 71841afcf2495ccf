package apitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/configdoc"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The factories below create records straight through the store. Each takes
// the store's input type as overrides: fields left zero get a default.

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var ownerSeq atomic.Int64

// Owner is a bootstrapped data owner with an org_admin key.
type Owner struct {
	ID     int64
	Slug   string
	UserID int64
	Key    string // org_admin client_admin key
	env    *Env
}

// NewOwner bootstraps a data owner with a unique slug starting with prefix.
func (e *Env) NewOwner(t testing.TB, prefix string) *Owner {
	t.Helper()
	return e.NewOwnerSlug(t, fmt.Sprintf("%s_%d_%s", strings.ToLower(strings.ReplaceAll(prefix, "-", "_")), ownerSeq.Add(1), randomHex(3)))
}

// NewOwnerSlug bootstraps a data owner with exactly the given slug.
func (e *Env) NewOwnerSlug(t testing.TB, slug string) *Owner {
	t.Helper()
	key, rec := auth.NewKeyRecord(e.Sealer, auth.KindClientAdmin, 0, nil, nil, nil)
	b, err := e.Store.Bootstrap(context.Background(), slug, "admin@"+slug+".example", rec)
	if err != nil {
		t.Fatalf("bootstrap %s: %v", slug, err)
	}
	return &Owner{ID: b.DataOwnerID, Slug: slug, UserID: b.UserID, Key: key, env: e}
}

// KeyOpts shape a key made by Owner.NewKey.
type KeyOpts struct {
	Kind          auth.Kind  // default client_admin
	UserRole      model.Role // role of the key's user (a new user is made); default org_admin
	EffectiveRole *model.Role
	ValidUntil    *time.Time
}

// NewKey makes a user with the given role (unless org_admin: the owner's own
// user) and a key for it, straight through the store.
func (o *Owner) NewKey(t testing.TB, opts KeyOpts) (key string, keyID int64) {
	t.Helper()
	ctx := context.Background()
	if opts.Kind == "" {
		opts.Kind = auth.KindClientAdmin
	}
	userID := o.UserID
	if opts.UserRole != "" && opts.UserRole != model.RoleOrgAdmin {
		name := fmt.Sprintf("%s-%s", opts.UserRole, randomHex(4))
		u, err := o.env.Store.CreateUser(ctx, o.ID, store.NewUser{Email: name + "@" + o.Slug + ".example",
			Username: name, Role: string(opts.UserRole), NotificationConfig: []byte(`{}`)})
		if err != nil {
			t.Fatalf("create %s user: %v", opts.UserRole, err)
		}
		userID = u.ID
	}
	var role *string
	if opts.EffectiveRole != nil {
		r := string(*opts.EffectiveRole)
		role = &r
	}
	key, rec := auth.NewKeyRecord(o.env.Sealer, opts.Kind, userID, nil, opts.ValidUntil, role)
	k, err := o.env.Store.CreateAPIKey(ctx, o.ID, rec)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return key, k.ID
}

// NewUser makes a user of the data owner. Defaults: a unique username, an
// e-mail address under the owner's slug, role viewer, notification config {}.
func (o *Owner) NewUser(t testing.TB, u store.NewUser) store.User {
	t.Helper()
	if u.Username == "" {
		u.Username = Unique("person")
	}
	if u.Email == "" {
		u.Email = u.Username + "@" + o.Slug + ".example"
	}
	if u.Role == "" {
		u.Role = string(model.RoleViewer)
	}
	if u.NotificationConfig == nil {
		u.NotificationConfig = []byte(store.DefaultNotificationConfig) // as POST /client_admin_users gives
	}
	rec, err := o.env.Store.CreateUser(context.Background(), o.ID, u)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	return rec
}

// Client is a client made by Owner.NewClient.
type Client struct {
	ID          int64
	UUID, Label string
}

// NewClient makes a client of the data owner. Defaults: a new UUID, type
// automator.
func (o *Owner) NewClient(t testing.TB, c store.NewClient) Client {
	t.Helper()
	if c.UUID == "" {
		c.UUID = uuid.NewString()
	}
	if c.Type == "" {
		c.Type = "automator"
	}
	id, err := o.env.Store.CreateClient(context.Background(), o.ID, c)
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	out := Client{ID: id, UUID: c.UUID}
	if c.Label != nil {
		out.Label = *c.Label
	}
	return out
}

// NewISP makes an ISP. Defaults: a unique name, country DE, type fixed.
func (o *Owner) NewISP(t testing.TB, in store.IspInput) store.Isp {
	t.Helper()
	if in.Name == nil {
		in.Name = Ptr(Unique("isp"))
	}
	if in.Country == nil {
		in.Country = Ptr("DE")
	}
	if in.Type == nil {
		in.Type = Ptr("fixed")
	}
	isp, err := o.env.Store.CreateIsp(context.Background(), o.ID, in)
	if err != nil {
		t.Fatalf("create isp: %v", err)
	}
	return isp
}

// NewCapability makes a capability. Default: a unique name.
func (o *Owner) NewCapability(t testing.TB, in store.CapabilityInput) store.Capability {
	t.Helper()
	if in.Name == nil {
		in.Name = Ptr(Unique("capability"))
	}
	c, err := o.env.Store.CreateCapability(context.Background(), o.ID, in)
	if err != nil {
		t.Fatalf("create capability: %v", err)
	}
	return c
}

// NewRegistrationKey makes a registration key. Defaults: under a new
// capability, a unique key.
func (o *Owner) NewRegistrationKey(t testing.TB, in store.RegistrationKeyInput) store.RegistrationKey {
	t.Helper()
	if in.CapabilityID == 0 {
		in.CapabilityID = o.NewCapability(t, store.CapabilityInput{}).ID
	}
	if in.RegistrationKey == "" {
		in.RegistrationKey = Unique("registration-key-" + o.Slug)
	}
	k, err := o.env.Store.CreateRegistrationKey(context.Background(), o.ID, in)
	if err != nil {
		t.Fatalf("create registration key: %v", err)
	}
	return k
}

// CredentialOpts shape a service credential made by Owner.NewCredential.
type CredentialOpts struct {
	Name     string // default: unique
	Service  string // default ookla
	Username *string
	Password string // sealed with the environment's sealer; none when empty
}

// NewCredential makes a service credential.
func (o *Owner) NewCredential(t testing.TB, opts CredentialOpts) store.ServiceCredential {
	t.Helper()
	if opts.Name == "" {
		opts.Name = Unique("credential")
	}
	if opts.Service == "" {
		opts.Service = "ookla"
	}
	in := store.CredentialInput{Name: &opts.Name, Service: &opts.Service, Username: opts.Username}
	if opts.Password != "" {
		in.SealedPassword = o.env.Sealer.Seal(opts.Password)
	}
	c, err := o.env.Store.CreateServiceCredential(context.Background(), o.ID, in)
	if err != nil {
		t.Fatalf("create service credential: %v", err)
	}
	return c
}

// NewConfig makes a measurement config of kind (public or automator) with
// a published version (revision 1) of an empty document, so that clients
// get it.
func (o *Owner) NewConfig(t testing.TB, kind, name string, isDefault bool) int64 {
	t.Helper()
	return o.NewConfigWith(t, ConfigOpts{Kind: kind, Name: name, IsDefault: isDefault})
}

// ConfigOpts are the overrides of NewConfigWith.
type ConfigOpts struct {
	Kind      string // default public
	Name      string // default unique
	IsDefault bool
	// Published is the document of the published version (default: no
	// studies, or no schedules); Unpublished leaves the config without one.
	Published   any
	Unpublished bool
	// Draft, when set, is saved as the draft after publishing.
	Draft any
}

// EmptyConfigDocument is a document of kind without studies or schedules.
func EmptyConfigDocument(kind string) map[string]any {
	if kind == store.ConfigAutomator {
		return map[string]any{"version": 1, "studySchedules": []any{}}
	}
	return map[string]any{"version": 1, "studies": []any{}}
}

// NewConfigWith makes a measurement config through the store, its
// documents checked as the API checks them.
func (o *Owner) NewConfigWith(t testing.TB, opts ConfigOpts) int64 {
	t.Helper()
	if opts.Kind == "" {
		opts.Kind = store.ConfigPublic
	}
	if opts.Name == "" {
		opts.Name = Unique("config")
	}
	ctx := context.Background()
	in := store.ConfigInput{Kind: opts.Kind, Name: &opts.Name, IsDefault: opts.IsDefault, Publish: !opts.Unpublished}
	var build store.BuildVersion
	if !opts.Unpublished {
		doc := opts.Published
		if doc == nil {
			doc = EmptyConfigDocument(opts.Kind)
		}
		build = o.configVersion(t, opts.Kind, doc)
	}
	id, _, err := o.env.Store.CreateConfig(ctx, o.ID, nil, in, build)
	if err != nil {
		t.Fatalf("create config: %v", err)
	}
	if opts.Draft != nil {
		if _, err := o.env.Store.UpdateConfig(ctx, o.ID, nil, id, store.ConfigInput{Kind: opts.Kind},
			o.configVersion(t, opts.Kind, opts.Draft)); err != nil {
			t.Fatalf("save config draft: %v", err)
		}
	}
	return id
}

func (o *Owner) configVersion(t testing.TB, kind string, doc any) store.BuildVersion {
	t.Helper()
	// Round-trip through JSON: documents arrive decoded, as in a request.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("config document: %v", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("config document: %v", err)
	}
	build, err := configdoc.Build(model.ConfigKind(kind), v)
	if err != nil {
		t.Fatalf("config document: %v", err)
	}
	return build
}

// NewGroup makes a client group (a unique name when name is "") of clients.
func (o *Owner) NewGroup(t testing.TB, name string, clientIDs ...int64) int64 {
	t.Helper()
	if name == "" {
		name = Unique("group")
	}
	g, err := o.env.Store.CreateClientGroup(context.Background(), o.ID, name, store.ClientIDs(clientIDs))
	if err != nil {
		t.Fatalf("create group: %v", err)
	}
	return g.ID
}

// NewContract makes an ISP contract. Defaults: a new ISP, a new client, a
// unique name.
func (o *Owner) NewContract(t testing.TB, c store.NewContract) int64 {
	t.Helper()
	if c.IspID == 0 {
		c.IspID = o.NewISP(t, store.IspInput{}).ID
	}
	if c.ClientID == 0 {
		c.ClientID = o.NewClient(t, store.NewClient{}).ID
	}
	if c.Name == "" {
		c.Name = Unique("contract")
	}
	id, err := o.env.Store.CreateContract(context.Background(), o.ID, c)
	if err != nil {
		t.Fatalf("create contract: %v", err)
	}
	return id
}

// InsertDocuments stores documents of kind (measurement, client_report, ...)
// through the store, as `fleetgraph import` does.
func (o *Owner) InsertDocuments(t testing.TB, kind string, docs ...map[string]any) {
	t.Helper()
	rows := make([]store.Document, len(docs))
	for i, d := range docs {
		raw, _ := json.Marshal(d)
		doc, err := store.ParseDocument(kind, raw)
		if err != nil {
			t.Fatalf("parse %s %v: %v", kind, d["id"], err)
		}
		rows[i] = doc
	}
	res, err := o.env.Store.InsertDocuments(context.Background(), o.ID, rows)
	if err != nil || len(res.Refused) > 0 {
		t.Fatalf("insert %s: %v %+v", kind, err, res)
	}
}

// SQL runs a statement on the test database (for state no store function
// writes).
func (e *Env) SQL(t testing.TB, q string, args ...any) {
	t.Helper()
	if _, err := e.Store.Pool().Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("seed %q: %v", q, err)
	}
}

// StatusRecord shapes a system status record made by Owner.NewSystemStatus.
type StatusRecord struct {
	ClientUUID string    // required
	CreatedAt  time.Time // default now
	// CPU and Memory are the average percents, Filesystem the final percent
	// of the one filesystem "/"; nil leaves the metric out.
	CPU, Memory, Filesystem *float64
	Transport               string         // type of the one connection detail; default ethernet
	Extra                   map[string]any // further fields, replacing the defaults
}

// NewSystemStatus stores a system status record as `fleetgraph import
// --kind system_status` does and returns its record id.
func (o *Owner) NewSystemStatus(t testing.TB, r StatusRecord) int64 {
	t.Helper()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	if r.Transport == "" {
		r.Transport = "ethernet"
	}
	docID := Unique("status")
	at := r.CreatedAt.UTC().Format(time.RFC3339Nano)
	doc := map[string]any{"id": docID, "client_uuid": r.ClientUUID, "created_at": at, "run_id": docID + "-run",
		"study_ids": []string{}, "measurement_ids": []int64{}, "collection_errors": []string{},
		"connection_details": []map[string]any{{"id": 1, "type": r.Transport, "client_time": at}},
		"filesystems":        []map[string]any{}}
	if r.CPU != nil {
		doc["cpu_average_percent"], doc["cpu_valid_sample_count"] = *r.CPU, 10
	}
	if r.Memory != nil {
		doc["memory_average_percent"], doc["memory_valid_sample_count"] = *r.Memory, 10
	}
	if r.Filesystem != nil {
		doc["filesystems"] = []map[string]any{{"mount": "/", "writable": true, "valid_sample_count": 10,
			"final_percent": *r.Filesystem}}
	}
	for k, v := range r.Extra {
		doc[k] = v
	}
	o.InsertDocuments(t, vocab.KindSystemStatus, doc)
	d, err := o.env.Store.Document(context.Background(), o.ID, vocab.KindSystemStatus, docID)
	if err != nil {
		t.Fatalf("load system status record %s: %v", docID, err)
	}
	return d.ID
}

// MeasurementOpts shape a measurement made by Owner.NewMeasurements.
type MeasurementOpts struct {
	ClientUUID string    // required
	Subject    string    // study.subject; none when empty
	Type       string    // default VideoMeasurement
	CreatedAt  time.Time // default now
	ID         string    // default unique
}

// NewMeasurements stores measurements of the data owner's clients (as
// `fleetgraph import` does) and returns their ids.
func (o *Owner) NewMeasurements(t testing.TB, ms ...MeasurementOpts) []string {
	t.Helper()
	docs := make([]map[string]any, len(ms))
	ids := make([]string, len(ms))
	for i, m := range ms {
		if m.ID == "" {
			m.ID = Unique("measurement-" + o.Slug)
		}
		if m.Type == "" {
			m.Type = "VideoMeasurement"
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = time.Now()
		}
		d := map[string]any{"id": m.ID, "client_uuid": m.ClientUUID, "type": m.Type,
			"created_at": m.CreatedAt.UTC().Format(time.RFC3339Nano)}
		if m.Subject != "" {
			d["study"] = map[string]any{"subject": m.Subject}
		}
		docs[i], ids[i] = d, m.ID
	}
	o.InsertDocuments(t, "measurement", docs...)
	return ids
}

// Probe is a client registered through the client API's store path, with
// the secret it authenticates with.
type Probe struct {
	ID     int64
	UUID   string
	Secret string
}

// NewProbe registers a probe with the registration key regKey (text), as
// POST /client_api/v1/register does, straight through the store.
func (o *Owner) NewProbe(t testing.TB, regKey string) Probe {
	t.Helper()
	secret := auth.NewKey(auth.KindProbe)
	c, err := o.env.Store.RegisterProbe(context.Background(), store.Registration{RegistrationKey: regKey,
		UUID: uuid.NewString(), SecretDigest: auth.Digest(secret)})
	if err != nil {
		t.Fatalf("register probe: %v", err)
	}
	if c.DataOwnerID != o.ID {
		t.Fatalf("registration key %q is another data owner's", regKey)
	}
	return Probe{ID: c.ClientID, UUID: c.UUID, Secret: secret}
}
