package rest

import (
	"encoding/json"
	"net/http"

	"github.com/fleetgraph/fleetgraph/resolvers"
)

// StatusFor maps an extensions.code to the HTTP status of the REST APIs.
func StatusFor(code string) int {
	switch code {
	case resolvers.CodeUnauthenticated:
		return http.StatusUnauthorized
	case resolvers.CodeForbidden:
		return http.StatusForbidden
	case resolvers.CodeNotFound:
		return http.StatusNotFound
	case resolvers.CodeConflict:
		return http.StatusConflict
	case resolvers.CodeBadUserInput:
		return http.StatusUnprocessableEntity
	case resolvers.CodeBadRequest:
		return http.StatusBadRequest
	case resolvers.CodeUnavailable:
		return http.StatusServiceUnavailable
	case resolvers.CodeTooManyRequests:
		return http.StatusTooManyRequests
	default:
		return http.StatusInternalServerError
	}
}

// ErrorBody is the error shape of both REST APIs.
type ErrorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// WriteJSON writes v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes {"message": msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	if status >= 500 {
		msg = "Internal server error"
	}
	WriteJSON(w, status, ErrorBody{Message: msg})
}
