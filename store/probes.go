package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// Probes: the clients that registered through the client API
// (/client_api/v1, package clientapi) and authenticate with a per-client
// secret, of which only the digest is stored (clients.secret_digest).

// Registration is what a probe sends to register, with the UUID and the
// secret's digest the server made for it.
type Registration struct {
	RegistrationKey string
	UUID            string
	SecretDigest    []byte
	Label           *string
	Tags            []string
	ClientType      *string
	ClientVersion   *string
}

// Registered is the client a registration made.
type Registered struct {
	ClientID    int64
	DataOwnerID int64
	UUID        string
	ReportUntil *time.Time
	CreatedAt   time.Time
}

// Refusals of a registration, each with a message for the probe.
var (
	ErrRegistrationKeyUnknown = apierr.Errorf(apierr.ErrUnauthenticated, "unknown registration key")
	ErrRegistrationsExhausted = apierr.Errorf(apierr.ErrForbidden, "the registration key has no registrations left")
)

// RegisterProbe makes a client of the registration key's data owner in one
// transaction. Refused (and nothing written) when the key is unknown
// (ErrRegistrationKeyUnknown), outside valid_from/valid_until, has no
// registrations left (ErrRegistrationsExhausted), or when the label is
// another client's of the data owner (trimmed, case-insensitive: a
// conflict). A key with a number of registrations left is decremented by
// an UPDATE that checks the count (-1 stays: unlimited), so concurrent
// registrations never take it below zero: the row lock makes each one
// re-check the count the one before left. The client.registered event is
// emitted in the same transaction. The UPDATE comes last, so the
// key's row is locked only until the commit that follows it.
func (s *Store) RegisterProbe(ctx context.Context, r Registration) (Registered, error) {
	var out Registered
	err := s.tx(ctx, func(tx pgx.Tx) error {
		k, err := registrationKey(ctx, tx, r.RegistrationKey)
		if err != nil {
			return err
		}
		out.DataOwnerID = k.ownerID
		if r.Label != nil {
			const taken = `SELECT EXISTS (SELECT 1 FROM clients WHERE data_owner_id = $1
				AND lower(btrim(label)) = lower(btrim($2)))`
			var isTaken bool
			if err := tx.QueryRow(ctx, taken, k.ownerID, *r.Label).Scan(&isTaken); err != nil {
				return mapErr("check label", err)
			}
			if isTaken {
				return apierr.Errorf(apierr.ErrConflict, "label %q is already another client's", *r.Label)
			}
		}
		const ins = `INSERT INTO clients (data_owner_id, uuid, type, label, tags, registration_key_id,
			secret_digest, report_until, last_seen_at, last_client_type, last_client_version)
			VALUES ($1, $2::uuid, 'automator', $3, $4, $5, $6, now() + make_interval(days => $7::int), now(), $8, $9)
			RETURNING id, uuid::text, report_until, created_at`
		err = tx.QueryRow(ctx, ins, k.ownerID, r.UUID, r.Label, r.Tags, k.id, r.SecretDigest, k.usageLimitDays,
			r.ClientType, r.ClientVersion).Scan(&out.ClientID, &out.UUID, &out.ReportUntil, &out.CreatedAt)
		if err != nil {
			return mapErr("insert client", err)
		}
		err = s.Emit(ctx, tx, k.ownerID, NewEvent{Type: EventClientRegistered, ClientID: &out.ClientID,
			Data: map[string]any{"registration_key_id": k.id, "client_type": r.ClientType, "client_version": r.ClientVersion}})
		if err != nil || k.left == -1 {
			return err
		}
		const take = `UPDATE registration_keys SET num_registrations_left =
			CASE WHEN num_registrations_left > 0 THEN num_registrations_left - 1 ELSE num_registrations_left END
			WHERE id = $1 AND num_registrations_left <> 0
			AND valid_from <= now() AND (valid_until IS NULL OR valid_until > now())`
		tag, err := tx.Exec(ctx, take, k.id)
		if err != nil {
			return mapErr("take registration", err)
		}
		if tag.RowsAffected() == 0 {
			if _, err := registrationKey(ctx, tx, r.RegistrationKey); err != nil { // why, as it is now
				return err
			}
			return ErrRegistrationsExhausted
		}
		return nil
	})
	return out, err
}

