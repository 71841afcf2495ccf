package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// APIKey is a stored key of any kind; only its digest is kept, plus the
// sealed key itself for analytics keys.
type APIKey struct {
	ID            int64      `db:"id"`
	Kind          string     `db:"kind"`
	Name          *string    `db:"name"`
	KeyPreview    string     `db:"key_preview"`
	SealedKey     []byte     `db:"sealed_key"`
	EffectiveRole *string    `db:"effective_role"`
	UserID        *int64     `db:"user_id"`
	ValidFrom     time.Time  `db:"valid_from"`
	ValidUntil    time.Time  `db:"valid_until"`
	LastUsedAt    *time.Time `db:"last_used_at"`
	CreatedAt     time.Time  `db:"created_at"`
}

// NewAPIKey is a key to insert.
type NewAPIKey struct {
	Kind          string
	Name          *string
	Digest        []byte
	KeyPreview    string
	SealedKey     []byte
	EffectiveRole *string
	UserID        int64
	ValidUntil    time.Time
}

const apiKeyCols = `id, kind, name, key_preview, sealed_key, effective_role, user_id,
	valid_from, valid_until, last_used_at, created_at`

func insertAPIKey(ctx context.Context, q pgx.Tx, ownerID int64, k NewAPIKey) (int64, error) {
	const ins = `INSERT INTO api_keys (data_owner_id, kind, name, digest, key_preview, sealed_key,
		effective_role, user_id, valid_until) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) RETURNING id`
	var id int64
	err := q.QueryRow(ctx, ins, ownerID, k.Kind, k.Name, k.Digest, k.KeyPreview, k.SealedKey,
		k.EffectiveRole, k.UserID, k.ValidUntil).Scan(&id)
	return id, mapErr("insert api key", err)
}

// CreateAPIKey inserts a key and returns it.
func (s *Store) CreateAPIKey(ctx context.Context, ownerID int64, k NewAPIKey) (APIKey, error) {
	var out APIKey
	err := s.tx(ctx, func(tx pgx.Tx) error {
		id, err := insertAPIKey(ctx, tx, ownerID, k)
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE id = $1`, id)
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
		return mapErr("load api key", err)
	})
	return out, err
}

// APIKeys lists the data owner's keys of one kind.
func (s *Store) APIKeys(ctx context.Context, ownerID int64, kind string) ([]APIKey, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE data_owner_id = $1 AND kind = $2 ORDER BY id`, ownerID, kind)
	ks, err := pgx.CollectRows(rows, pgx.RowToStructByName[APIKey])
	return ks, mapErr("list api keys", err)
}

// APIKey loads one key of one kind.
func (s *Store) APIKey(ctx context.Context, ownerID int64, kind string, id int64) (APIKey, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys
		WHERE data_owner_id = $1 AND kind = $2 AND id = $3`, ownerID, kind, id)
	k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[APIKey])
	return k, mapErr("load api key", err)
}

// DeleteAPIKey removes a key; it stops working at once.
func (s *Store) DeleteAPIKey(ctx context.Context, ownerID int64, kind string, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM api_keys WHERE data_owner_id = $1 AND kind = $2 AND id = $3`,
		ownerID, kind, id)
	s.keys.changed() // the trigger's notification may come later
	if err != nil {
		return mapErr("delete api key", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}
