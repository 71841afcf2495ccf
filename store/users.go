package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is a dashboard user row; NotificationConfig is the stored JSON object.
type User struct {
	ID                          int64           `db:"id"`
	Email                       string          `db:"email"`
	Username                    string          `db:"username"`
	Role                        string          `db:"role"`
	FirstName                   *string         `db:"first_name"`
	LastName                    *string         `db:"last_name"`
	AiUsageAccepted             *bool           `db:"ai_usage_accepted"`
	AiCustomPrompt              *string         `db:"ai_custom_prompt"`
	LastVisitedDashboardVersion *string         `db:"last_visited_dashboard_version"`
	DashboardWhatsNewDisabled   bool            `db:"dashboard_whats_new_disabled"`
	PendingEmail                *string         `db:"pending_email"`
	PendingEmailTokenSentAt     *time.Time      `db:"pending_email_token_sent_at"`
	NotificationConfig          json.RawMessage `db:"notification_config"`
}

const userCols = `id, email, username, role, first_name, last_name, ai_usage_accepted,
	ai_custom_prompt, last_visited_dashboard_version, dashboard_whats_new_disabled,
	pending_email, pending_email_token_sent_at, notification_config`

// NewUser is a user to insert.
type NewUser struct {
	Email, Username, Role string
	FirstName, LastName   *string
	NotificationConfig    json.RawMessage
	// NotifyUser queues the account-created e-mail in the outbox
	// (TemplateAccountCreated).
	NotifyUser bool
}

// Users lists the data owner's users.
func (s *Store) Users(ctx context.Context, ownerID int64) ([]User, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+userCols+` FROM users WHERE data_owner_id = $1 ORDER BY id`, ownerID)
	us, err := pgx.CollectRows(rows, pgx.RowToStructByName[User])
	return us, mapErr("list users", err)
}

// UsersByIDs loads the data owner's users by id.
func UsersByIDs(ownerID int64, ids []int64) Read[User] {
	return Read[User]{step: "load users", sql: `SELECT ` + userCols + ` FROM users WHERE data_owner_id = $1 AND id = ANY($2)`,
		args: []any{ownerID, ids}, scan: pgx.RowToStructByName[User]}
}

// User loads one user.
func (s *Store) User(ctx context.Context, ownerID, id int64) (User, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+userCols+` FROM users WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	return u, mapErr("load user", err)
}

// DefaultNotificationConfig is a new user's notification_config when its
// creator gives none (userCreate starts from it; the column's default,
// migration 00015, is the same, so users made by Bootstrap get it too).
const DefaultNotificationConfig = `{"client_offline": true, "anomaly_events": false}`

// CreateUser inserts a user (and its welcome e-mail, when asked) atomically.
func (s *Store) CreateUser(ctx context.Context, ownerID int64, u NewUser) (User, error) {
	var out User
	err := s.tx(ctx, func(tx pgx.Tx) error {
		const q = `INSERT INTO users (data_owner_id, email, username, role, first_name, last_name, notification_config)
			VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING ` + userCols
		rows, _ := tx.Query(ctx, q, ownerID, u.Email, u.Username, u.Role, u.FirstName, u.LastName, u.NotificationConfig)
		var err error
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
		if err != nil {
			return mapErr("insert user", err)
		}
		if !u.NotifyUser {
			return nil
		}
		var owner string
		if err := tx.QueryRow(ctx, `SELECT name FROM data_owners WHERE id = $1`, ownerID).Scan(&owner); err != nil {
			return mapErr("load data owner", err)
		}
		return s.queueEmail(ctx, tx, ownerID, &out.ID, TemplateAccountCreated, out.Email, AccountCreated{
			Username: out.Username, Role: out.Role, FirstName: out.FirstName, DataOwner: owner})
	})
	return out, err
}

// UserPatch names the columns to write; a nil pointer leaves the column
// alone, a Clear flag sets it to NULL. ConfigPatch is merged into
// notification_config (keys with JSON null are removed).
type UserPatch struct {
	FirstName, LastName              *string
	ClearFirstName, ClearLastName    bool
	AiUsageAccepted                  *bool
	ClearAiUsageAccepted             bool
	AiCustomPrompt                   *string
	ClearAiCustomPrompt              bool
	LastVisitedDashboardVersion      *string
	ClearLastVisitedDashboardVersion bool
	DashboardWhatsNewDisabled        *bool
	ConfigPatch                      json.RawMessage
}

// UpdateUser writes the fields present in p.
func (s *Store) UpdateUser(ctx context.Context, ownerID, id int64, p UserPatch) (User, error) {
	const q = `UPDATE users SET
		first_name = CASE WHEN $3 THEN NULL ELSE COALESCE($4, first_name) END,
		last_name = CASE WHEN $5 THEN NULL ELSE COALESCE($6, last_name) END,
		ai_usage_accepted = CASE WHEN $7 THEN NULL ELSE COALESCE($8, ai_usage_accepted) END,
		ai_custom_prompt = CASE WHEN $9 THEN NULL ELSE COALESCE($10, ai_custom_prompt) END,
		last_visited_dashboard_version = CASE WHEN $11 THEN NULL ELSE COALESCE($12, last_visited_dashboard_version) END,
		dashboard_whats_new_disabled = COALESCE($13, dashboard_whats_new_disabled),
		notification_config = jsonb_strip_nulls(notification_config || COALESCE($14::jsonb, '{}')),
		updated_at = now()
	WHERE data_owner_id = $1 AND id = $2 RETURNING ` + userCols
	cfg := p.ConfigPatch
	if len(cfg) == 0 {
		cfg = nil
	}
	rows, _ := s.pool.Query(ctx, q, ownerID, id, p.ClearFirstName, p.FirstName, p.ClearLastName, p.LastName,
		p.ClearAiUsageAccepted, p.AiUsageAccepted, p.ClearAiCustomPrompt, p.AiCustomPrompt,
		p.ClearLastVisitedDashboardVersion, p.LastVisitedDashboardVersion, p.DashboardWhatsNewDisabled, cfg)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	return u, mapErr("update user", err)
}

// TemplateAccountCreated is the outbox template of the mail a new user gets
// when its creator asks (notify_user); its data is an AccountCreated.
const TemplateAccountCreated = "account_created"

// AccountCreated is the data of an account_created mail.
type AccountCreated struct {
	Username  string  `json:"username"`
	Role      string  `json:"role"`
	FirstName *string `json:"first_name"`
	DataOwner string  `json:"data_owner"`
}