// regKey is what a registration reads of its registration key.
type regKey struct {
	id, ownerID    int64
	left           int64
	usageLimitDays *int64
}

// registrationKey reads the registration key with the given text, or tells
// why it cannot register a client: unknown, outside its validity, no
// registrations left.
func registrationKey(ctx context.Context, tx pgx.Tx, key string) (regKey, error) {
	const q = `SELECT id, data_owner_id, num_registrations_left, usage_limit_days, valid_from, valid_until, now()
		FROM registration_keys WHERE registration_key = $1`
	var k regKey
	var from, now time.Time
	var until *time.Time
	err := tx.QueryRow(ctx, q, key).Scan(&k.id, &k.ownerID, &k.left, &k.usageLimitDays, &from, &until, &now)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return k, ErrRegistrationKeyUnknown
	case err != nil:
		return k, mapErr("load registration key", err)
	case now.Before(from):
		return k, apierr.Errorf(apierr.ErrForbidden, "the registration key is valid from %s", from.UTC().Format(time.RFC3339))
	case until != nil && !now.Before(*until):
		return k, apierr.Errorf(apierr.ErrForbidden, "the registration key expired at %s", until.UTC().Format(time.RFC3339))
	case k.left == 0:
		return k, ErrRegistrationsExhausted
	}
	return k, nil
}

// Probe is what the client API needs to know about an authenticated probe:
// its client, and the capability of the registration key it registered
// with (all lists empty when the key is gone).
type Probe struct {
	ClientID          int64
	UUID              string
	DataOwnerID       int64
	DataOwnerSlug     string
	Label             *string
	DisabledAt        *time.Time
	DisabledReason    *string
	ReportUntil       *time.Time
	ConfigManaged     bool
	PublicConfigID    *int64
	AutomatorConfigID *int64
	CapabilityName    *string
	Capability        Capability
}

// ProbeByDigest finds the probe whose secret has the given digest, from
// the probe cache when it holds it (keycache.go). The caller checks
// DisabledAt and ReportUntil at every request, as they are cached too.
func (s *Store) ProbeByDigest(ctx context.Context, digest []byte) (Probe, error) {
	now := time.Now()
	if p, ok := s.probes.get(digest, now); ok {
		return p, nil
	}
	gen, _ := s.probes.generation()
	const q = `SELECT c.id, c.uuid::text, c.data_owner_id, d.slug, c.label, c.disabled_at, c.disabled_reason,
		c.report_until, c.config_managed, c.public_config_id, c.automator_config_id, cap.name,
		coalesce(cap.allowed_measurement_types, '{}'), coalesce(cap.allowed_measurement_subjects, '{}'),
		coalesce(cap.forbidden_measurement_types, '{}'), coalesce(cap.forbidden_measurement_subjects, '{}')
		FROM clients c JOIN data_owners d ON d.id = c.data_owner_id
		LEFT JOIN registration_keys k ON k.id = c.registration_key_id AND k.data_owner_id = c.data_owner_id
		LEFT JOIN capabilities cap ON cap.id = k.capability_id AND cap.data_owner_id = c.data_owner_id
		WHERE c.secret_digest = $1`
	var p Probe
	cp := &p.Capability
	err := s.pool.QueryRow(ctx, q, digest).Scan(&p.ClientID, &p.UUID, &p.DataOwnerID, &p.DataOwnerSlug, &p.Label,
		&p.DisabledAt, &p.DisabledReason, &p.ReportUntil, &p.ConfigManaged, &p.PublicConfigID, &p.AutomatorConfigID,
		&p.CapabilityName, &cp.AllowedMeasurementTypes, &cp.AllowedMeasurementSubjects,
		&cp.ForbiddenMeasurementTypes, &cp.ForbiddenMeasurementSubjects)
	if err != nil {
		return p, mapErr("find probe", err)
	}
	s.probes.put(digest, p, gen, now)
	return p, nil
}

