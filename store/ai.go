package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// AIConversation is a conversation row; Messages is nil when the query
// did not read them (the list).
type AIConversation struct {
	ID             int64           `db:"id"`
	UserID         int64           `db:"user_id"`
	Title          *string         `db:"title"`
	GeneratedTitle *string         `db:"generated_title"`
	DerivedTitle   string          `db:"derived_title"`
	Preview        string          `db:"preview"`
	MessageCount   int64           `db:"message_count"`
	Messages       json.RawMessage `db:"messages"`
	CreatedAt      time.Time       `db:"created_at"`
	UpdatedAt      time.Time       `db:"updated_at"`
}

const aiConversationCols = `id, user_id, title, generated_title, derived_title, preview,
	jsonb_array_length(messages)::bigint AS message_count, messages, created_at, updated_at`

// AIConversations lists the user's conversations, newest activity first,
// without their messages.
func (s *Store) AIConversations(ctx context.Context, ownerID, userID int64) ([]AIConversation, error) {
	const q = `SELECT id, user_id, title, generated_title, derived_title, preview,
		jsonb_array_length(messages)::bigint AS message_count, NULL::jsonb AS messages, created_at, updated_at
		FROM ai_conversations WHERE data_owner_id = $1 AND user_id = $2 ORDER BY updated_at DESC, id DESC`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID, userID)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[AIConversation])
	return cs, mapErr("list ai conversations", err)
}

// AIConversation loads one of the user's conversations with its messages;
// another user's is ErrNotFound.
func (s *Store) AIConversation(ctx context.Context, ownerID, userID, id int64) (AIConversation, error) {
	const q = `SELECT ` + aiConversationCols + ` FROM ai_conversations WHERE data_owner_id = $1 AND user_id = $2 AND id = $3`
	rows, _ := s.ReadPool(ctx).Query(ctx, q, ownerID, userID, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIConversation])
	return c, mapErr("load ai conversation", err)
}

// AIMessages is what a write stores of a conversation's messages: the
// array as sent, and what the list shows of it.
type AIMessages struct {
	Messages     json.RawMessage
	DerivedTitle string
	Preview      string
}

// CreateAIConversation inserts a conversation of the user.
func (s *Store) CreateAIConversation(ctx context.Context, ownerID, userID int64, title *string, m AIMessages) (AIConversation, error) {
	const q = `INSERT INTO ai_conversations (data_owner_id, user_id, title, messages, derived_title, preview)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING ` + aiConversationCols
	rows, _ := s.pool.Query(ctx, q, ownerID, userID, title, m.Messages, m.DerivedTitle, m.Preview)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIConversation])
	return c, mapErr("insert ai conversation", err)
}

// RenameAIConversation sets the title (nil clears it).
func (s *Store) RenameAIConversation(ctx context.Context, ownerID, userID, id int64, title *string) (AIConversation, error) {
	const q = `UPDATE ai_conversations SET title = $4, updated_at = now()
		WHERE data_owner_id = $1 AND user_id = $2 AND id = $3 RETURNING ` + aiConversationCols
	rows, _ := s.pool.Query(ctx, q, ownerID, userID, id, title)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIConversation])
	return c, mapErr("rename ai conversation", err)
}

// SetAIConversationGeneratedTitle stores a title the model made.
func (s *Store) SetAIConversationGeneratedTitle(ctx context.Context, ownerID, userID, id int64, title string) (AIConversation, error) {
	const q = `UPDATE ai_conversations SET generated_title = $4, updated_at = now()
		WHERE data_owner_id = $1 AND user_id = $2 AND id = $3 RETURNING ` + aiConversationCols
	rows, _ := s.pool.Query(ctx, q, ownerID, userID, id, title)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIConversation])
	return c, mapErr("set generated title", err)
}

// SetAIMessages replaces the conversation's messages.
func (s *Store) SetAIMessages(ctx context.Context, ownerID, userID, id int64, m AIMessages) (AIConversation, error) {
	const q = `UPDATE ai_conversations SET messages = $4, derived_title = $5, preview = $6, updated_at = now()
		WHERE data_owner_id = $1 AND user_id = $2 AND id = $3 RETURNING ` + aiConversationCols
	rows, _ := s.pool.Query(ctx, q, ownerID, userID, id, m.Messages, m.DerivedTitle, m.Preview)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIConversation])
	return c, mapErr("store ai messages", err)
}

