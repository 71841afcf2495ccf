package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// ClientRef names a client by id or by UUID (exactly one set); a UUID must
// be well-formed.
type ClientRef struct {
	ID   *int64
	UUID *string
}

// String is the id or UUID as the caller gave it.
func (r ClientRef) String() string {
	if r.ID != nil {
		return strconv.FormatInt(*r.ID, 10)
	}
	if r.UUID != nil {
		return *r.UUID
	}
	return ""
}

// ClientIDs names clients by their ids.
func ClientIDs(ids []int64) []ClientRef {
	refs := make([]ClientRef, len(ids))
	for i := range ids {
		refs[i] = ClientRef{ID: &ids[i]}
	}
	return refs
}

// ClientUpdate holds the client fields to write; a Set flag false leaves
// the column alone (a set nil clears it), a nil flag pointer too.
type ClientUpdate struct {
	SetLabel, SetExtraLabel, SetTags bool
	Label, ExtraLabel                *string
	Tags                             []string

	AnomaliesMuted, OfflineNotificationsMuted, SystemHealthNotificationsMuted *bool
}

// ownedClient is the condition naming one of data owner $1's own clients
// by id $2 or UUID $3.
const ownedClient = `data_owner_id = $1 AND (id = $2 OR uuid = $3::uuid)`

// UpdateClient writes u to one of the data owner's own clients and answers
// the client as read after the write. A label another client of the owner
// carries (trimmed, case-insensitive) is ErrConflict: the unique index
// clients_owner_label_uniq decides, so racing renames cannot both win.
func (s *Store) UpdateClient(ctx context.Context, ownerID int64, ref ClientRef, u ClientUpdate) (Client, error) {
	const q = `UPDATE clients SET
		label = CASE WHEN $4 THEN $5 ELSE label END,
		extra_label = CASE WHEN $6 THEN $7 ELSE extra_label END,
		tags = CASE WHEN $8 THEN $9::text[] ELSE tags END,
		anomalies_muted = COALESCE($10, anomalies_muted),
		offline_notifications_muted = COALESCE($11, offline_notifications_muted),
		system_health_notifications_muted = COALESCE($12, system_health_notifications_muted),
		updated_at = now()
		WHERE ` + ownedClient + ` RETURNING id`
	return s.writeClient(ctx, "update client", ownerID, ref, q, u.SetLabel, u.Label, u.SetExtraLabel, u.ExtraLabel,
		u.SetTags, u.Tags, u.AnomaliesMuted, u.OfflineNotificationsMuted, u.SystemHealthNotificationsMuted)
}

// DisableClient disables one of the owner's clients with a reason; a
// client disabled before keeps its disabled_at. A client that was not
// disabled gets a client.disabled event in the same transaction.
func (s *Store) DisableClient(ctx context.Context, ownerID int64, ref ClientRef, reason string) (Client, error) {
	defer s.probes.changed() // after the commit: a disabled probe is refused at its next request
	const q = `UPDATE clients c SET disabled_at = COALESCE(c.disabled_at, now()), disabled_reason = $4, updated_at = now()
		FROM (SELECT id, disabled_at FROM clients WHERE ` + ownedClient + ` FOR UPDATE) old
		WHERE c.id = old.id RETURNING c.id, old.disabled_at IS NULL`
	var id int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var newly bool
		if err := tx.QueryRow(ctx, q, ownerID, ref.ID, ref.UUID, reason).Scan(&id, &newly); err != nil || !newly {
			return err
		}
		return s.Emit(ctx, tx, ownerID, NewEvent{Type: EventClientDisabled, ClientID: &id,
			Data: map[string]any{"reason": reason}})
	})
	if errors.Is(err, ErrNotFound) {
		err = pgx.ErrNoRows // no such own client: clientMissing tells a shared one apart
	}
	if err != nil {
		return Client{}, s.clientMissing(ctx, "disable client", ownerID, ref, err)
	}
	return s.Client(ctx, ownerID, id)
}

