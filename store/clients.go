package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Client is a client row as seen by one data owner (Shared when another
// data owner owns it and shares it with the viewer).
type Client struct {
	ID                             int64      `db:"id"`
	UUID                           string     `db:"uuid"`
	Type                           string     `db:"type"`
	Shared                         bool       `db:"shared"`
	Label                          *string    `db:"label"`
	ExtraLabel                     *string    `db:"extra_label"`
	Tags                           []string   `db:"tags"`
	CreatedAt                      time.Time  `db:"created_at"`
	UpdatedAt                      time.Time  `db:"updated_at"`
	DisabledAt                     *time.Time `db:"disabled_at"`
	DisabledReason                 *string    `db:"disabled_reason"`
	LastMeasurementAt              *time.Time `db:"last_measurement_at"`
	LastSeenAt                     *time.Time `db:"last_seen_at"`
	LastClientType                 *string    `db:"last_client_type"`
	LastClientVersion              *string    `db:"last_client_version"`
	ConfigManaged                  bool       `db:"config_managed"`
	PublicConfigID                 *int64     `db:"public_config_id"`
	AutomatorConfigID              *int64     `db:"automator_config_id"`
	AnomaliesMuted                 bool       `db:"anomalies_muted"`
	OfflineNotificationsMuted      bool       `db:"offline_notifications_muted"`
	SystemHealthNotificationsMuted bool       `db:"system_health_notifications_muted"`
	RegistrationKeyID              *int64     `db:"registration_key_id"`
	// Offline: not seen within the viewing data owner's offline threshold
	// (DefaultOfflineThresholdMinutes when it set none); nil when never
	// seen, and for every client while the viewing data owner's
	// client_offline_detection_enabled is off (no judgement is made).
	Offline *bool `db:"offline"`
}

// DefaultOfflineThresholdMinutes applies when a data owner set no offline
// threshold.
const DefaultOfflineThresholdMinutes = 60

// clientSelect reads clients visible to data owner $1: its own and those
// shared with it. Its columns are those of scanClient, in order.
var clientSelect = fmt.Sprintf(`SELECT c.id, c.uuid::text AS uuid, c.type, c.data_owner_id <> $1 AS shared, c.label,
	c.extra_label, c.tags, c.created_at, c.updated_at, c.disabled_at, c.disabled_reason,
	c.last_measurement_at, c.last_seen_at, c.last_client_type, c.last_client_version,
	c.config_managed, c.public_config_id, c.automator_config_id, c.anomalies_muted,
	c.offline_notifications_muted, c.system_health_notifications_muted, c.registration_key_id,
	CASE WHEN (SELECT client_offline_detection_enabled FROM data_owners WHERE id = $1)
		THEN c.last_seen_at < now() - make_interval(mins => coalesce(
			(SELECT offline_threshold_minutes FROM data_owners WHERE id = $1), %d)) END AS offline
	FROM clients c
	WHERE (c.data_owner_id = $1 OR EXISTS (SELECT 1 FROM client_shares s WHERE s.client_id = c.id AND s.data_owner_id = $1))`, DefaultOfflineThresholdMinutes)

// scanClient reads a row of clientSelect. Clients are read by the
// thousand, so they are scanned by position, not by name through
// reflection.
func scanClient(row pgx.CollectableRow) (Client, error) {
	return scanClientRow(row, nil)
}

// scanClientRow reads a row of head's columns, clientSelect's and tail's.
// The scan's scratch is reused from row to row (clientScans); what the
// client keeps is one small block (clientBlock) and one string.
func scanClientRow(row pgx.CollectableRow, head []any, tail ...any) (Client, error) {
	s := clientScans.Get().(*clientScan)
	defer clientScans.Put(s)
	s.c = Client{}
	args := s.args
	if len(head)+len(tail) > 0 {
		args = append(append(append(make([]any, 0, len(head)+len(args)+len(tail)), head...), args...), tail...)
	}
	if err := row.Scan(args...); err != nil {
		clear(s.raw[:]) // no buffer of the driver stays in the pool
		return Client{}, err
	}
	return s.client(), nil
}

// clientScans keeps the scratch of scanning client rows: a row's scratch
// and its destinations escape to the heap (pgx takes them as any), which
// for a list of 2,000 clients was a kilobyte a client allocated and
// dropped (issue 28).
var clientScans = sync.Pool{New: func() any {
	s := &clientScan{}
	s.args = s.dest()
	return s
}}

// clientScan is the scratch of scanning a row of clientSelect.
type clientScan struct {
	c Client
	// raw: uuid, type, label, extra_label, disabled_reason,
	// last_client_type, last_client_version (texts).
	raw                                       [7]pgtype.DriverBytes
	disabledAt, lastMeasurementAt, lastSeenAt pgtype.Timestamptz
	publicConfigID, automatorConfigID         pgtype.Int8
	registrationKeyID                         pgtype.Int8
	offline                                   pgtype.Bool
	args                                      []any // dest()
}

// clientBlock is what a scanned client points into: its columns that may
// be NULL, and its text columns, parts of one string (texts): one
// allocation per row, not one per value that is not NULL.
type clientBlock struct {
	text                                                 [7]string
	disabledAt, lastMeasurementAt, lastSeenAt            time.Time
	publicConfigID, automatorConfigID, registrationKeyID int64
	offline                                              bool
}

func (s *clientScan) dest() []any {
	c, t := &s.c, &s.raw
	return []any{&c.ID, &t[0], &t[1], &c.Shared, &t[2], &t[3], &c.Tags, &c.CreatedAt, &c.UpdatedAt,
		&s.disabledAt, &t[4], &s.lastMeasurementAt, &s.lastSeenAt, &t[5], &t[6],
		&c.ConfigManaged, &s.publicConfigID, &s.automatorConfigID, &c.AnomaliesMuted, &c.OfflineNotificationsMuted,
		&c.SystemHealthNotificationsMuted, &s.registrationKeyID, &s.offline}
}

// client is the client scanned.
func (s *clientScan) client() Client {
	c, b := s.c, new(clientBlock)
	null := texts(s.raw[:], b.text[:])
	text := func(i int) *string { return valid(&b.text[i], null&(1<<i) == 0) }
	b.disabledAt, b.lastMeasurementAt, b.lastSeenAt = s.disabledAt.Time, s.lastMeasurementAt.Time, s.lastSeenAt.Time
	b.publicConfigID, b.automatorConfigID = s.publicConfigID.Int64, s.automatorConfigID.Int64
	b.registrationKeyID, b.offline = s.registrationKeyID.Int64, s.offline.Bool
	c.UUID, c.Type = b.text[0], b.text[1]
	c.Label, c.ExtraLabel = text(2), text(3)
	c.DisabledAt, c.DisabledReason = valid(&b.disabledAt, s.disabledAt.Valid), text(4)
	c.LastMeasurementAt, c.LastSeenAt = valid(&b.lastMeasurementAt, s.lastMeasurementAt.Valid), valid(&b.lastSeenAt, s.lastSeenAt.Valid)
	c.LastClientType, c.LastClientVersion = text(5), text(6)
	c.PublicConfigID, c.AutomatorConfigID = valid(&b.publicConfigID, s.publicConfigID.Valid), valid(&b.automatorConfigID, s.automatorConfigID.Valid)
	c.RegistrationKeyID, c.Offline = valid(&b.registrationKeyID, s.registrationKeyID.Valid), valid(&b.offline, s.offline.Valid)
	return c
}

// texts makes the text columns' bytes raw (pgtype.DriverBytes: the
// driver's, valid until the next row) the strings of text, each a part of
// one string made for them all, and answers which were NULL (bit i for
// column i, whose string is empty); raw is cleared, so that the row keeps
// no buffer of the driver alive. A list of thousands of rows scanned a
// string a column was about a fifth of its allocations.
func texts(raw []pgtype.DriverBytes, text []string) (null uint64) {
	n := 0
	for _, b := range raw {
		n += len(b)
	}
	var all strings.Builder
	all.Grow(n)
	for _, b := range raw {
		all.Write(b)
	}
	s, at := all.String(), 0
	for i, b := range raw {
		if b == nil {
			null |= 1 << i
		}
		text[i], at = s[at:at+len(b)], at+len(b)
	}
	clear(raw)
	return null
}

// valid is v when it holds a value, nil when it was NULL.
func valid[T any](v *T, ok bool) *T {
	if ok {
		return v
	}
	return nil
}

// scanGroupClient reads a row of group_id followed by clientSelect's columns.
func scanGroupClient(row pgx.CollectableRow) (GroupClient, error) {
	var c GroupClient
	var err error
	c.Client, err = scanClientRow(row, []any{&c.GroupID})
	return c, err
}

// Clients lists the clients visible to the data owner: its own (through
// clients_owner) and those shared with it, apart, as clientSelect's "own
// or shared" condition alone reads every client of every data owner.
func (s *Store) Clients(ctx context.Context, ownerID int64) ([]Client, error) {
	return All(ctx, s, Read[Client]{step: "list clients", sql: clientSelect + ` AND c.data_owner_id = $1 UNION ALL ` + clientSelect +
		` AND c.data_owner_id <> $1 AND c.id IN (SELECT client_id FROM client_shares WHERE data_owner_id = $1) ORDER BY id`,
		args: []any{ownerID}, scan: scanClient})
}

// ClientsByIDs loads visible clients by id (for the dataloader).
func ClientsByIDs(ownerID int64, ids []int64) Read[Client] {
	return Read[Client]{step: "load clients", sql: clientSelect + ` AND c.id = ANY($2)`, args: []any{ownerID, ids}, scan: scanClient}
}

// Client loads a visible client by id.
func (s *Store) Client(ctx context.Context, ownerID, id int64) (Client, error) {
	return One(ctx, s, Read[Client]{step: "load client", sql: clientSelect + ` AND c.id = $2`, args: []any{ownerID, id}, scan: scanClient})
}

// ClientByUUID loads a visible client by UUID (uuid must be well-formed).
func (s *Store) ClientByUUID(ctx context.Context, ownerID int64, uuid string) (Client, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, clientSelect+` AND c.uuid = $2::uuid`, ownerID, uuid)
	c, err := pgx.CollectExactlyOneRow(rows, scanClient)
	return c, mapErr("load client", err)
}