// QueueCheckIn queues to b the record that a probe was seen now, with the
// client type and version it named (nil keeps the stored one); done gets
// whether the client was marked offline (then ClientOnline tells it is
// back; no row when the client is gone).
//
// The batch commits without waiting for its WAL to reach the disk
// (synchronous_commit off for its transaction alone): a crash may lose the
// last fraction of a second of check-ins, which the probes' next check-ins
// redo, while a check-in no longer queues for the WAL flush behind the
// reports' large transactions (bench/probes.sh: most check-ins waited on
// WALWrite).
func QueueCheckIn(b *Batch, ownerID, clientID int64, clientType, clientVersion *string, done func([]bool, error)) {
	const q = `UPDATE clients SET last_seen_at = now(),
		last_client_type = coalesce($3, last_client_type), last_client_version = coalesce($4, last_client_version)
		WHERE data_owner_id = $1 AND id = $2 RETURNING offline_since IS NOT NULL`
	Queue(b, Read[bool]{step: "check in", sql: q, args: []any{ownerID, clientID, clientType, clientVersion}, scan: pgx.RowTo[bool]}, done)
	// After Queue, which opens the batch with genericPlans for the reads
	// queued after it (the delivered configs); it counts at the commit.
	b.b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
}

// ClientOnline clears the offline mark of one of the data owner's clients
// and emits client.online in the same transaction; a client not marked
// offline (another check-in cleared it first) changes nothing.
func (s *Store) ClientOnline(ctx context.Context, ownerID, clientID int64) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		const q = `UPDATE clients c SET offline_since = NULL FROM (SELECT id, offline_since FROM clients
			WHERE data_owner_id = $1 AND id = $2 AND offline_since IS NOT NULL FOR UPDATE) old
			WHERE c.id = old.id RETURNING old.offline_since, c.last_seen_at`
		var since, seen time.Time
		err := tx.QueryRow(ctx, q, ownerID, clientID).Scan(&since, &seen)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return mapErr("mark client online", err)
		}
		return s.Emit(ctx, tx, ownerID, NewEvent{Type: EventClientOnline, ClientID: &clientID,
			Data: map[string]any{"offline_since": since.UTC(), "last_seen_at": seen.UTC()}})
	})
}

