package store

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/vocab"
)

// Events told by stored documents, found in InsertDocuments' transaction:
// an anomaly event stored for the first time (anomaly_event.created), one
// whose status moved from new to resolved (anomaly_event.resolved), and a
// measurement stored for the first time with "success": false while the
// data owner's study failure detection is on (study_execution.failed).

// priorDocuments answers the stored status ("" for a measurement) of the
// anomaly events of docs and of its measurements that may have failed (a
// false in them: documentEvents decides) that were stored before this
// import, by kind and id.
func priorDocuments(ctx context.Context, tx pgx.Tx, ownerID int64, docs []Document) (map[[2]string]string, error) {
	out := map[[2]string]string{}
	var kinds, ids []string
	for _, d := range docs {
		if d.Kind == vocab.KindAnomalyEvent || d.Kind == vocab.KindMeasurement && bytes.Contains(d.Doc, []byte("false")) {
			kinds, ids = append(kinds, d.Kind), append(ids, d.DocID)
		}
	}
	if len(kinds) == 0 {
		return out, nil
	}
	const q = `SELECT d.kind, d.doc_id, coalesce(d.doc->>'status', '') FROM documents d
		JOIN unnest($2::text[], $3::text[]) t(kind, doc_id) ON t.kind = d.kind AND t.doc_id = d.doc_id
		WHERE d.data_owner_id = $1`
	// Planned with its ids, as takenIDs' look-ups are.
	rows, err := tx.Query(ctx, q, pgx.QueryExecModeExec, ownerID, kinds, ids)
	if err != nil {
		return nil, mapErr("load prior documents", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, id, status string
		if err := rows.Scan(&kind, &id, &status); err != nil {
			return nil, mapErr("load prior documents", err)
		}
		out[[2]string{kind, id}] = status
	}
	return out, mapErr("load prior documents", rows.Err())
}

// hasEventDocuments reports whether docs may tell events (anomaly events or
// measurements), so imports of other kinds skip the look-up.
func hasEventDocuments(docs []Document) bool {
	for _, d := range docs {
		if d.Kind == vocab.KindAnomalyEvent || d.Kind == vocab.KindMeasurement {
			return true
		}
	}
	return false
}

// documentEvents makes the events of docs (the last copy of each stored;
// refused ones left out) against what was stored before (prior).
func documentEvents(docs []Document, refused []int, prior map[[2]string]string, studyFailures bool) []NewEvent {
	skip := map[int]bool{}
	for _, i := range refused {
		skip[i] = true
	}
	last := map[[2]string]int{}
	for i, d := range docs {
		if !skip[i] && (d.Kind == vocab.KindAnomalyEvent || d.Kind == vocab.KindMeasurement) {
			last[[2]string{d.Kind, d.DocID}] = i
		}
	}
	var out []NewEvent
	for i, d := range docs {
		key := [2]string{d.Kind, d.DocID}
		if skip[i] || last[key] != i {
			continue
		}
		before, stored := prior[key]
		switch d.Kind {
		case vocab.KindAnomalyEvent:
			var doc map[string]any
			if json.Unmarshal(d.Doc, &doc) != nil {
				continue
			}
			status, _ := doc["status"].(string)
			switch {
			case !stored:
				out = append(out, anomalyEvent(EventAnomalyCreated, d, doc))
			case before == "new" && status == "resolved":
				out = append(out, anomalyEvent(EventAnomalyResolved, d, doc))
			}
		case vocab.KindMeasurement:
			// Only a document with a false in it can have "success": false
			// (a literal is never escaped); most have none and are not decoded.
			if stored || !studyFailures || !bytes.Contains(d.Doc, []byte("false")) {
				continue
			}
			var doc map[string]any
			if json.Unmarshal(d.Doc, &doc) != nil || doc["success"] != false {
				continue
			}
			out = append(out, studyFailure(d, doc))
		}
	}
	return out
}

// anomalyEvent tells an anomaly event document: data {"anomaly_event": doc}.
func anomalyEvent(typ string, d Document, doc map[string]any) NewEvent {
	e := NewEvent{Type: typ, Data: map[string]any{"anomaly_event": doc}, ClientUUID: d.ClientUUID}
	if mt, ok := doc["measurement_type"].(string); ok && mt != "" {
		e.MeasurementType = &mt
	}
	if sev, ok := doc["severity"].(string); ok && (sev == "warning" || sev == "critical") {
		e.Severity = &sev
	}
	return e
}

// studyFailure tells a failed measurement: data {"measurement": id, type,
// study, created_at, error}.
func studyFailure(d Document, doc map[string]any) NewEvent {
	m := map[string]any{"id": d.DocID, "type": d.Type, "created_at": doc["created_at"],
		"study": doc["study"], "error": doc["error"]}
	return NewEvent{Type: EventStudyExecutionFailed, Data: map[string]any{"measurement": m},
		ClientUUID: d.ClientUUID, MeasurementType: d.Type}
}