// LabelTaken reports whether another of the data owner's own clients carries
// label (trimmed, case-insensitive). excludeID or excludeUUID, when set,
// names a client left out of the check.
func (s *Store) LabelTaken(ctx context.Context, ownerID int64, label string, excludeID *int64, excludeUUID *string) (bool, error) {
	const q = `SELECT EXISTS (SELECT 1 FROM clients WHERE data_owner_id = $1
		AND lower(btrim(label)) = lower(btrim($2))
		AND ($3::bigint IS NULL OR id <> $3) AND ($4::uuid IS NULL OR uuid <> $4))`
	var taken bool
	err := s.ReadPool(ctx).QueryRow(ctx, q, ownerID, label, excludeID, excludeUUID).Scan(&taken)
	return taken, mapErr("check label", err)
}

// NewClient is a client to insert.
type NewClient struct {
	UUID              string
	Type              string
	Label, ExtraLabel *string
	Tags              []string
	RegistrationKeyID *int64
	PublicConfigID    *int64
	LastSeenAt        *time.Time
}

// CreateClient inserts a client of the data owner.
func (s *Store) CreateClient(ctx context.Context, ownerID int64, c NewClient) (int64, error) {
	const q = `INSERT INTO clients (data_owner_id, uuid, type, label, extra_label, tags, registration_key_id,
		public_config_id, last_seen_at) VALUES ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9) RETURNING id`
	var id int64
	err := s.pool.QueryRow(ctx, q, ownerID, c.UUID, c.Type, c.Label, c.ExtraLabel, c.Tags, c.RegistrationKeyID,
		c.PublicConfigID, c.LastSeenAt).Scan(&id)
	return id, mapErr("insert client", err)
}