// MarkOfflineClients marks offline every client of every data owner with
// client offline detection on that was seen once but not within its
// owner's offline threshold, is not disabled and is not marked yet, each
// with a client.offline event in the same transaction (run periodically
// by the job queue). It answers how many it marked.
func (s *Store) MarkOfflineClients(ctx context.Context) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const q = `UPDATE clients c SET offline_since = now() FROM data_owners d
			WHERE d.id = c.data_owner_id AND d.client_offline_detection_enabled
			AND c.offline_since IS NULL AND c.disabled_at IS NULL AND c.last_seen_at IS NOT NULL
			AND c.last_seen_at < now() - make_interval(mins => coalesce(d.offline_threshold_minutes, $1))
			RETURNING c.data_owner_id, c.id, c.last_seen_at, coalesce(d.offline_threshold_minutes, $1)`
		rows, err := tx.Query(ctx, q, DefaultOfflineThresholdMinutes)
		if err != nil {
			return mapErr("mark clients offline", err)
		}
		byOwner := map[int64][]NewEvent{}
		var owners []int64
		for rows.Next() {
			var owner, id int64
			var seen time.Time
			var minutes int
			if err := rows.Scan(&owner, &id, &seen, &minutes); err != nil {
				return mapErr("mark clients offline", err)
			}
			if byOwner[owner] == nil {
				owners = append(owners, owner)
			}
			byOwner[owner] = append(byOwner[owner], NewEvent{Type: EventClientOffline, ClientID: &id,
				Data: map[string]any{"last_seen_at": seen.UTC(), "offline_threshold_minutes": minutes}})
			n++
		}
		if err := rows.Err(); err != nil {
			return mapErr("mark clients offline", err)
		}
		for _, owner := range owners {
			if err := s.Emit(ctx, tx, owner, byOwner[owner]...); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// ReportingClient is a client a client-analytics key reports for.
type ReportingClient struct {
	UUID       string     `db:"uuid"`
	Foreign    bool       `db:"foreign"`    // another data owner's
	Registered bool       `db:"registered"` // a probe with its own secret
	DisabledAt *time.Time `db:"disabled_at"`
	Limited    bool       `db:"-"` // not made: the data owner's bound on new web clients
}

// EnsureWebClients makes the clients of the given UUIDs that do not exist
// yet (type web: web-embedded clients that do not register) for the data
// owner, at most its bound of them created within period: its own
// (DataOwner.AnalyticsNewClients), else defaultLimit (negative: no bound).
// It answers what the client API checks of each UUID; the UUIDs it would
// have made past the bound are answered as Limited, and limit is the bound
// that limited them. The first refusal of a period emits
// client_analytics.clients_limited to the data owner.
func (s *Store) EnsureWebClients(ctx context.Context, ownerID int64, uuids []string, defaultLimit int, period time.Duration) (
	cs []ReportingClient, limit int, err error) {
	const missing = `SELECT u::text FROM unnest($1::uuid[]) u WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.uuid = u) ORDER BY u`
	rows, _ := s.pool.Query(ctx, missing, uuids)
	create, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, 0, mapErr("find new web clients", err)
	}
	var limited []string
	if len(create) > 0 {
		if limited, limit, err = s.createWebClients(ctx, ownerID, create, defaultLimit, period); err != nil {
			return nil, 0, err
		}
	}
	const q = `SELECT uuid::text AS uuid, data_owner_id <> $1 AS foreign, secret_digest IS NOT NULL AS registered,
		disabled_at FROM clients WHERE uuid = ANY($2::uuid[])`
	rows, _ = s.pool.Query(ctx, q, ownerID, uuids)
	cs, err = pgx.CollectRows(rows, pgx.RowToStructByName[ReportingClient])
	for _, u := range limited {
		cs = append(cs, ReportingClient{UUID: u, Limited: true})
	}
	return cs, limit, mapErr("load reporting clients", err)
}

// createWebClients creates the web clients of uuids within the data
// owner's bound (under a lock of its row, so that parallel reports count
// one after the other) and answers those past it, and the bound.
func (s *Store) createWebClients(ctx context.Context, ownerID int64, uuids []string, defaultLimit int, period time.Duration) (
	limited []string, limit int, err error) {
	const lock = `SELECT COALESCE(analytics_new_clients, $2) FROM data_owners WHERE id = $1 FOR UPDATE`
	const recent = `SELECT count(*) FROM clients WHERE data_owner_id = $1 AND type = 'web' AND created_at > now() - $2 * interval '1 millisecond'`
	const ins = `INSERT INTO clients (data_owner_id, uuid, type)
		SELECT $1, u, 'web' FROM unnest($2::uuid[]) u ORDER BY u ON CONFLICT (uuid) DO NOTHING`
	const noticed = `SELECT EXISTS (SELECT 1 FROM events WHERE data_owner_id = $1 AND type = $2
		AND occurred_at > now() - $3 * interval '1 millisecond')`
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, lock, ownerID, defaultLimit).Scan(&limit); err != nil {
			return err
		}
		if limit >= 0 {
			var made int
			if err := tx.QueryRow(ctx, recent, ownerID, period.Milliseconds()).Scan(&made); err != nil {
				return err
			}
			if room := max(0, limit-made); room < len(uuids) {
				uuids, limited = uuids[:room], uuids[room:]
			}
		}
		if _, err := tx.Exec(ctx, ins, ownerID, uuids); err != nil {
			return err
		}
		if len(limited) == 0 {
			return nil
		}
		var seen bool
		if err := tx.QueryRow(ctx, noticed, ownerID, EventWebClientsLimited, period.Milliseconds()).Scan(&seen); err != nil || seen {
			return err
		}
		return s.Emit(ctx, tx, ownerID, NewEvent{Type: EventWebClientsLimited, Data: map[string]any{
			"limit": limit, "period": period.String(), "refused_client_uuids": limited}})
	})
	return limited, limit, mapErr("create web clients", err)
}
