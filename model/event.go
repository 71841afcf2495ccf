package model

import "time"

// Event is one event of the data owner's stream, in the envelope webhooks
// deliver ({id, type, timestamp, data}); Seq orders them.
type Event struct {
	ID        string
	Type      string
	Timestamp time.Time
	Data      JSON
	Seq       int64 `json:"-"`
}
