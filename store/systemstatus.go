package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/fleethealth"
)

// SystemStatus is a system status record: the fields of a document of kind
// system_status (the spec's "System status record"), ID being its
// documents row id.
type SystemStatus struct {
	ID                        int64
	ClientUUID                *string
	RunID                     string
	StudyIDs                  []string
	MeasurementIDs            []int64
	StartedAt, FinishedAt     *time.Time
	Platform, RuntimeScope    *string
	SampleIntervalSeconds     *int64
	ConnectionDetailTraceID   *int64
	CPUValidSampleCount       *int64
	CPUAveragePercent         *float64
	CPUMaxPercent             *float64
	CPUFinalPercent           *float64
	MemoryValidSampleCount    *int64
	MemoryEffectiveTotalBytes *int64
	MemoryAveragePercent      *float64
	MemoryMaxPercent          *float64
	MemoryFinalPercent        *float64
	Filesystems               []Filesystem
	// ConnectionDetails are the items as the client sent them (the spec
	// allows properties beyond its own).
	ConnectionDetails []map[string]any
	CollectionErrors  []string
	CreatedAt         time.Time
}

// Filesystem is a filesystem item of a system status record.
type Filesystem struct {
	Writable                                               bool
	ValidSampleCount                                       int64
	Device, Mount, Type                                    *string
	TotalBytes, MinimumAvailableBytes, FinalAvailableBytes *int64
	AveragePercent, MaximumPercent, FinalPercent           *float64
}

// statusFields reads the fields of a system status document. A field of the
// wrong type is left empty and named in problems: documents with problems
// are refused when stored (DocumentFields), so stored ones have none.
func statusFields(doc map[string]any) (s SystemStatus, problems []string) {
	r := fieldReader{doc: doc}
	s.ClientUUID = r.str("client_uuid")
	if v := r.str("run_id"); v != nil {
		s.RunID = *v
	}
	s.StudyIDs = r.strs("study_ids")
	for i, v := range r.list("measurement_ids") {
		if n, ok := intValue(v); ok {
			s.MeasurementIDs = append(s.MeasurementIDs, n)
		} else {
			r.bad("measurement_ids[%d] must be an integer", i)
		}
	}
	s.StartedAt, s.FinishedAt = r.time("started_at"), r.time("finished_at")
	s.Platform, s.RuntimeScope = r.str("platform"), r.str("runtime_scope")
	s.SampleIntervalSeconds, s.ConnectionDetailTraceID = r.int("sample_interval_seconds"), r.int("connection_detail_trace_id")
	s.CPUValidSampleCount = r.int("cpu_valid_sample_count")
	s.CPUAveragePercent, s.CPUMaxPercent, s.CPUFinalPercent = r.num("cpu_average_percent"), r.num("cpu_max_percent"), r.num("cpu_final_percent")
	s.MemoryValidSampleCount, s.MemoryEffectiveTotalBytes = r.int("memory_valid_sample_count"), r.int("memory_effective_total_bytes")
	s.MemoryAveragePercent, s.MemoryMaxPercent, s.MemoryFinalPercent = r.num("memory_average_percent"), r.num("memory_max_percent"), r.num("memory_final_percent")
	for i, v := range r.list("filesystems") {
		m, ok := v.(map[string]any)
		if !ok {
			r.bad("filesystems[%d] must be an object", i)
			continue
		}
		f := fieldReader{doc: m, prefix: fmt.Sprintf("filesystems[%d].", i)}
		fs := Filesystem{Device: f.str("device"), Mount: f.str("mount"), Type: f.str("type"),
			TotalBytes: f.int("total_bytes"), MinimumAvailableBytes: f.int("minimum_available_bytes"),
			FinalAvailableBytes: f.int("final_available_bytes"), AveragePercent: f.num("average_percent"),
			MaximumPercent: f.num("maximum_percent"), FinalPercent: f.num("final_percent")}
		if w, ok := m["writable"].(bool); ok {
			fs.Writable = w
		} else if m["writable"] != nil {
			f.bad("writable must be true or false")
		}
		if n := f.int("valid_sample_count"); n != nil {
			fs.ValidSampleCount = *n
		}
		s.Filesystems = append(s.Filesystems, fs)
		r.problems = append(r.problems, f.problems...)
	}
	for i, v := range r.list("connection_details") {
		m, ok := v.(map[string]any)
		if !ok {
			r.bad("connection_details[%d] must be an object", i)
			continue
		}
		s.ConnectionDetails = append(s.ConnectionDetails, m)
	}
	s.CollectionErrors = r.strs("collection_errors")
	return s, r.problems
}

