// Package budget caps the bytes one operation may produce. The server gives
// every GraphQL operation, and every REST operation (each page of a stream
// on its own), a budget in its context; whatever materialises documents
// (search hits, top_hits, ES|QL rows, export listings) spends the bytes it
// reads from it, and the first read over the budget fails the request with
// a 400 that says how to ask for less. Ten aliased searches of one request
// share one budget, so what a request holds in memory is bounded by the
// budget, not by what it asks for. Without a budget in the context (the
// CLI), nothing is counted. The default budget is limits.AnswerBytes
// (--max-answer-bytes).
package budget

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fleetgraph/fleetgraph/apierr"
)

type key struct{}

type budget struct {
	limit          int64
	spent, settled atomic.Int64
}

// With gives ctx a fresh budget of limit bytes; limit <= 0 means none.
func With(ctx context.Context, limit int64) context.Context {
	if limit <= 0 {
		return ctx
	}
	return context.WithValue(ctx, key{}, &budget{limit: limit})
}

// Spend counts n bytes of an answer against ctx's budget and fails once
// the budget is exceeded.
func Spend(ctx context.Context, n int) error {
	b, _ := ctx.Value(key{}).(*budget)
	if b == nil {
		return nil
	}
	if b.spent.Add(int64(n)) > b.limit {
		return Exceeded(b.limit)
	}
	return nil
}

// Settle answers what ctx's operation has spent since the last Settle (0
// without a budget): the bytes to charge for the work just done, each byte
// once, also when several pieces of work of one operation (aliased
// searches) run at once and settle in any order.
func Settle(ctx context.Context) int64 {
	b, _ := ctx.Value(key{}).(*budget)
	if b == nil {
		return 0
	}
	for {
		old, cur := b.settled.Load(), b.spent.Load()
		if cur <= old || b.settled.CompareAndSwap(old, cur) {
			return max(0, cur-old)
		}
	}
}

// ParseSize reads bytes with a unit, as people write them in settings:
// 384MiB, 2GiB, 64KiB, 4096 (or 4096B); positive, up to 1 PiB.
func ParseSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}, {"", 0}} {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n <= 0 || n > (1<<50)>>u.shift {
			return 0, false
		}
		return n << u.shift, true
	}
	return 0, false
}

// Check fails when an answer of n bytes is over ctx's budget by itself
// (the last check before an answer is written).
func Check(ctx context.Context, n int) error {
	if b, _ := ctx.Value(key{}).(*budget); b != nil && int64(n) > b.limit {
		return Exceeded(b.limit)
	}
	return nil
}

// Exceeded is the 400 of a request whose answer would pass limit bytes.
func Exceeded(limit int64) error {
	return &apierr.BadRequest{Msg: fmt.Sprintf("the answer would exceed %s, the most one request may produce: "+
		"ask for less (a smaller size or per_page, _source filtering to the fields you need, or a scroll "+
		"to read the documents in pages)", Size(limit))}
}

// Size writes n bytes for people: "32 MiB", "1.5 MiB", "512 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader counts what is read from r against ctx's budget; a read over the
// budget fails with the budget's error.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if b, _ := ctx.Value(key{}).(*budget); b == nil {
		return r
	}
	return &reader{ctx: ctx, r: r}
}

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if serr := Spend(r.ctx, n); serr != nil {
		return n, serr
	}
	return n, err
}

// Within answers resp, or, when its data alone is over ctx's budget (the
// check after the fact, for answers made of many small records), an error
// response in its place: the budget's 400.
func Within(ctx context.Context, resp *graphql.Response) *graphql.Response {
	return WithinSize(ctx, resp, len(resp.Data))
}

// WithinSize is Within for an answer of size bytes whose data is not all
// in resp.Data (engine.Splice).
func WithinSize(ctx context.Context, resp *graphql.Response, size int) *graphql.Response {
	err := Check(ctx, size)
	if err == nil {
		return resp
	}
	return &graphql.Response{Errors: gqlerror.List{{Message: err.Error(),
		Extensions: map[string]any{"code": apierr.ErrBadRequest.Code}}}}
}
