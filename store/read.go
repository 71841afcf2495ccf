package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Read is one statement that reads rows of R, scoped like every store
// query (an UPDATE ... RETURNING that must go with reads is one too:
// CheckIn). It runs alone (All) or queued in a Batch with the other reads of
// the same step, which PostgreSQL receives and answers in one round trip:
// the edges of a query level (resolvers/edges.go) are read that way.
type Read[R any] struct {
	step string // names the read in errors
	sql  string
	args []any
	scan pgx.RowToFunc[R]
}

// All runs r alone.
func All[R any](ctx context.Context, s *Store, r Read[R]) ([]R, error) {
	rows, _ := s.pool.Query(ctx, r.sql, r.args...)
	out, err := pgx.CollectRows(rows, r.scan)
	return out, mapErr(r.step, err)
}

// Batch collects reads to send in one round trip (Store.Send).
type Batch struct{ b pgx.Batch }

// Queue adds r to b; done receives its rows, or its error, when b is sent.
func Queue[R any](b *Batch, r Read[R], done func([]R, error)) {
	b.b.Queue(r.sql, r.args...).Query(func(rows pgx.Rows) error {
		out, err := pgx.CollectRows(rows, r.scan)
		done(out, mapErr(r.step, err))
		return nil
	})
}

// Send runs the queued reads in one round trip and calls their done
// functions; b is empty afterwards.
func (s *Store) Send(ctx context.Context, b *Batch) error {
	if b.b.Len() == 0 {
		return nil
	}
	err := s.pool.SendBatch(ctx, &b.b).Close()
	b.b = pgx.Batch{}
	return mapErr("send batch", err)
}