// ParseSystemStatus reads a stored system status document (id is its row
// id, createdAt and clientUUID its created_at and client_uuid columns).
func ParseSystemStatus(id int64, createdAt time.Time, clientUUID *string, raw []byte) (SystemStatus, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return SystemStatus{}, fmt.Errorf("read system status record %d: %w", id, err)
	}
	s, _ := statusFields(doc) // checked when stored
	s.ID, s.CreatedAt, s.ClientUUID = id, createdAt, clientUUID
	return s, nil
}

// Reading is what the record says about the health metrics: cpu and memory
// are the average percent over the record's interval (else the final
// sample), filesystem the fullest of its filesystems (final percent, else
// average); the network transport is the type of the newest connection
// detail (by client_time, else the last one listed).
func (s SystemStatus) Reading() fleethealth.Reading {
	r := fleethealth.Reading{RecordID: s.ID, Percent: map[string]*float64{
		fleethealth.MetricCPU:    firstOf(s.CPUAveragePercent, s.CPUFinalPercent),
		fleethealth.MetricMemory: firstOf(s.MemoryAveragePercent, s.MemoryFinalPercent),
	}}
	for _, f := range s.Filesystems {
		if p := firstOf(f.FinalPercent, f.AveragePercent); p != nil {
			if cur := r.Percent[fleethealth.MetricFilesystem]; cur == nil || *p > *cur {
				r.Percent[fleethealth.MetricFilesystem] = p
			}
		}
	}
	var newest time.Time
	for _, c := range s.ConnectionDetails {
		t, _ := c["type"].(string)
		if t == "" {
			continue
		}
		at := time.Time{}
		if ct, ok := c["client_time"].(string); ok {
			at, _ = ParseTime(ct)
		}
		if r.NetworkTransport == nil || !at.Before(newest) {
			r.NetworkTransport, newest = &t, at
		}
	}
	return r
}

func firstOf(vs ...*float64) *float64 {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

// fieldReader reads typed optional fields of a JSON object decoded with
// UseNumber, collecting a problem for each of the wrong type.
type fieldReader struct {
	doc      map[string]any
	prefix   string
	problems []string
}

func (r *fieldReader) bad(format string, args ...any) {
	r.problems = append(r.problems, r.prefix+fmt.Sprintf(format, args...))
}

func (r *fieldReader) str(key string) *string {
	switch v := r.doc[key].(type) {
	case nil:
	case string:
		return &v
	default:
		r.bad("%s must be a string", key)
	}
	return nil
}

func (r *fieldReader) num(key string) *float64 {
	switch v := r.doc[key].(type) {
	case nil:
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return &f
		}
		r.bad("%s must be a number", key)
	case float64:
		return &v
	default:
		r.bad("%s must be a number", key)
	}
	return nil
}

func (r *fieldReader) int(key string) *int64 {
	v := r.doc[key]
	if v == nil {
		return nil
	}
	if n, ok := intValue(v); ok {
		return &n
	}
	r.bad("%s must be an integer", key)
	return nil
}

func intValue(v any) (int64, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(v.String(), 10, 64)
		return n, err == nil
	case float64:
		return int64(v), float64(int64(v)) == v
	}
	return 0, false
}

func (r *fieldReader) time(key string) *time.Time {
	s := r.str(key)
	if s == nil {
		return nil
	}
	t, err := ParseTime(*s)
	if err != nil {
		r.bad("%s %q is not an ISO 8601 time", key, *s)
		return nil
	}
	return &t
}

// list reads an optional array.
func (r *fieldReader) list(key string) []any {
	switch v := r.doc[key].(type) {
	case nil:
	case []any:
		return v
	default:
		r.bad("%s must be an array", key)
	}
	return nil
}

func (r *fieldReader) strs(key string) []string {
	var out []string
	for i, v := range r.list(key) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		} else {
			r.bad("%s[%d] must be a string", key, i)
		}
	}
	return out
}

// scanSystemStatus reads a row of id, created_at, client_uuid, doc.
func scanSystemStatus(row pgx.CollectableRow) (SystemStatus, error) {
	var id int64
	var at time.Time
	var cu *string
	var doc []byte
	if err := row.Scan(&id, &at, &cu, &doc); err != nil {
		return SystemStatus{}, err
	}
	return ParseSystemStatus(id, at, cu, doc)
}

// LatestSystemStatusByClients loads the newest system status record of
// each of the data owner's clients with the given UUIDs.
func LatestSystemStatusByClients(ownerID int64, uuids []string) Read[SystemStatus] {
	const q = `SELECT d.id, d.created_at, d.client_uuid::text, d.doc FROM unnest($2::uuid[]) AS c(uuid)
		CROSS JOIN LATERAL (SELECT id, created_at, client_uuid, doc FROM documents
			WHERE data_owner_id = $1 AND kind = 'system_status' AND client_uuid = c.uuid
			ORDER BY created_at DESC, id DESC LIMIT 1) d`
	return Read[SystemStatus]{step: "load latest system status records", sql: q, args: []any{ownerID, uuids}, scan: scanSystemStatus}
}