// ShareClient makes one of owner's clients visible to another data owner.
func (s *Store) ShareClient(ctx context.Context, ownerID, clientID, withOwnerID int64) error {
	const q = `INSERT INTO client_shares (client_id, data_owner_id)
		SELECT id, $3 FROM clients WHERE data_owner_id = $1 AND id = $2 ON CONFLICT DO NOTHING`
	tag, err := s.pool.Exec(ctx, q, ownerID, clientID, withOwnerID)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return mapErr("share client", err)
}

// ClientGroup is a group row; ClientID is set when loaded per client.
type ClientGroup struct {
	ID        int64     `db:"id"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"created_at"`
	ClientID  int64     `db:"client_id"`
}

// ClientGroups lists the data owner's groups.
func (s *Store) ClientGroups(ctx context.Context, ownerID int64) ([]ClientGroup, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+groupCols+` FROM client_groups
		WHERE data_owner_id = $1 ORDER BY name, id`, ownerID)
	gs, err := pgx.CollectRows(rows, scanGroup)
	return gs, mapErr("list client groups", err)
}

// GroupsByClient loads the data owner's groups of several clients.
func GroupsByClient(ownerID int64, clientIDs []int64) Read[ClientGroup] {
	const q = `SELECT g.id, g.name, g.created_at, m.client_id FROM client_group_members m
		JOIN client_groups g ON g.id = m.client_group_id
		WHERE g.data_owner_id = $1 AND m.client_id = ANY($2) ORDER BY g.name, g.id`
	return Read[ClientGroup]{step: "load client groups", sql: q, args: []any{ownerID, clientIDs}, scan: scanGroup}
}

