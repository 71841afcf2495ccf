package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServiceCredential is a credential row; the password stays sealed.
type ServiceCredential struct {
	ID             int64     `db:"id"`
	Name           string    `db:"name"`
	Service        string    `db:"service"`
	Username       *string   `db:"username"`
	SealedPassword []byte    `db:"sealed_password"`
	CreatedAt      time.Time `db:"created_at"`
	UpdatedAt      time.Time `db:"updated_at"`
}

const credentialCols = `id, name, service, username, sealed_password, created_at, updated_at`

// CredentialInput is written by create and update; nil leaves a column alone.
type CredentialInput struct {
	Name, Service, Username *string
	ClearUsername           bool
	SealedPassword          []byte
}

// ServiceCredentials lists the data owner's credentials.
func (s *Store) ServiceCredentials(ctx context.Context, ownerID int64) ([]ServiceCredential, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+credentialCols+` FROM service_credentials WHERE data_owner_id = $1 ORDER BY id`, ownerID)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[ServiceCredential])
	return cs, mapErr("list service credentials", err)
}

// ServiceCredential loads one credential.
func (s *Store) ServiceCredential(ctx context.Context, ownerID, id int64) (ServiceCredential, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+credentialCols+` FROM service_credentials WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ServiceCredential])
	return c, mapErr("load service credential", err)
}

// CreateServiceCredential inserts a credential.
func (s *Store) CreateServiceCredential(ctx context.Context, ownerID int64, in CredentialInput) (ServiceCredential, error) {
	const q = `INSERT INTO service_credentials (data_owner_id, name, service, username, sealed_password)
		VALUES ($1,$2,$3,$4,$5) RETURNING ` + credentialCols
	rows, _ := s.pool.Query(ctx, q, ownerID, in.Name, in.Service, in.Username, in.SealedPassword)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ServiceCredential])
	return c, mapErr("insert service credential", err)
}

// UpdateServiceCredential writes the fields present; a nil SealedPassword
// keeps the stored password.
func (s *Store) UpdateServiceCredential(ctx context.Context, ownerID, id int64, in CredentialInput) (ServiceCredential, error) {
	const q = `UPDATE service_credentials SET name = COALESCE($3, name), service = COALESCE($4, service),
		username = CASE WHEN $5 THEN NULL ELSE COALESCE($6, username) END,
		sealed_password = COALESCE($7, sealed_password), updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + credentialCols
	rows, _ := s.pool.Query(ctx, q, ownerID, id, in.Name, in.Service, in.ClearUsername, in.Username, in.SealedPassword)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ServiceCredential])
	return c, mapErr("update service credential", err)
}

// DeleteServiceCredential removes a credential.
func (s *Store) DeleteServiceCredential(ctx context.Context, ownerID, id int64) error {
	return s.deleteOwned(ctx, "delete service credential", `DELETE FROM service_credentials WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
}
