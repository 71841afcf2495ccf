package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Isp is an ISP row.
type Isp struct {
	ID               int64     `db:"id"`
	Name             string    `db:"name"`
	Type             string    `db:"type"`
	Country          string    `db:"country"`
	AlternativeNames []string  `db:"alternative_names"`
	AsNumbers        []string  `db:"as_numbers"`
	IsVpn            *bool     `db:"is_vpn"`
	Verified         *bool     `db:"verified"`
	CreatedAt        time.Time `db:"created_at"`
}

const ispCols = `id, name, type, country, alternative_names, as_numbers, is_vpn, verified, created_at`

// IspFilter narrows the ISP list; nil fields do not filter. Limit 0 means none.
type IspFilter struct {
	Country  *string
	NameLike *string
	Type     *string
	Verified *bool
	Limit    int
}

// Isps lists the data owner's ISPs by name.
func (s *Store) Isps(ctx context.Context, ownerID int64, f IspFilter) ([]Isp, error) {
	const q = `SELECT ` + ispCols + ` FROM isps WHERE data_owner_id = $1
		AND ($2::text IS NULL OR country = upper($2))
		AND ($3::text IS NULL OR strpos(lower(name), lower($3)) > 0)
		AND ($4::text IS NULL OR type = $4)
		AND ($5::boolean IS NULL OR verified IS NOT DISTINCT FROM $5)
		ORDER BY lower(name), id
		LIMIT CASE WHEN $6 > 0 THEN $6 END`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID, f.Country, f.NameLike, f.Type, f.Verified, f.Limit)
	is, err := pgx.CollectRows(rows, pgx.RowToStructByName[Isp])
	return is, mapErr("list isps", err)
}

// IspsByIDs loads ISPs by id (for the dataloader).
func IspsByIDs(ownerID int64, ids []int64) Read[Isp] {
	return Read[Isp]{step: "load isps", sql: `SELECT ` + ispCols + ` FROM isps WHERE data_owner_id = $1 AND id = ANY($2)`, args: []any{ownerID, ids}, scan: pgx.RowToStructByName[Isp]}
}

// Isp loads one ISP.
func (s *Store) Isp(ctx context.Context, ownerID, id int64) (Isp, error) {
	return One(ctx, s, Read[Isp]{step: "load isp", sql: `SELECT ` + ispCols + ` FROM isps WHERE data_owner_id = $1 AND id = $2`,
		args: []any{ownerID, id}, scan: pgx.RowToStructByName[Isp]})
}

// IspInput is written by CreateIsp and UpdateIsp; for updates nil leaves
// the column alone and ClearIsVpn sets is_vpn to NULL.
type IspInput struct {
	Name, Country, Type *string
	IsVpn               *bool
	ClearIsVpn          bool
}

// CreateIsp inserts an ISP.
func (s *Store) CreateIsp(ctx context.Context, ownerID int64, in IspInput) (Isp, error) {
	const q = `INSERT INTO isps (data_owner_id, name, country, type, is_vpn) VALUES ($1,$2,$3,$4,$5) RETURNING ` + ispCols
	rows, _ := s.pool.Query(ctx, q, ownerID, in.Name, in.Country, in.Type, in.IsVpn)
	i, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Isp])
	return i, mapErr("insert isp", err)
}

// UpdateIsp writes the fields present in in.
func (s *Store) UpdateIsp(ctx context.Context, ownerID, id int64, in IspInput) (Isp, error) {
	const q = `UPDATE isps SET name = COALESCE($3, name), country = COALESCE($4, country),
		type = COALESCE($5, type), is_vpn = CASE WHEN $6 THEN NULL ELSE COALESCE($7, is_vpn) END,
		updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 RETURNING ` + ispCols
	rows, _ := s.pool.Query(ctx, q, ownerID, id, in.Name, in.Country, in.Type, in.ClearIsVpn, in.IsVpn)
	i, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Isp])
	return i, mapErr("update isp", err)
}

