// Package respond writes the JSON answers of fleetgraph's HTTP APIs (the
// admin and export APIs of package rest, the client API, the server's own
// routes): a value with its status, and the REST error shape.
package respond

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/fleetgraph/fleetgraph/apierr"
	"github.com/fleetgraph/fleetgraph/limits"
)

// ErrorBody is the error shape of the REST APIs.
type ErrorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// JSON writes v with status; a 503 carries Retry-After
// (apierr.RetryAfterSeconds), a 429 limits.BusyRetryAfterSeconds, unless
// the caller set one.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if w.Header().Get("Retry-After") == "" {
		switch status {
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", strconv.Itoa(apierr.RetryAfterSeconds))
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", strconv.Itoa(limits.BusyRetryAfterSeconds))
		}
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error writes {"message": msg}; a 500 says only "Internal server error"
// (other statuses, 503 included, carry msg).
func Error(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusInternalServerError {
		msg = "Internal server error"
	}
	JSON(w, status, ErrorBody{Message: msg})
}

// The pieces of the OpenAPI documents that every HTTP API shares.

// ErrorSchema is ErrorBody's JSON schema.
func ErrorSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "Every error answer: a message, and for validation failures (422) the messages per field (snake_case, dotted for nested fields).",
		"properties": map[string]any{
			"message": map[string]any{"type": "string"},
			"errors": map[string]any{"type": "object",
				"additionalProperties": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		},
		"required":             []string{"message"},
		"additionalProperties": false,
	}
}

// RateLimitHeaders describes the headers of package ratelimit, present on
// every answer of a charged request; retry adds a 429's Retry-After.
func RateLimitHeaders(retry bool) map[string]any {
	integer := func(desc string) map[string]any {
		return map[string]any{"schema": map[string]any{"type": "integer"}, "description": desc}
	}
	h := map[string]any{
		"X-RateLimit-Limit":     integer("Requests the binding limit (of the key or its data owner, whichever has fewer left) allows per period."),
		"X-RateLimit-Remaining": integer("Requests that would pass now."),
		"X-RateLimit-Reset":     integer("Unix time (seconds) when the binding limit is full again."),
	}
	if retry {
		h["Retry-After"] = integer("With 429 and 503: seconds until a request would pass.")
	}
	return h
}