// EnableClient clears a client's disabled_at and disabled_reason (a client
// that is not disabled is left as it is).
func (s *Store) EnableClient(ctx context.Context, ownerID int64, ref ClientRef) (Client, error) {
	const q = `UPDATE clients SET disabled_at = NULL, disabled_reason = NULL,
		updated_at = CASE WHEN disabled_at IS NULL THEN updated_at ELSE now() END
		WHERE ` + ownedClient + ` RETURNING id`
	return s.writeClient(ctx, "enable client", ownerID, ref, q)
}

// writeClient runs an UPDATE of one owned client (arguments $1 to $3 are
// the owner and ref, args follow) and reads the client back.
func (s *Store) writeClient(ctx context.Context, step string, ownerID int64, ref ClientRef, q string, args ...any) (Client, error) {
	defer s.probes.changed() // the label and disabled_at are cached with the probe
	var id int64
	err := s.pool.QueryRow(ctx, q, append([]any{ownerID, ref.ID, ref.UUID}, args...)...).Scan(&id)
	if err != nil {
		return Client{}, s.clientMissing(ctx, step, ownerID, ref, err)
	}
	return s.Client(ctx, ownerID, id)
}

// DeleteClient removes one of the owner's clients with its group
// memberships, shares and ISP contracts (foreign keys cascade). Its
// documents stay: they are the history of what it measured.
func (s *Store) DeleteClient(ctx context.Context, ownerID int64, ref ClientRef) error {
	defer s.probes.changed() // a deleted probe's secret stops working at once
	tag, err := s.pool.Exec(ctx, `DELETE FROM clients WHERE `+ownedClient, ownerID, ref.ID, ref.UUID)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return s.clientMissing(ctx, "delete client", ownerID, ref, err)
	}
	return nil
}

// ErrSharedClient: the client is shared with the data owner by its owner,
// who alone may change it.
var ErrSharedClient = &apierr.Error{Class: apierr.ErrForbidden,
	Msg: "this client is shared with you by another data owner; only its owner can change it"}

// clientMissing explains why a write to an owned client found no row: a
// client shared with the owner is ErrSharedClient, else it is not found.
// Other errors pass through mapErr.
func (s *Store) clientMissing(ctx context.Context, step string, ownerID int64, ref ClientRef, err error) error {
	err = mapErr(step, err)
	if err != ErrNotFound {
		return err
	}
	const q = `SELECT EXISTS (SELECT 1 FROM clients c JOIN client_shares s ON s.client_id = c.id
		WHERE s.data_owner_id = $1 AND (c.id = $2 OR c.uuid = $3::uuid))`
	var shared bool
	if e := s.pool.QueryRow(ctx, q, ownerID, ref.ID, ref.UUID).Scan(&shared); e != nil {
		return mapErr("check shared client", e)
	}
	if shared {
		return ErrSharedClient
	}
	return apierr.Errorf(apierr.ErrNotFound, "client %s not found", ref)
}

// groupCols are the columns of a ClientGroup read alone.
const groupCols = `id, name, created_at, 0::bigint AS client_id`

// scanGroup reads a row of groupCols (or of the same columns of a group
// and its client), by position: groups are read for every client of a
// list, and scanning by name costs a look-up and a slice per row.
// The targets are in the row's block: one allocation per row, not two.
func scanGroup(row pgx.CollectableRow) (ClientGroup, error) {
	var s struct {
		g    ClientGroup
		dest [4]any
	}
	s.dest = [4]any{&s.g.ID, &s.g.Name, &s.g.CreatedAt, &s.g.ClientID}
	err := row.Scan(s.dest[:]...)
	return s.g, err
}

