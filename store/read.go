package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Read is one statement that reads rows of R, scoped like every store
// query (an UPDATE ... RETURNING that must go with reads is one too:
// CheckIn). It runs alone (All) or queued in a Batch with the other reads of
// the same step, which PostgreSQL receives and answers in one round trip:
// the edges of a query level (engine/edges.go) are read that way.
type Read[R any] struct {
	step string // names the read in errors
	sql  string
	args []any
	scan pgx.RowToFunc[R]
}

// genericPlans opens every round trip of reads: it makes the reads after it
// (one implicit transaction: set_config's local value ends with it) run on
// their prepared statements' generic plans. Under PostgreSQL's default
// (plan_cache_mode auto) a statement whose argument is an array of ids, as
// every read here is, is planned anew at every execution, which cost more
// than running it (measured: about half of PostgreSQL's CPU of a request
// for one client). A read is by keys, so its generic plan is the plan it
// gets anyway; statements whose best plan depends on their arguments
// (searches, export filters, ranges of documents) are not reads and keep
// PostgreSQL's choice.
const genericPlans = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)"

// Rider holds reads that go to PostgreSQL with the next read run alone
// (All, One) under a context carrying it (WithRider), after that read and
// in its round trip: the reads of a root field's first level ahead of the
// field's own read (engine/readahead.go).
type Rider struct {
	b    Batch
	sent bool
}

type riderKey struct{}

// WithRider makes the next read alone under ctx take r's reads along.
func WithRider(ctx context.Context, r *Rider) context.Context {
	return context.WithValue(ctx, riderKey{}, r)
}

// Batch is where the reads to take along are queued.
func (r *Rider) Batch() *Batch { return &r.b }

// Sent reports whether a read took the reads along (their done functions
// have run once it returned).
func (r *Rider) Sent() bool { return r.sent }

// All runs r alone (in one round trip with genericPlans, and with the
// reads of ctx's Rider if any).
func All[R any](ctx context.Context, s *Store, r Read[R]) ([]R, error) {
	var b Batch
	var out []R
	var err error
	Queue(&b, r, func(rs []R, e error) { out, err = rs, e })
	if rd, _ := ctx.Value(riderKey{}).(*Rider); rd != nil && !rd.sent && rd.b.b.Len() > 0 {
		rd.sent = true
		b.b.QueuedQueries = append(b.b.QueuedQueries, rd.b.b.QueuedQueries[1:]...) // after its own genericPlans
	}
	if sendErr := s.Send(ctx, &b); err == nil {
		err = sendErr
	}
	return out, err
}

// One runs r alone and answers its only row; ErrNotFound when there is
// none.
func One[R any](ctx context.Context, s *Store, r Read[R]) (R, error) {
	var zero R
	rows, err := All(ctx, s, r)
	switch {
	case err != nil:
		return zero, err
	case len(rows) == 0:
		return zero, ErrNotFound
	case len(rows) > 1:
		return zero, fmt.Errorf("%s: %d rows where one was expected", r.step, len(rows))
	}
	return rows[0], nil
}

// Batch collects reads to send in one round trip (Store.Send).
type Batch struct{ b pgx.Batch }

// Queue adds r to b; done receives its rows, or its error, when b is sent.
func Queue[R any](b *Batch, r Read[R], done func([]R, error)) {
	if b.b.Len() == 0 {
		b.b.Queue(genericPlans)
	}
	b.b.Queue(r.sql, r.args...).Query(func(rows pgx.Rows) error {
		hint := hintFor(r.sql, r.args)
		out, err := pgx.AppendRows(make([]R, 0, rowsToHold[R](hint)), rows, r.scan)
		if err == nil {
			hint.note(len(out))
		}
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
	err := s.ReadPool(ctx).SendBatch(ctx, &b.b).Close()
	b.b = pgx.Batch{}
	return mapErr("send batch", err)
}