// GroupClient is a client of a group.
type GroupClient struct {
	GroupID int64 `db:"group_id"`
	Client
}

// ClientsByGroup loads the clients of several of the data owner's groups.
func ClientsByGroup(ownerID int64, groupIDs []int64) Read[GroupClient] {
	q := `SELECT m.client_group_id AS group_id, v.* FROM client_group_members m
		JOIN client_groups g ON g.id = m.client_group_id AND g.data_owner_id = $1
		JOIN (` + clientSelect + `) v ON v.id = m.client_id
		WHERE m.client_group_id = ANY($2) ORDER BY v.id`
	return Read[GroupClient]{step: "load group clients", sql: q, args: []any{ownerID, groupIDs}, scan: scanGroupClient}
}

// NewContract is an ISP contract to insert.
type NewContract struct {
	IspID, ClientID            int64
	Name                       string
	UploadSpeed, DownloadSpeed *int64
	MonthlyPrice               *float64
	Currency, ConnectionType   *string
	ValidFrom, ValidUntil      *time.Time
}

// CreateContract inserts a contract between an ISP and a client of the
// owner; without ValidFrom it starts now (valid_from is never null).
func (s *Store) CreateContract(ctx context.Context, ownerID int64, c NewContract) (int64, error) {
	const q = `INSERT INTO isp_contracts (data_owner_id, isp_id, client_id, name, upload_speed, download_speed,
		monthly_price, currency, connection_type, valid_from, valid_until)
		SELECT $1, i.id, c.id, $4, $5, $6, $7, $8, $9, COALESCE($10, now()), $11 FROM isps i, clients c
		WHERE i.data_owner_id = $1 AND i.id = $2 AND c.data_owner_id = $1 AND c.id = $3 RETURNING id`
	var id int64
	err := s.pool.QueryRow(ctx, q, ownerID, c.IspID, c.ClientID, c.Name, c.UploadSpeed, c.DownloadSpeed,
		c.MonthlyPrice, c.Currency, c.ConnectionType, c.ValidFrom, c.ValidUntil).Scan(&id)
	return id, mapErr("insert contract", err)
}