// ClientGroup loads one of the data owner's groups.
func (s *Store) ClientGroup(ctx context.Context, ownerID, id int64) (ClientGroup, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+groupCols+` FROM client_groups WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	g, err := pgx.CollectExactlyOneRow(rows, scanGroup)
	return g, groupMissing(id, mapErr("load client group", err))
}

// GroupsByIDs loads the data owner's groups by id (the federation entities).
func GroupsByIDs(ownerID int64, ids []int64) Read[ClientGroup] {
	return Read[ClientGroup]{step: "load client groups by id", sql: `SELECT ` + groupCols + ` FROM client_groups
		WHERE data_owner_id = $1 AND id = ANY($2)`, args: []any{ownerID, ids}, scan: scanGroup}
}

// RenameClientGroup renames one of the owner's groups; a name another of
// its groups carries (trimmed, case-insensitive) is ErrConflict.
func (s *Store) RenameClientGroup(ctx context.Context, ownerID, id int64, name string) (ClientGroup, error) {
	rows, _ := s.pool.Query(ctx, `UPDATE client_groups SET name = $3 WHERE data_owner_id = $1 AND id = $2
		RETURNING `+groupCols, ownerID, id, name)
	g, err := pgx.CollectExactlyOneRow(rows, scanGroup)
	return g, groupMissing(id, mapErr("rename client group", err))
}

// DeleteClientGroup deletes one of the owner's groups (its clients stay).
func (s *Store) DeleteClientGroup(ctx context.Context, ownerID, id int64) error {
	err := s.deleteOwned(ctx, "delete client group", `DELETE FROM client_groups WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	return groupMissing(id, err)
}

// groupMissing names the group an ErrNotFound is about.
func groupMissing(id int64, err error) error {
	if err == ErrNotFound {
		return apierr.Errorf(apierr.ErrNotFound, "client group %d not found", id)
	}
	return err
}

// CreateClientGroup inserts a group with the given member clients, which
// must all be the owner's own (else nothing is written and the error names
// the missing ones). A name another group carries is ErrConflict.
func (s *Store) CreateClientGroup(ctx context.Context, ownerID int64, name string, members []ClientRef) (ClientGroup, error) {
	var g ClientGroup
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `INSERT INTO client_groups (data_owner_id, name) VALUES ($1, $2) RETURNING `+groupCols,
			ownerID, name)
		var err error
		if g, err = pgx.CollectExactlyOneRow(rows, scanGroup); err != nil {
			return mapErr("insert client group", err)
		}
		return addMembers(ctx, tx, ownerID, g.ID, members)
	})
	return g, err
}

// AddClientGroupMembers adds the owner's clients to one of its groups
// (members already in it stay); all or nothing.
func (s *Store) AddClientGroupMembers(ctx context.Context, ownerID, groupID int64, members []ClientRef) (ClientGroup, error) {
	return s.changeMembers(ctx, ownerID, groupID, func(tx pgx.Tx) error {
		return addMembers(ctx, tx, ownerID, groupID, members)
	})
}

// RemoveClientGroupMembers removes the owner's clients from one of its
// groups (clients not in it are no error; clients that are not the
// owner's are not found).
func (s *Store) RemoveClientGroupMembers(ctx context.Context, ownerID, groupID int64, members []ClientRef) (ClientGroup, error) {
	return s.changeMembers(ctx, ownerID, groupID, func(tx pgx.Tx) error {
		ids, err := ownedClientIDs(ctx, tx, ownerID, members)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM client_group_members WHERE client_group_id = $1 AND client_id = ANY($2)`, groupID, ids)
		return mapErr("remove group members", err)
	})
}

// changeMembers locks one of the owner's groups, runs change and answers
// the group.
func (s *Store) changeMembers(ctx context.Context, ownerID, groupID int64, change func(pgx.Tx) error) (ClientGroup, error) {
	var g ClientGroup
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT `+groupCols+` FROM client_groups WHERE data_owner_id = $1 AND id = $2 FOR UPDATE`,
			ownerID, groupID)
		var err error
		if g, err = pgx.CollectExactlyOneRow(rows, scanGroup); err != nil {
			return groupMissing(groupID, mapErr("lock client group", err))
		}
		return change(tx)
	})
	return g, err
}

