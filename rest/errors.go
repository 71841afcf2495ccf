package rest

import (
	"encoding/json"
	"net/http"
)

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
