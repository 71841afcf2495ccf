package obs

import (
	"context"
	"log/slog"
)

// Logger returns log with every record logged with a request's context
// carrying that request's id (attribute request_id). Wrapping twice is
// harmless: an already wrapped logger is returned as it is.
func Logger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	if _, ok := log.Handler().(requestIDHandler); ok {
		return log
	}
	return slog.New(requestIDHandler{log.Handler()})
}

// requestIDHandler adds request_id to records logged with a context
// holding one (the *Context logging methods).
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestIDFrom(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