// DeleteIsp removes an ISP with its contracts and details.
func (s *Store) DeleteIsp(ctx context.Context, ownerID, id int64) error {
	return s.deleteOwned(ctx, "delete isp", `DELETE FROM isps WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
}

// MergeIsp moves contracts, details, alternative names (the source's name
// included) and AS numbers of ISP id onto target, deletes id and returns target.
func (s *Store) MergeIsp(ctx context.Context, ownerID, id, target int64) (Isp, error) {
	var out Isp
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const lock = `SELECT count(*) FROM (SELECT id FROM isps WHERE data_owner_id = $1 AND id IN ($2, $3) FOR UPDATE) l`
		var n int
		if err := tx.QueryRow(ctx, lock, ownerID, id, target).Scan(&n); err != nil {
			return mapErr("lock isps", err)
		}
		if n != 2 {
			return ErrNotFound
		}
		const merge = `UPDATE isps t SET
			alternative_names = ARRAY(SELECT DISTINCT x FROM unnest(t.alternative_names || s.alternative_names || s.name) x
			                          WHERE lower(x) <> lower(t.name) ORDER BY x),
			as_numbers = ARRAY(SELECT DISTINCT x FROM unnest(t.as_numbers || s.as_numbers) x ORDER BY x),
			updated_at = now()
			FROM isps s WHERE t.data_owner_id = $1 AND t.id = $3 AND s.data_owner_id = $1 AND s.id = $2`
		if _, err := tx.Exec(ctx, merge, ownerID, id, target); err != nil {
			return mapErr("merge isp names", err)
		}
		for _, q := range []string{
			`UPDATE isp_contracts SET isp_id = $3 WHERE data_owner_id = $1 AND isp_id = $2`,
			`UPDATE isp_details SET isp_id = $3 WHERE data_owner_id = $1 AND isp_id = $2`,
			`DELETE FROM isps WHERE data_owner_id = $1 AND id = $2 AND $3 > 0`,
		} {
			if _, err := tx.Exec(ctx, q, ownerID, id, target); err != nil {
				return mapErr("merge isp", err)
			}
		}
		rows, _ := tx.Query(ctx, `SELECT `+ispCols+` FROM isps WHERE data_owner_id = $1 AND id = $2`, ownerID, target)
		var err error
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Isp])
		return mapErr("load merged isp", err)
	})
	return out, err
}

// IspContract is a contract row.
type IspContract struct {
	ID             int64      `db:"id"`
	IspID          int64      `db:"isp_id"`
	ClientID       int64      `db:"client_id"`
	Name           string     `db:"name"`
	UploadSpeed    *int64     `db:"upload_speed"`
	DownloadSpeed  *int64     `db:"download_speed"`
	MonthlyPrice   *float64   `db:"monthly_price"`
	Currency       *string    `db:"currency"`
	AssumedTariff  *string    `db:"assumed_tariff"`
	ConnectionType *string    `db:"connection_type"`
	ValidFrom      time.Time  `db:"valid_from"`
	ValidUntil     *time.Time `db:"valid_until"`
	// IspName is the name of the contract's ISP, read with the contract:
	// the dashboard shows it beside every contract.
	IspName string `db:"isp_name"`
}

// contractSelect reads contracts (c) with their ISP's name; the caller adds
// the WHERE clause, which scopes c.data_owner_id.
const contractSelect = `SELECT c.id, c.isp_id, c.client_id, c.name, c.upload_speed, c.download_speed,
	c.monthly_price::float8 AS monthly_price, c.currency, c.assumed_tariff, c.connection_type, c.valid_from, c.valid_until,
	i.name AS isp_name
	FROM isp_contracts c JOIN isps i ON i.id = c.isp_id AND i.data_owner_id = c.data_owner_id`

// scanContract reads a row of contractSelect, by position, with a
// reused scratch (as scanClientRow). Its columns that may be NULL, and its
// text columns (parts of one string), are in one small block the
// contract points into.
func scanContract(row pgx.CollectableRow) (IspContract, error) {
	s := contractScans.Get().(*contractScan)
	defer contractScans.Put(s)
	s.c = IspContract{}
	if err := row.Scan(s.args...); err != nil {
		clear(s.raw[:]) // no buffer of the driver stays in the pool
		return IspContract{}, err
	}
	b := new(contractBlock)
	null := texts(s.raw[:], b.text[:])
	text := func(i int) *string { return valid(&b.text[i], null&(1<<i) == 0) }
	b.upload, b.download, b.price, b.validUntil = s.upload.Int64, s.download.Int64, s.price.Float64, s.validUntil.Time
	out := s.c
	out.Name, out.IspName = b.text[0], b.text[4]
	out.UploadSpeed, out.DownloadSpeed = valid(&b.upload, s.upload.Valid), valid(&b.download, s.download.Valid)
	out.MonthlyPrice, out.ValidUntil = valid(&b.price, s.price.Valid), valid(&b.validUntil, s.validUntil.Valid)
	out.Currency, out.AssumedTariff, out.ConnectionType = text(1), text(2), text(3)
	return out, nil
}

// contractScan is the scratch of scanning a row of contractSelect.
type contractScan struct {
	c                IspContract
	upload, download pgtype.Int8
	price            pgtype.Float8
	validUntil       pgtype.Timestamptz
	// name, currency, assumed_tariff, connection_type, isp_name (texts)
	raw  [5]pgtype.DriverBytes
	args []any
}

var contractScans = sync.Pool{New: func() any {
	s := &contractScan{}
	c, t := &s.c, &s.raw
	s.args = []any{&c.ID, &c.IspID, &c.ClientID, &t[0], &s.upload, &s.download, &s.price,
		&t[1], &t[2], &t[3], &c.ValidFrom, &s.validUntil, &t[4]}
	return s
}}

// contractBlock is what a scanned contract points into.
type contractBlock struct {
	text             [5]string
	upload, download int64
	price            float64
	validUntil       time.Time
}

// ContractsByIsp loads the contracts of several ISPs.
func ContractsByIsp(ownerID int64, ispIDs []int64) Read[IspContract] {
	return Read[IspContract]{step: "load contracts", sql: contractSelect + `
		WHERE c.data_owner_id = $1 AND c.isp_id = ANY($2) ORDER BY c.id`, args: []any{ownerID, ispIDs}, scan: scanContract}
}

// ContractsByClient loads the contracts of several clients.
func ContractsByClient(ownerID int64, clientIDs []int64) Read[IspContract] {
	return Read[IspContract]{step: "load contracts", sql: contractSelect + `
		WHERE c.data_owner_id = $1 AND c.client_id = ANY($2) ORDER BY c.valid_from DESC NULLS LAST, c.id DESC`,
		args: []any{ownerID, clientIDs}, scan: scanContract}
}

// CountByParent counts rows of a child table per parent id.
type CountByParent struct {
	ParentID int64 `db:"parent_id"`
	N        int64 `db:"n"`
}

// IspChildCount is the number of contracts and details of one ISP.
type IspChildCount struct {
	IspID, Contracts, Details int64
}

// IspChildCounts counts contracts and details per ISP.
func IspChildCounts(ownerID int64, ispIDs []int64) Read[IspChildCount] {
	const q = `SELECT i.id,
		(SELECT count(*) FROM isp_contracts c WHERE c.isp_id = i.id),
		(SELECT count(*) FROM isp_details d WHERE d.isp_id = i.id)
		FROM isps i WHERE i.data_owner_id = $1 AND i.id = ANY($2)`
	return Read[IspChildCount]{step: "count isp children", sql: q, args: []any{ownerID, ispIDs},
		scan: func(row pgx.CollectableRow) (IspChildCount, error) {
			var c IspChildCount
			err := row.Scan(&c.IspID, &c.Contracts, &c.Details)
			return c, err
		}}
}

func (s *Store) deleteOwned(ctx context.Context, step, q string, ownerID, id int64) error {
	tag, err := s.pool.Exec(ctx, q, ownerID, id)
	if err != nil {
		return mapErr(step, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}
