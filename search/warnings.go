package search

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fleetgraph/fleetgraph/limits"
)

// ESVersion is the Elasticsearch version the embedded backend answers as
// (docs/search.md), named in Warning headers.
const ESVersion = "8.18.0"

// Warnings collects the warnings of one request (Elasticsearch's Warning
// response headers), in order, without repeats, at most limits.MaxWarnings.
type Warnings struct {
	mu   sync.Mutex
	msgs []string
}

type warningsKey struct{}

// WithWarnings gives ctx a warnings collector, read once the request is done.
func WithWarnings(ctx context.Context) (context.Context, *Warnings) {
	w := &Warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// AddWarnings records msgs with ctx's collector (none: nothing).
func AddWarnings(ctx context.Context, msgs ...string) {
	w, _ := ctx.Value(warningsKey{}).(*Warnings)
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range msgs {
		if len(w.msgs) < limits.MaxWarnings && !slices.Contains(w.msgs, m) {
			w.msgs = append(w.msgs, m)
		}
	}
}

// Messages are the warnings recorded so far.
func (w *Warnings) Messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// WarningHeader is the value of a Warning header for msg as Elasticsearch
// writes it: warn-code 299, agent Elasticsearch-<version>-<build> (the
// build hash is "unknown", which Elasticsearch's clients accept), and the
// quoted text with backslashes and quotes escaped and characters outside
// printable ASCII percent-encoded (RFC 7234 warn-text).
func WarningHeader(msg string) string {
	var b strings.Builder
	for _, c := range []byte(msg) {
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '%' || c < 0x20 || c > 0x7e:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return "299 Elasticsearch-" + ESVersion + "-unknown \"" + b.String() + "\""
}
