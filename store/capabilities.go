package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Capability is a capability row.
type Capability struct {
	ID                           int64    `db:"id"`
	Name                         string   `db:"name"`
	Comment                      *string  `db:"comment"`
	AllowedMeasurementTypes      []string `db:"allowed_measurement_types"`
	AllowedMeasurementSubjects   []string `db:"allowed_measurement_subjects"`
	ForbiddenMeasurementTypes    []string `db:"forbidden_measurement_types"`
	ForbiddenMeasurementSubjects []string `db:"forbidden_measurement_subjects"`
}

const capabilityCols = `id, name, comment, allowed_measurement_types, allowed_measurement_subjects,
	forbidden_measurement_types, forbidden_measurement_subjects`

// CapabilityInput is written by create and update; nil leaves a column alone
// (create fills defaults), ClearComment sets comment to NULL.
type CapabilityInput struct {
	Name                         *string
	Comment                      *string
	ClearComment                 bool
	AllowedMeasurementTypes      []string
	AllowedMeasurementSubjects   []string
	ForbiddenMeasurementTypes    []string
	ForbiddenMeasurementSubjects []string
}

// Capabilities lists the data owner's capabilities.
func (s *Store) Capabilities(ctx context.Context, ownerID int64) ([]Capability, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+capabilityCols+` FROM capabilities WHERE data_owner_id = $1 ORDER BY id`, ownerID)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Capability])
	return cs, mapErr("list capabilities", err)
}

// CapabilitiesByIDs loads capabilities by id (for the dataloader).
func CapabilitiesByIDs(ownerID int64, ids []int64) Read[Capability] {
	return Read[Capability]{step: "load capabilities", sql: `SELECT ` + capabilityCols + ` FROM capabilities WHERE data_owner_id = $1 AND id = ANY($2)`, args: []any{ownerID, ids}, scan: pgx.RowToStructByName[Capability]}
}

// Capability loads one capability.
func (s *Store) Capability(ctx context.Context, ownerID, id int64) (Capability, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+capabilityCols+` FROM capabilities WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Capability])
	return c, mapErr("load capability", err)
}

// CreateCapability inserts a capability.
func (s *Store) CreateCapability(ctx context.Context, ownerID int64, in CapabilityInput) (Capability, error) {
	const q = `INSERT INTO capabilities (data_owner_id, name, comment, allowed_measurement_types,
		allowed_measurement_subjects, forbidden_measurement_types, forbidden_measurement_subjects)
		VALUES ($1, $2, $3, COALESCE($4, '{}'::text[]), COALESCE($5, '{}'::text[]), COALESCE($6, '{}'::text[]), COALESCE($7, '{}'::text[]))
		RETURNING ` + capabilityCols
	rows, _ := s.pool.Query(ctx, q, ownerID, in.Name, in.Comment, in.AllowedMeasurementTypes,
		in.AllowedMeasurementSubjects, in.ForbiddenMeasurementTypes, in.ForbiddenMeasurementSubjects)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Capability])
	return c, mapErr("insert capability", err)
}

// UpdateCapability writes the fields present in in.
func (s *Store) UpdateCapability(ctx context.Context, ownerID, id int64, in CapabilityInput) (Capability, error) {
	defer s.probes.changed() // the capability is cached with its probes
	const q = `UPDATE capabilities SET name = COALESCE($3, name),
		comment = CASE WHEN $4 THEN NULL ELSE COALESCE($5, comment) END,
		allowed_measurement_types = COALESCE($6, allowed_measurement_types),
		allowed_measurement_subjects = COALESCE($7, allowed_measurement_subjects),
		forbidden_measurement_types = COALESCE($8, forbidden_measurement_types),
		forbidden_measurement_subjects = COALESCE($9, forbidden_measurement_subjects),
		updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + capabilityCols
	rows, _ := s.pool.Query(ctx, q, ownerID, id, in.Name, in.ClearComment, in.Comment, in.AllowedMeasurementTypes,
		in.AllowedMeasurementSubjects, in.ForbiddenMeasurementTypes, in.ForbiddenMeasurementSubjects)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Capability])
	return c, mapErr("update capability", err)
}