// DeleteAIConversation deletes one of the user's conversations.
func (s *Store) DeleteAIConversation(ctx context.Context, ownerID, userID, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM ai_conversations WHERE data_owner_id = $1 AND user_id = $2 AND id = $3`,
		ownerID, userID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return mapErr("delete ai conversation", err)
}

// AIUsage is one model call's tokens.
type AIUsage struct {
	UserID           int64
	ConversationID   *int64
	Purpose, Model   string
	PromptTokens     int64
	CompletionTokens int64
}

// RecordAIUsage records one model call.
func (s *Store) RecordAIUsage(ctx context.Context, ownerID int64, u AIUsage) error {
	const q = `INSERT INTO ai_usage (data_owner_id, user_id, conversation_id, purpose, model, prompt_tokens, completion_tokens)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	_, err := s.pool.Exec(ctx, q, ownerID, u.UserID, u.ConversationID, u.Purpose, u.Model, u.PromptTokens, u.CompletionTokens)
	return mapErr("record ai usage", err)
}

// AIUsageTotals are a data owner's model calls since a time.
type AIUsageTotals struct {
	TotalTokens       int64  `db:"total_tokens"`
	RequestCount      int64  `db:"request_count"`
	ConversationCount int64  `db:"conversation_count"`
	Limit             *int64 `db:"ai_monthly_token_limit"` // the data owner's own limit, nil: the default
}

// AIUsageSince sums the data owner's usage since from, with its own limit.
func (s *Store) AIUsageSince(ctx context.Context, ownerID int64, from time.Time) (AIUsageTotals, error) {
	const q = `SELECT COALESCE(sum(u.prompt_tokens + u.completion_tokens), 0)::bigint AS total_tokens,
			count(u.id)::bigint AS request_count, count(DISTINCT u.conversation_id)::bigint AS conversation_count,
			d.ai_monthly_token_limit
		FROM data_owners d LEFT JOIN ai_usage u ON u.data_owner_id = d.id AND u.created_at >= $2
		WHERE d.id = $1 GROUP BY d.id`
	rows, _ := s.pool.Query(ctx, q, ownerID, from)
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AIUsageTotals])
	return t, mapErr("sum ai usage", err)
}

// SetAITokenLimit sets the data owner's monthly token limit (nil: back to
// the server's default).
func (s *Store) SetAITokenLimit(ctx context.Context, ownerID int64, limit *int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE data_owners SET ai_monthly_token_limit = $2 WHERE id = $1`, ownerID, limit)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return mapErr("set ai token limit", err)
}

// ReserveAITokens reserves tokens of the data owner's budget for one model
// call, until ttl passes: granted (id not 0) while what its calls used
// since from and what calls in flight reserved stays below its limit (its
// own, else defaultLimit), which it answers either way. The data owner's
// row is locked first, so that parallel reservations are checked one after
// the other (each sees the ones before). ReleaseAITokens ends it.
func (s *Store) ReserveAITokens(ctx context.Context, ownerID int64, from time.Time, defaultLimit, tokens int64,
	ttl time.Duration) (id, limit int64, err error) {
	const lock = `SELECT COALESCE(ai_monthly_token_limit, $2) FROM data_owners WHERE id = $1 FOR UPDATE`
	const reserve = `WITH expired AS (
			DELETE FROM ai_token_reservations WHERE data_owner_id = $1 AND expires_at <= now()
		), used AS (
			SELECT COALESCE(sum(prompt_tokens + completion_tokens), 0) AS n FROM ai_usage WHERE data_owner_id = $1 AND created_at >= $2
		), held AS (
			SELECT COALESCE(sum(tokens), 0) AS n FROM ai_token_reservations WHERE data_owner_id = $1 AND expires_at > now()
		)
		INSERT INTO ai_token_reservations (data_owner_id, tokens, expires_at)
		SELECT $1, $4, now() + $5 * interval '1 millisecond' FROM used, held WHERE used.n + held.n < $3
		RETURNING id`
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, lock, ownerID, defaultLimit).Scan(&limit); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, reserve, ownerID, from, limit, tokens, ttl.Milliseconds()).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // refused: id stays 0
		}
		return err
	})
	return id, limit, mapErr("reserve ai tokens", err)
}

// ReleaseAITokens ends the data owner's reservation id (after its call's
// usage is recorded).
func (s *Store) ReleaseAITokens(ctx context.Context, ownerID, id int64) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM ai_token_reservations WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	return mapErr("release ai tokens", err)
}
