package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
	"github.com/fleetgraph/fleetgraph/limits/budget"
)

// A data owner's heavy work (searches, ES|QL, export listings, scroll
// pages) may answer at most AnswerBytes per period together. Each heavy
// read is charged, once done, with the bytes it read (package budget's
// count) to the data owner's bucket in PostgreSQL (store.ChargeRates: a
// GCRA bucket that may go into debt, as the cost is known only after the
// work), and while the bucket is in debt the data owner's next heavy work
// is refused with a 429 whose Retry-After says when it has room again.
// Small requests are never refused for their bytes. The bound is on CPU
// more than on bandwidth: an answer of tens of megabytes costs a second
// of a core to read and write, and the other data owners share those
// cores.
//
// What this server knows of the bucket is what its last charge answered
// (every server's charges included), so another server's charges are seen
// at this server's next charge.

// ByteRate is a limit of Bytes per Period; the zero ByteRate is no limit.
type ByteRate struct {
	Bytes  int64
	Period time.Duration
}

// DefaultAnswerBytes is the default of a data owner's answer bytes.
var DefaultAnswerBytes = ByteRate(limits.AnswerBytesRate)

// Off reports whether r limits nothing.
func (r ByteRate) Off() bool { return r.Bytes <= 0 || r.Period <= 0 }

func (r ByteRate) String() string {
	if r.Off() {
		return "off"
	}
	return strings.ReplaceAll(budget.Size(r.Bytes), " ", "") + "/" + period(r.Period)
}

// ParseByteRate reads "SIZE/PERIOD" (bytes with a unit and a Go duration:
// 1GiB/1m, 512MiB/30s) or "off".
func ParseByteRate(s string) (ByteRate, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return ByteRate{}, nil
	}
	n, p, ok := strings.Cut(s, "/")
	size, sok := budget.ParseSize(n)
	per, err := time.ParseDuration(strings.TrimSpace(p))
	if !ok || !sok || err != nil || size < limits.AnswerBytes || per < limits.MinRatePeriod || per > limits.MaxRatePeriod {
		return ByteRate{}, fmt.Errorf("%q is not a rate of bytes: write size/period, such as 1GiB/1m "+
			"(a size of %s at least, the answer budget of one request; a period from %s to %s), or off",
			s, budget.Size(limits.AnswerBytes), period(limits.MinRatePeriod), period(limits.MaxRatePeriod))
	}
	return ByteRate{Bytes: size, Period: per}, nil
}

// answerDebts is what this server knows of each data owner's bucket.
type answerDebts struct {
	mu sync.Mutex
	// until is the local time from which the data owner's heavy work has
	// room again; owners without debt are not kept.
	until map[int64]time.Time
}

// AnswerRoom refuses the data owner's next heavy work while its answers
// are over the rate (a 429 with the time it has room again), without a
// statement.
func (l *Limiter) AnswerRoom(ownerID int64) error {
	if l == nil || l.AnswerBytes.Off() {
		return nil
	}
	l.answers.mu.Lock()
	until, ok := l.answers.until[ownerID]
	l.answers.mu.Unlock()
	if !ok || !time.Now().Before(until) {
		return nil
	}
	refusal := &apierr.Later{At: until}
	wait, _ := apierr.RetryAfter(refusal) // the Retry-After the answer carries
	refusal.Err = apierr.Errorf(apierr.ErrTooManyRequests,
		"rate limit exceeded: the searches and exports of this data owner may answer %s per %s together; "+
			"try again in %d seconds", budget.Size(l.AnswerBytes.Bytes), period(l.AnswerBytes.Period), wait)
	return refusal
}

// ChargeAnswer charges n bytes of the data owner's heavy work to its
// bucket and learns from the answer when it has room again. A charge
// PostgreSQL does not take within chargeTimeout is logged and dropped:
// the limiter adds no failure of its own.
func (l *Limiter) ChargeAnswer(ctx context.Context, ownerID, n int64) {
	if l == nil || l.AnswerBytes.Off() || n <= 0 {
		return
	}
	rate := l.AnswerBytes
	cost := time.Duration(float64(rate.Period) * float64(n) / float64(rate.Bytes))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), chargeTimeout)
	defer cancel()
	bucket := "answer-bytes:" + strconv.FormatInt(ownerID, 10)
	tats, now, err := l.Store.ChargeRates(ctx, map[string]time.Duration{bucket: cost})
	tat := tats[bucket]
	if err != nil {
		if l.Logger != nil {
			l.Logger.WarnContext(ctx, "answer bytes not charged", "bytes", n, "err", err)
		}
		return
	}
	// Room again once the clock passes the TAT less a period's worth.
	debt := tat.Add(-rate.Period).Sub(now)
	l.answers.mu.Lock()
	defer l.answers.mu.Unlock()
	if l.answers.until == nil {
		l.answers.until = map[int64]time.Time{}
	}
	if debt <= 0 {
		delete(l.answers.until, ownerID)
		return
	}
	l.answers.until[ownerID] = time.Now().Add(debt)
}
