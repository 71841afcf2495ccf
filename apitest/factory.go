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
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/resolvers"
	"github.com/fleetgraph/fleetgraph/store"
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
	key, rec := resolvers.NewKeyRecord(e.Sealer, auth.KindClientAdmin, 0, nil, nil, nil)
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
	key, rec := resolvers.NewKeyRecord(o.env.Sealer, opts.Kind, userID, nil, opts.ValidUntil, role)
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
		u.NotificationConfig = []byte(`{}`)
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

// NewConfig makes a measurement config of kind (public, automator, ...).
func (o *Owner) NewConfig(t testing.TB, kind, name string, isDefault bool) int64 {
	t.Helper()
	id, err := o.env.Store.CreateConfig(context.Background(), o.ID, kind, name, isDefault)
	if err != nil {
		t.Fatalf("create config: %v", err)
	}
	return id
}

// NewGroup makes a client group (a unique name when name is "") of clients.
func (o *Owner) NewGroup(t testing.TB, name string, clientIDs ...int64) int64 {
	t.Helper()
	if name == "" {
		name = Unique("group")
	}
	id, err := o.env.Store.CreateClientGroup(context.Background(), o.ID, name, clientIDs)
	if err != nil {
		t.Fatalf("create group: %v", err)
	}
	return id
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