func addMembers(ctx context.Context, tx pgx.Tx, ownerID, groupID int64, members []ClientRef) error {
	ids, err := ownedClientIDs(ctx, tx, ownerID, members)
	if err != nil || len(ids) == 0 {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO client_group_members (client_group_id, client_id)
		SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`, groupID, ids)
	return mapErr("insert group members", err)
}

// ownedClientIDs resolves refs to ids of the owner's own clients, locking
// them against a racing delete; refs naming none are a not-found error
// that lists them.
func ownedClientIDs(ctx context.Context, tx pgx.Tx, ownerID int64, refs []ClientRef) ([]int64, error) {
	var ids []int64
	var uuids []string
	for _, r := range refs {
		if r.ID != nil {
			ids = append(ids, *r.ID)
		} else if r.UUID != nil {
			uuids = append(uuids, *r.UUID)
		}
	}
	found := map[string]bool{}
	var out []int64
	rows, _ := tx.Query(ctx, `SELECT id, uuid::text FROM clients WHERE data_owner_id = $1
		AND (id = ANY($2) OR uuid = ANY($3::uuid[])) ORDER BY id FOR SHARE`, ownerID, ids, uuids)
	var id int64
	var u string
	if _, err := pgx.ForEachRow(rows, []any{&id, &u}, func() error {
		found[strconv.FormatInt(id, 10)], found[u] = true, true
		out = append(out, id)
		return nil
	}); err != nil {
		return nil, mapErr("find clients", err)
	}
	var missing []string
	for _, r := range refs {
		if k := r.String(); !found[strings.ToLower(k)] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, apierr.Errorf(apierr.ErrNotFound, "client %s not found", strings.Join(missing, ", "))
	}
	return out, nil
}

// ContractInput holds the contract fields to write. For updates a Set flag
// false leaves the column alone (a set nil clears it); IspID 0 leaves the
// ISP alone.
type ContractInput struct {
	IspID                                   int64
	Name                                    *string
	UploadSpeed, DownloadSpeed              *int64
	MonthlyPrice                            *float64
	Currency, AssumedTariff, ConnectionType *string
	ValidFrom, ValidUntil                   *time.Time

	SetUploadSpeed, SetDownloadSpeed, SetMonthlyPrice, SetCurrency   bool
	SetAssumedTariff, SetConnectionType, SetValidFrom, SetValidUntil bool
}

// ErrContractDates: a contract would end before it starts.
var ErrContractDates = apierr.Sentinel(apierr.ErrInvalid, "contract ends before it starts")

// ErrContractEnded: the contract has already ended.
var ErrContractEnded = apierr.Sentinel(apierr.ErrInvalid, "contract already ended")

// IspContract loads one of the owner's contracts.
func (s *Store) IspContract(ctx context.Context, ownerID, id int64) (IspContract, error) {
	return contractByID(ctx, s.pool, ownerID, id, "")
}

// contractByID reads one of the owner's contracts with contractSelect
// (lock: "" or a locking clause such as FOR UPDATE).
func contractByID(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ownerID, id int64, lock string) (IspContract, error) {
	rows, _ := q.Query(ctx, contractSelect+` WHERE c.data_owner_id = $1 AND c.id = $2 `+lock, ownerID, id)
	c, err := pgx.CollectExactlyOneRow(rows, scanContract)
	return c, contractMissing(id, mapErr("load contract", err))
}

func contractMissing(id int64, err error) error {
	if err == ErrNotFound {
		return apierr.Errorf(apierr.ErrNotFound, "ISP contract %d not found", id)
	}
	return err
}

// lockIsp checks that the ISP is the owner's and keeps it from being
// deleted until the transaction ends.
func lockIsp(ctx context.Context, tx pgx.Tx, ownerID, ispID int64) error {
	var id int64
	err := tx.QueryRow(ctx, `SELECT id FROM isps WHERE data_owner_id = $1 AND id = $2 FOR SHARE`, ownerID, ispID).Scan(&id)
	if err = mapErr("lock isp", err); err == ErrNotFound {
		return apierr.Errorf(apierr.ErrNotFound, "ISP %d not found", ispID)
	}
	return err
}

// AddContract inserts a contract between one of the owner's clients and
// one of its ISPs (either missing is a not-found error naming it).
func (s *Store) AddContract(ctx context.Context, ownerID int64, client ClientRef, in ContractInput) (IspContract, error) {
	var c IspContract
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockIsp(ctx, tx, ownerID, in.IspID); err != nil {
			return err
		}
		ids, err := ownedClientIDs(ctx, tx, ownerID, []ClientRef{client})
		if err != nil {
			return err
		}
		const q = `INSERT INTO isp_contracts (data_owner_id, isp_id, client_id, name, upload_speed, download_speed,
			monthly_price, currency, assumed_tariff, connection_type, valid_from, valid_until)
			VALUES ($1, $2, $3, COALESCE($4, ''), $5, $6, $7, $8, $9, $10, COALESCE($11, now()), $12) RETURNING id`
		var id int64
		if err := tx.QueryRow(ctx, q, ownerID, in.IspID, ids[0], in.Name, in.UploadSpeed, in.DownloadSpeed, in.MonthlyPrice,
			in.Currency, in.AssumedTariff, in.ConnectionType, in.ValidFrom, in.ValidUntil).Scan(&id); err != nil {
			return mapErr("insert contract", err)
		}
		c, err = contractByID(ctx, tx, ownerID, id, "")
		return err
	})
	return c, err
}

// UpdateContract writes in to one of the owner's contracts. A new ISP must
// be the owner's; dates that end the contract before it starts are
// ErrContractDates (checked on the row as written).
func (s *Store) UpdateContract(ctx context.Context, ownerID, id int64, in ContractInput) (IspContract, error) {
	var c IspContract
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if in.IspID != 0 {
			if err := lockIsp(ctx, tx, ownerID, in.IspID); err != nil {
				return err
			}
		}
		const q = `UPDATE isp_contracts SET isp_id = CASE WHEN $3 > 0 THEN $3 ELSE isp_id END,
			name = COALESCE($4, name),
			upload_speed = CASE WHEN $5 THEN $6 ELSE upload_speed END,
			download_speed = CASE WHEN $7 THEN $8 ELSE download_speed END,
			monthly_price = CASE WHEN $9 THEN $10 ELSE monthly_price END,
			currency = CASE WHEN $11 THEN $12 ELSE currency END,
			assumed_tariff = CASE WHEN $13 THEN $14 ELSE assumed_tariff END,
			connection_type = CASE WHEN $15 THEN $16 ELSE connection_type END,
			valid_from = CASE WHEN $17 THEN COALESCE($18, now()) ELSE valid_from END,
			valid_until = CASE WHEN $19 THEN $20 ELSE valid_until END
			WHERE data_owner_id = $1 AND id = $2`
		tag, err := tx.Exec(ctx, q, ownerID, id, in.IspID, in.Name, in.SetUploadSpeed, in.UploadSpeed,
			in.SetDownloadSpeed, in.DownloadSpeed, in.SetMonthlyPrice, in.MonthlyPrice, in.SetCurrency, in.Currency,
			in.SetAssumedTariff, in.AssumedTariff, in.SetConnectionType, in.ConnectionType,
			in.SetValidFrom, in.ValidFrom, in.SetValidUntil, in.ValidUntil)
		if err == nil && tag.RowsAffected() == 0 {
			err = ErrNotFound
		}
		if err != nil {
			return contractMissing(id, mapErr("update contract", err))
		}
		if c, err = contractByID(ctx, tx, ownerID, id, ""); err != nil {
			return err
		}
		if c.ValidUntil != nil && !c.ValidUntil.After(c.ValidFrom) {
			return ErrContractDates
		}
		return nil
	})
	return c, err
}

// DeleteContract deletes one of the owner's contracts.
func (s *Store) DeleteContract(ctx context.Context, ownerID, id int64) error {
	err := s.deleteOwned(ctx, "delete contract", `DELETE FROM isp_contracts WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	return contractMissing(id, err)
}

// EndContract sets valid_until of one of the owner's contracts that has not
// ended by now: ErrContractEnded when it has, ErrContractDates when at is
// not after its valid_from.
func (s *Store) EndContract(ctx context.Context, ownerID, id int64, at time.Time) (IspContract, error) {
	var c IspContract
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if c, err = contractByID(ctx, tx, ownerID, id, "FOR UPDATE OF c"); err != nil {
			return err
		}
		switch {
		case c.ValidUntil != nil && !c.ValidUntil.After(time.Now()):
			return ErrContractEnded
		case !at.After(c.ValidFrom):
			return ErrContractDates
		}
		if _, err := tx.Exec(ctx, `UPDATE isp_contracts SET valid_until = $3 WHERE data_owner_id = $1 AND id = $2`,
			ownerID, id, at); err != nil {
			return mapErr("end contract", err)
		}
		c, err = contractByID(ctx, tx, ownerID, id, "")
		return err
	})
	return c, err
}
