package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// DataOwner is an organisation; every other row belongs to one.
type DataOwner struct {
	ID                             int64   `db:"id"`
	Slug                           string  `db:"slug"`
	Name                           string  `db:"name"`
	AiSystemPrompt                 *string `db:"ai_system_prompt"`
	OfflineThresholdMinutes        *int64  `db:"offline_threshold_minutes"`
	RetentionDays                  *int64  `db:"retention_days"`
	ClientOfflineDetectionEnabled  bool    `db:"client_offline_detection_enabled"`
	ClientDegradedDetectionEnabled bool    `db:"client_degraded_detection_enabled"`
	StudyFailureDetectionEnabled   bool    `db:"study_failure_detection_enabled"`
	// AnalyticsNewClients is its own bound on the clients its client
	// analytics keys create (nil: the server's; EnsureWebClients).
	AnalyticsNewClients *int64 `db:"analytics_new_clients"`
}

const dataOwnerCols = `id, slug, name, ai_system_prompt, offline_threshold_minutes,
	client_offline_detection_enabled, client_degraded_detection_enabled, study_failure_detection_enabled, analytics_new_clients, retention_days`

// DataOwner loads the caller's data owner (settings included).
func (s *Store) DataOwner(ctx context.Context, ownerID int64) (DataOwner, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+dataOwnerCols+` FROM data_owners WHERE id = $1`, ownerID)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[DataOwner])
	return d, mapErr("load data owner", err)
}

// SettingsPatch holds the settings to write; nil fields are left alone
// unless named in Clear.
type SettingsPatch struct {
	AiSystemPrompt                 *string
	ClearAiSystemPrompt            bool
	OfflineThresholdMinutes        *int64
	ClearOfflineThreshold          bool
	RetentionDays                  *int64
	ClearRetention                 bool
	ClientOfflineDetectionEnabled  *bool
	ClientDegradedDetectionEnabled *bool
	StudyFailureDetectionEnabled   *bool
	AnalyticsNewClients            *int64
	ClearAnalyticsNewClients       bool
}

// UpdateSettings writes the fields present in p.
func (s *Store) UpdateSettings(ctx context.Context, ownerID int64, p SettingsPatch) (DataOwner, error) {
	const q = `UPDATE data_owners SET
		ai_system_prompt = CASE WHEN $2 THEN NULL ELSE COALESCE($3, ai_system_prompt) END,
		offline_threshold_minutes = CASE WHEN $4 THEN NULL ELSE COALESCE($5, offline_threshold_minutes) END,
		client_offline_detection_enabled = COALESCE($6, client_offline_detection_enabled),
		client_degraded_detection_enabled = COALESCE($7, client_degraded_detection_enabled),
		study_failure_detection_enabled = COALESCE($8, study_failure_detection_enabled),
		analytics_new_clients = CASE WHEN $9 THEN NULL ELSE COALESCE($10, analytics_new_clients) END,
		retention_days = CASE WHEN $11 THEN NULL ELSE COALESCE($12, retention_days) END
	WHERE id = $1 RETURNING ` + dataOwnerCols
	rows, _ := s.pool.Query(ctx, q, ownerID, p.ClearAiSystemPrompt, p.AiSystemPrompt,
		p.ClearOfflineThreshold, p.OfflineThresholdMinutes, p.ClientOfflineDetectionEnabled,
		p.ClientDegradedDetectionEnabled, p.StudyFailureDetectionEnabled, p.ClearAnalyticsNewClients, p.AnalyticsNewClients,
		p.ClearRetention, p.RetentionDays)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[DataOwner])
	return d, mapErr("update settings", err)
}

// Bootstrapped is what Bootstrap created.
type Bootstrapped struct {
	DataOwnerID int64
	UserID      int64
	KeyID       int64
}

// Bootstrap creates the data owner if missing, an org_admin user for email
// (reused when present) and an org_admin key with the given digest.
func (s *Store) Bootstrap(ctx context.Context, slug, email string, key NewAPIKey) (Bootstrapped, error) {
	var b Bootstrapped
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const upsertOwner = `INSERT INTO data_owners (slug, name) VALUES ($1, $1)
			ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`
		if err := tx.QueryRow(ctx, upsertOwner, slug).Scan(&b.DataOwnerID); err != nil {
			return mapErr("create data owner", err)
		}
		const upsertUser = `INSERT INTO users (data_owner_id, email, username, role)
			VALUES ($1, $2, $2, 'org_admin')
			ON CONFLICT (data_owner_id, lower(email)) DO UPDATE SET role = 'org_admin', updated_at = now()
			RETURNING id`
		if err := tx.QueryRow(ctx, upsertUser, b.DataOwnerID, email).Scan(&b.UserID); err != nil {
			return mapErr("create user", err)
		}
		key.UserID = b.UserID
		id, err := insertAPIKey(ctx, tx, b.DataOwnerID, key)
		b.KeyID = id
		return err
	})
	return b, err
}

// KeyOwner is what authentication needs to know about a presented key.
type KeyOwner struct {
	KeyID         int64     `db:"id"`
	DataOwnerID   int64     `db:"data_owner_id"`
	DataOwnerSlug string    `db:"slug"`
	Kind          string    `db:"kind"`
	EffectiveRole *string   `db:"effective_role"`
	UserID        *int64    `db:"user_id"`
	UserRole      *string   `db:"user_role"`
	ValidFrom     time.Time `db:"valid_from"`
	ValidUntil    time.Time `db:"valid_until"`
}

// KeyByDigest finds the key with the given digest, from the key cache when
// it holds it (keycache.go), and records its use, at most once a minute per
// key: the lookup is a plain read, and only a key whose last use is older
// than that gets a second, writing statement.
func (s *Store) KeyByDigest(ctx context.Context, digest []byte) (KeyOwner, error) {
	now := time.Now()
	if k, ok := s.keys.get(digest, now); ok {
		return k, nil
	}
	gen, _ := s.keys.generation()
	const q = `SELECT k.id, k.data_owner_id, d.slug, k.kind, k.effective_role, k.user_id,
		       u.role AS user_role, k.valid_from, k.valid_until,
		       k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute' AS stale
		FROM api_keys k JOIN data_owners d ON d.id = k.data_owner_id
		LEFT JOIN users u ON u.id = k.user_id AND u.data_owner_id = k.data_owner_id
		WHERE k.digest = $1`
	var k KeyOwner
	var stale bool
	err := s.pool.QueryRow(ctx, q, digest).Scan(&k.KeyID, &k.DataOwnerID, &k.DataOwnerSlug, &k.Kind, &k.EffectiveRole,
		&k.UserID, &k.UserRole, &k.ValidFrom, &k.ValidUntil, &stale)
	if err != nil {
		return k, mapErr("find api key", err)
	}
	if stale && !now.Before(k.ValidFrom) && now.Before(k.ValidUntil) {
		const touch = `UPDATE api_keys SET last_used_at = now()
			WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`
		if _, err := s.pool.Exec(ctx, touch, k.KeyID); err != nil {
			return k, mapErr("record api key use", err)
		}
	}
	s.keys.put(digest, k, gen, now)
	return k, nil
}
