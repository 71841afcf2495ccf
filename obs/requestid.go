package obs

import (
	"context"
	"crypto/rand"
	"net/http"
)

// RequestIDHeader carries the request id, in and out.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds an accepted incoming id (a UUID is 36, a W3C trace
// id 32, AWS's X-Amzn-Trace-Id root about 40).
const maxRequestIDLen = 128

type requestIDKey struct{}

// RequestID gives every request an id: the incoming X-Request-Id when it is
// sane (1 to 128 characters of letters, digits and -_.:/+=@), else a new
// random one (26 characters, 128 bits). The id is set on the answer before
// the handler runs, so every answer carries it (errors, panics and 404s
// included), and it is in the request's context for the log (LogHandler)
// and the trace.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = rand.Text()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestIDFrom returns the request id of ctx ("" outside a request).
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// validRequestID accepts ids that are safe to echo in a header and a log
// line and to use as a label of nothing: bounded, printable ASCII without
// spaces, quotes or separators that would need escaping.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=', c == '@':
		default:
			return false
		}
	}
	return true
}
