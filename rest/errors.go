package rest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// ErrorBody is the error shape of both REST APIs.
type ErrorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// WriteJSON writes v with status; a 503 carries Retry-After
// (apierr.RetryAfterSeconds), a 429 apierr.BusyRetryAfterSeconds, unless
// the caller set one.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if w.Header().Get("Retry-After") == "" {
		switch status {
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", strconv.Itoa(apierr.RetryAfterSeconds))
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(apierr.BusyRetryAfterSeconds))
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes {"message": msg}; a 500 says only "Internal server
// error" (other statuses, 503 included, carry msg).
func WriteError(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusInternalServerError {
		msg = "Internal server error"
	}
	WriteJSON(w, status, ErrorBody{Message: msg})
}