// DeleteCapability removes a capability and its registration keys.
func (s *Store) DeleteCapability(ctx context.Context, ownerID, id int64) error {
	defer s.probes.changed() // its probes lose their capability
	return s.deleteOwned(ctx, "delete capability", `DELETE FROM capabilities WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
}

// RegistrationKey is a registration key row.
type RegistrationKey struct {
	ID                   int64      `db:"id"`
	CapabilityID         int64      `db:"capability_id"`
	RegistrationKey      string     `db:"registration_key"`
	Comment              *string    `db:"comment"`
	ValidFrom            time.Time  `db:"valid_from"`
	ValidUntil           *time.Time `db:"valid_until"`
	NumRegistrationsLeft int64      `db:"num_registrations_left"`
	UsageLimitDays       *int64     `db:"usage_limit_days"`
	Testing              bool       `db:"testing"`
}

const regKeyCols = `id, capability_id, registration_key, comment, valid_from, valid_until,
	num_registrations_left, usage_limit_days, testing`

// scanRegistrationKey reads a row of regKeyCols by position (a key is read
// for every client of a list); its columns that may be NULL are scanned
// into the block of the row, and the key points into it: one allocation
// per row, not one per value that is not NULL.
func scanRegistrationKey(row pgx.CollectableRow) (RegistrationKey, error) {
	var s registrationKeyScan
	err := row.Scan(s.dest(nil)...)
	return s.key(), err
}

// registrationKeyScan is a row of regKeyCols being scanned; its text
// columns, registration_key and comment, are one string (texts).
type registrationKeyScan struct {
	k          RegistrationKey
	validUntil pgtype.Timestamptz
	usageDays  pgtype.Int8
	raw        [2]pgtype.DriverBytes
	text       [2]string
}

// dest appends the scan targets of regKeyCols to first (the targets of
// the columns read before them).
func (s *registrationKeyScan) dest(first []any) []any {
	k := &s.k
	return append(first, &k.ID, &k.CapabilityID, &s.raw[0], &s.raw[1], &k.ValidFrom, &s.validUntil,
		&k.NumRegistrationsLeft, &s.usageDays, &k.Testing)
}

// key is the key scanned.
func (s *registrationKeyScan) key() RegistrationKey {
	null := texts(s.raw[:], s.text[:])
	k := s.k
	k.RegistrationKey, k.Comment = s.text[0], valid(&s.text[1], null&2 == 0)
	k.ValidUntil, k.UsageLimitDays = valid(&s.validUntil.Time, s.validUntil.Valid), valid(&s.usageDays.Int64, s.usageDays.Valid)
	return k
}

// RegistrationKeysByCapability loads the keys of several capabilities.
func RegistrationKeysByCapability(ownerID int64, capIDs []int64) Read[RegistrationKey] {
	return Read[RegistrationKey]{step: "load registration keys", sql: `SELECT ` + regKeyCols + ` FROM registration_keys
		WHERE data_owner_id = $1 AND capability_id = ANY($2) ORDER BY id`, args: []any{ownerID, capIDs}, scan: scanRegistrationKey}
}

// RegistrationKeysByIDs loads keys by id.
func RegistrationKeysByIDs(ownerID int64, ids []int64) Read[RegistrationKey] {
	return Read[RegistrationKey]{step: "load registration keys", sql: `SELECT ` + regKeyCols + ` FROM registration_keys
		WHERE data_owner_id = $1 AND id = ANY($2)`, args: []any{ownerID, ids}, scan: scanRegistrationKey}
}

// ClientRegistrationKey is the registration key a client registered with.
type ClientRegistrationKey struct {
	ClientID int64 `db:"client_id"`
	RegistrationKey
}

// RegistrationKeysByClients loads the registration keys of several clients
// by the clients' ids (so that it can be read before the clients are:
// engine/edges.go's reads ahead of a root field).
func RegistrationKeysByClients(ownerID int64, clientIDs []int64) Read[ClientRegistrationKey] {
	return Read[ClientRegistrationKey]{step: "load registration keys", sql: `SELECT c.id AS client_id, k.id, k.capability_id,
		k.registration_key, k.comment, k.valid_from, k.valid_until, k.num_registrations_left, k.usage_limit_days, k.testing
		FROM clients c JOIN registration_keys k ON k.id = c.registration_key_id
		WHERE k.data_owner_id = $1 AND c.id = ANY($2)`, args: []any{ownerID, clientIDs}, scan: scanClientRegistrationKey}
}

// scanClientRegistrationKey reads a row of client_id followed by
// regKeyCols' columns.
func scanClientRegistrationKey(row pgx.CollectableRow) (ClientRegistrationKey, error) {
	var s struct {
		clientID int64
		key      registrationKeyScan
	}
	err := row.Scan(s.key.dest(append(make([]any, 0, 10), &s.clientID))...)
	return ClientRegistrationKey{ClientID: s.clientID, RegistrationKey: s.key.key()}, err
}

// CountRegistrationKeys counts keys per capability.
func CountRegistrationKeys(ownerID int64, capIDs []int64) Read[CountByParent] {
	return Read[CountByParent]{step: "count registration keys", sql: `SELECT capability_id AS parent_id, count(*) AS n
		FROM registration_keys WHERE data_owner_id = $1 AND capability_id = ANY($2) GROUP BY capability_id`,
		args: []any{ownerID, capIDs}, scan: pgx.RowToStructByName[CountByParent]}
}

// CountClientsByRegistrationKey counts the clients registered per key.
func CountClientsByRegistrationKey(ownerID int64, keyIDs []int64) Read[CountByParent] {
	return Read[CountByParent]{step: "count clients per key", sql: `SELECT registration_key_id AS parent_id, count(*) AS n
		FROM clients WHERE data_owner_id = $1 AND registration_key_id = ANY($2) GROUP BY registration_key_id`,
		args: []any{ownerID, keyIDs}, scan: pgx.RowToStructByName[CountByParent]}
}

// RegistrationKeyInput is written by create and update of registration keys.
type RegistrationKeyInput struct {
	CapabilityID         int64
	RegistrationKey      string
	Comment              *string
	ClearComment         bool
	ValidFrom            *time.Time
	ValidUntil           *time.Time
	ClearValidUntil      bool
	NumRegistrationsLeft *int64
	UsageLimitDays       *int64
	ClearUsageLimitDays  bool
	Testing              *bool
}

// CreateRegistrationKey inserts a key under a capability of the data owner.
func (s *Store) CreateRegistrationKey(ctx context.Context, ownerID int64, in RegistrationKeyInput) (RegistrationKey, error) {
	const q = `INSERT INTO registration_keys (data_owner_id, capability_id, registration_key, comment,
		valid_from, valid_until, num_registrations_left, usage_limit_days, testing)
		SELECT $1, c.id, $3, $4, COALESCE($5, now()), $6, COALESCE($7, -1), $8, COALESCE($9, false)
		FROM capabilities c WHERE c.data_owner_id = $1 AND c.id = $2
		RETURNING ` + regKeyCols
	rows, _ := s.pool.Query(ctx, q, ownerID, in.CapabilityID, in.RegistrationKey, in.Comment, in.ValidFrom,
		in.ValidUntil, in.NumRegistrationsLeft, in.UsageLimitDays, in.Testing)
	k, err := pgx.CollectExactlyOneRow(rows, scanRegistrationKey)
	return k, mapErr("insert registration key", err)
}

// UpdateRegistrationKey writes the fields present in in.
func (s *Store) UpdateRegistrationKey(ctx context.Context, ownerID, id int64, in RegistrationKeyInput) (RegistrationKey, error) {
	const q = `UPDATE registration_keys SET
		comment = CASE WHEN $3 THEN NULL ELSE COALESCE($4, comment) END,
		valid_from = COALESCE($5, valid_from),
		valid_until = CASE WHEN $6 THEN NULL ELSE COALESCE($7, valid_until) END,
		num_registrations_left = COALESCE($8, num_registrations_left),
		usage_limit_days = CASE WHEN $9 THEN NULL ELSE COALESCE($10, usage_limit_days) END,
		testing = COALESCE($11, testing)
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + regKeyCols
	rows, _ := s.pool.Query(ctx, q, ownerID, id, in.ClearComment, in.Comment, in.ValidFrom, in.ClearValidUntil,
		in.ValidUntil, in.NumRegistrationsLeft, in.ClearUsageLimitDays, in.UsageLimitDays, in.Testing)
	k, err := pgx.CollectExactlyOneRow(rows, scanRegistrationKey)
	return k, mapErr("update registration key", err)
}

// DeleteRegistrationKey removes a key; its clients keep running without one.
func (s *Store) DeleteRegistrationKey(ctx context.Context, ownerID, id int64) error {
	defer s.probes.changed() // its probes lose their capability
	return s.deleteOwned(ctx, "delete registration key", `DELETE FROM registration_keys WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
}
