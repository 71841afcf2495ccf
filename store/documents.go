package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/isotime"
	"github.com/fleetgraph/fleetgraph/rawjson"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// ErrForeignClient: a document names a client that another data owner owns.
var ErrForeignClient = errors.New("client belongs to another data owner")

// Document is a documents row: the JSON document and the columns derived
// from it that searches and listings filter on.
type Document struct {
	ID            int64     `db:"id"`
	Kind          string    `db:"kind"`
	DocID         string    `db:"doc_id"`
	ClientUUID    *string   `db:"client_uuid"`
	Type          *string   `db:"type"`
	Subject       *string   `db:"subject"`
	MeasurementID *string   `db:"measurement_id"`
	CreatedAt     time.Time `db:"created_at"`
	Doc           []byte    `db:"doc"` // the JSON object
	Version       int64     `db:"version"`
}

// ParseDocument reads one JSON object of the given kind into a Document
// ready for InsertDocuments. It refuses what PostgreSQL's jsonb would refuse
// (invalid UTF-8, NUL characters) so one bad document cannot fail a batch.
func ParseDocument(kind string, raw []byte) (Document, error) {
	if !utf8.Valid(raw) {
		return Document{}, errors.New("not valid UTF-8")
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return Document{}, errors.New("not a JSON object")
	}
	if kind != vocab.KindSystemStatus && !bytes.Contains(raw, []byte(`\u`)) && json.Valid(raw) {
		// Most documents: valid, nothing hidden in escapes, and only the
		// members the columns come from are decoded (decoding every
		// document whole was a sixth of the probes' ingest's Go CPU).
		doc := map[string]any{}
		rawjson.Members(raw, func(key string, value []byte) bool {
			if columnMembers[key] {
				doc[key] = decodeNumbers(value) // a repeated key: the last counts, as in a decoded object
			}
			return true
		})
		d, err := DocumentFields(kind, doc)
		d.Doc = raw
		return d, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return Document{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 {
		return Document{}, errors.New("invalid JSON: text after the object")
	}
	d, err := DocumentFields(kind, doc)
	if err != nil {
		return Document{}, err
	}
	d.Doc = raw
	// Escapes are where NULs and lone surrogates (both refused by jsonb) hide;
	// re-encoding the decoded value drops the surrogates.
	if bytes.Contains(raw, []byte(`\u`)) {
		if hasNUL(doc) {
			return Document{}, errors.New(`contains a NUL character (\u0000)`)
		}
		if d.Doc, err = json.Marshal(doc); err != nil {
			return Document{}, fmt.Errorf("invalid JSON: %w", err)
		}
	}
	return d, nil
}

// columnMembers are the members of a document DocumentFields reads,
// except for a system status record's (statusFields reads them all).
var columnMembers = map[string]bool{"id": true, "client_uuid": true, "client": true, "type": true, "study": true,
	"subject": true, "measurement_id": true, "created_at": true}

// decodeNumbers is the valid JSON value v decoded, numbers as json.Number.
func decodeNumbers(v []byte) any {
	switch v[0] {
	case '"':
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1])
		}
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	case '{', '[':
	default:
		return json.Number(v)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	_ = dec.Decode(&x)
	return x
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// DocumentFields derives the indexed columns of a document of the given
// kind (Doc is left empty): doc_id from "id" (string or number, at most
// MaxIDLen bytes); client_uuid from "client_uuid" (for user feedbacks also
// "client.uuid"), required except for anomaly events; type from "type"
// (letters, digits, _, . and -, as it names an index), required for
// measurements, client reports and event bundles; subject from
// "study.subject" (measurements) or "subject" (anomaly events);
// measurement_id from "measurement_id" (client reports, event bundles,
// network requests); created_at from "created_at" (ISO 8601, required).
// A system status record's fields must have the spec's types (statusFields).
func DocumentFields(kind string, doc map[string]any) (Document, error) {
	d := Document{Kind: kind}
	if !validKind(kind) {
		return d, fmt.Errorf("unknown kind %q", kind)
	}
	id, err := idField(doc, "id")
	if err != nil {
		return d, err
	}
	d.DocID = *id

	cu, err := stringField(doc, "client_uuid")
	if err != nil {
		return d, err
	}
	if cu == nil && kind == vocab.KindUserFeedback {
		if c, ok := doc["client"].(map[string]any); ok {
			if cu, err = stringField(c, "uuid"); err != nil {
				return d, fmt.Errorf("client.%w", err)
			}
		}
	}
	switch {
	case cu != nil:
		u, err := uuid.Parse(*cu)
		if err != nil || len(*cu) != 36 {
			return d, fmt.Errorf("client_uuid %q is not a UUID", *cu)
		}
		s := u.String()
		d.ClientUUID = &s
	case kind != vocab.KindAnomalyEvent:
		return d, errors.New("client_uuid is missing")
	}

	if d.Type, err = stringField(doc, "type"); err != nil {
		return d, err
	}
	switch {
	case d.Type == nil && typedKind(kind):
		return d, errors.New("type is missing")
	case d.Type != nil && !validType(*d.Type):
		return d, fmt.Errorf("type %q is not a document type (1 to %d letters, digits, _, . or -)", *d.Type, maxTypeLen)
	}
	switch kind {
	case vocab.KindMeasurement:
		if st, ok := doc["study"].(map[string]any); ok {
			if d.Subject, err = stringField(st, "subject"); err != nil {
				return d, fmt.Errorf("study.%w", err)
			}
		}
	case vocab.KindAnomalyEvent:
		if d.Subject, err = stringField(doc, "subject"); err != nil {
			return d, err
		}
	case vocab.KindSystemStatus:
		if _, problems := statusFields(doc); len(problems) > 0 {
			return d, errors.New(problems[0])
		}
	case vocab.KindClientReport, vocab.KindEventBundle, vocab.KindNetworkRequest:
		if doc["measurement_id"] != nil {
			if d.MeasurementID, err = idField(doc, "measurement_id"); err != nil {
				return d, err
			}
		}
	}

	ts, ok := doc["created_at"]
	if !ok || ts == nil {
		return d, errors.New("created_at is missing")
	}
	s, ok := ts.(string)
	if !ok {
		return d, errors.New("created_at must be an ISO 8601 string")
	}
	if d.CreatedAt, err = ParseTime(s); err != nil {
		return d, fmt.Errorf("created_at %q is not an ISO 8601 time", s)
	}
	return d, nil
}

// typedKind: documents of these kinds must carry a type (docs/design.md: a
// measurement's type; listings and indices of client reports and event
// bundles go by it).
func typedKind(kind string) bool {
	return kind == vocab.KindMeasurement || kind == vocab.KindClientReport || kind == vocab.KindEventBundle
}

// maxTypeLen bounds a type: it becomes part of an index name
// (analytics-production-<slug>-<kind>-<type>, at most 255 bytes).
const maxTypeLen = 100

// validType: a type names an index, so it takes only what index names
// take and the search backends accept (letters, digits, _, ., -).
func validType(t string) bool {
	if t == "" || len(t) > maxTypeLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// MaxIDLen bounds document ids (and measurement_id): Elasticsearch's _id
// takes at most 512 bytes.
const MaxIDLen = 512

func validKind(kind string) bool {
	for _, k := range vocab.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// idField reads an id: a non-empty string or a number (kept as written).
func idField(doc map[string]any, key string) (*string, error) {
	var s string
	switch v := doc[key].(type) {
	case nil:
		return nil, fmt.Errorf("%s is missing", key)
	case string:
		s = v
	case json.Number:
		s = v.String()
	case float64: // maps decoded without UseNumber
		s = fmt.Sprint(int64(v))
		if float64(int64(v)) != v {
			s = fmt.Sprint(v)
		}
	default:
		return nil, fmt.Errorf("%s must be a string or a number", key)
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s is empty", key)
	}
	if len(s) > MaxIDLen {
		return nil, fmt.Errorf("%s is longer than %d bytes", key, MaxIDLen)
	}
	return &s, nil
}

// stringField reads an optional string: nil when absent or null.
func stringField(doc map[string]any, key string) (*string, error) {
	switch v := doc[key].(type) {
	case nil:
		return nil, nil
	case string:
		return &v, nil
	default:
		return nil, fmt.Errorf("%s must be a string", key)
	}
}

// ParseTime reads an ISO 8601 date or time as a stored document's times
// are written (isotime.Documents); without a zone, UTC.
func ParseTime(s string) (time.Time, error) {
	if t, _, ok := isotime.Parse(isotime.Documents, s, nil); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time", s)
}

// InsertResult is what InsertDocuments did.
type InsertResult struct {
	Inserted, Updated int
	// Unchanged counts documents identical to the stored ones (their version
	// is kept) and earlier copies of a document repeated in the batch.
	Unchanged      int
	ClientsCreated int
	// Refused are the indices (into the docs given) of documents whose
	// client belongs to another data owner (ErrForeignClient).
	Refused []int
	// Taken are the indices of documents whose kind and id a stored
	// document of another client (or of none) has, kept as it was
	// (InsertOptions.KeepOthers; ErrTakenID).
	Taken []int
}

// InsertOptions change what InsertDocumentsWith does.
type InsertOptions struct {
	// KeepOthers keeps every stored document whose client differs from the
	// one of the document of the same kind and id given: it is neither
	// replaced nor counted, and its index is in InsertResult.Taken. The
	// client API reports so (a probe never replaces another's document);
	// fleetgraph import replaces whatever is stored.
	KeepOthers bool
	// HoldAnalysis keeps the measurements stored from being judged until
	// ReleaseAnalysis (fleetgraph import: the analyzer then judges the
	// whole import in time order, whatever the order of its lines).
	HoldAnalysis bool
}

// ErrTakenID refuses a document whose id is another client's document.
var ErrTakenID = errors.New("this id is another client's document")

// Loaded counts the documents now stored as given.
func (r InsertResult) Loaded() int { return r.Inserted + r.Updated + r.Unchanged }

// InsertDocuments stores documents of the data owner in one transaction:
// one INSERT ... ON CONFLICT over the batch sent as arrays (batchColumns).
// A document already stored (same kind and doc_id) is replaced and gets a
// new version when its JSON changed; within docs the last copy of a
// document wins.
// Clients named by the documents that do not exist yet are created for the
// data owner (type automator); documents naming another data owner's
// client are refused, not stored. The fields of the stored documents are
// typed in the search mapping (DetectMappings; first type wins). The
// health of the clients of system status records is evaluated in the same
// transaction (evaluateHealth), and the events the documents tell are
// emitted in it (docevents.go). Stored and changed measurements are queued
// for the analyzer in it (analyzer.go).
func (s *Store) InsertDocuments(ctx context.Context, ownerID int64, docs []Document) (InsertResult, error) {
	return s.InsertDocumentsWith(ctx, ownerID, docs, InsertOptions{})
}

// InsertDocumentsWith is InsertDocuments with options.
func (s *Store) InsertDocumentsWith(ctx context.Context, ownerID int64, docs []Document, opt InsertOptions) (InsertResult, error) {
	var res InsertResult
	if len(docs) == 0 {
		return res, nil
	}
	batch, err := newBatchColumns(docs)
	if err != nil {
		return res, err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		res = InsertResult{}

		const newClients = `INSERT INTO clients (data_owner_id, uuid, type)
			SELECT DISTINCT $1::bigint, u::uuid, 'automator' FROM unnest($2::text[]) u WHERE u IS NOT NULL
			ORDER BY 2 ON CONFLICT (uuid) DO NOTHING`
		tag, err := tx.Exec(ctx, newClients, ownerID, batch.clients)
		if err != nil {
			return mapErr("create clients", err)
		}
		res.ClientsCreated = int(tag.RowsAffected())
		// Checked after the clients insert, so a client another data owner
		// created concurrently is seen here.
		const foreign = `SELECT (t.n - 1)::int FROM unnest($2::text[]) WITH ORDINALITY t(u, n)
			JOIN clients c ON c.uuid = t.u::uuid WHERE c.data_owner_id <> $1 ORDER BY 1`
		rows, _ := tx.Query(ctx, foreign, ownerID, batch.clients)
		if res.Refused, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
			return mapErr("check clients", err)
		}
		var prior map[[2]string]string
		var studyFailures bool
		if hasEventDocuments(docs) {
			if prior, err = priorDocuments(ctx, tx, ownerID, docs); err != nil {
				return err
			}
			err = tx.QueryRow(ctx, `SELECT study_failure_detection_enabled FROM data_owners WHERE id = $1`,
				ownerID).Scan(&studyFailures)
			if err != nil {
				return mapErr("load study failure detection", err)
			}
		}
		// The last copy of a document repeated in docs wins; without
		// repeats (the client API's groups) no sort is needed.
		rep := repeats(docs)
		upsert := upsertStatement(batchSource(rep))
		// With KeepOthers, the documents given that neither were inserted
		// nor replaced one: identical to the stored ones, or another
		// client's id (the arbiter index decides, whatever the statistics).
		var untouched []int
		var judge []string // clients with measurements to judge
		// The upsert stores nothing when a document of the batch must
		// move first (stored at another created_at: moveDocuments); it
		// runs again after the move, with the moves done.
		for _, mayMove := range []bool{true, false} {
			var mustMove bool
			err = tx.QueryRow(ctx, upsert, batch.upsertArgs(ownerID, opt.KeepOthers, opt.HoldAnalysis, mayMove)...).
				Scan(&res.Inserted, &res.Updated, &untouched, &judge, &mustMove)
			if err != nil {
				return mapErr("insert documents", err)
			}
			if !mustMove {
				break
			}
			if err := moveDocuments(ctx, tx, ownerID, rep, opt.KeepOthers, batch); err != nil {
				return err
			}
		}
		if !opt.HoldAnalysis {
			if err := s.queueAnalysis(ctx, tx, ownerID, judge); err != nil {
				return err
			}
		}
		if len(untouched) > 0 {
			if res.Taken, err = takenIDs(ctx, tx, ownerID, docs, untouched); err != nil {
				return err
			}
		}
		res.Unchanged = len(docs) - len(res.Refused) - len(res.Taken) - res.Inserted - res.Updated
		if err := saveMappings(ctx, tx, ownerID, DetectMappings(docs, slices.Concat(res.Refused, res.Taken))); err != nil {
			return err
		}
		if prior != nil {
			if err := s.Emit(ctx, tx, ownerID, documentEvents(docs, slices.Concat(res.Refused, res.Taken), prior, studyFailures)...); err != nil {
				return err
			}
		}
		if uuids := statusClients(docs); len(uuids) > 0 {
			_, err := s.evaluateHealth(ctx, tx, ownerID, uuids)
			return err
		}
		return nil
	})
	if err != nil {
		return InsertResult{}, err
	}
	return res, nil
}

// batchColumns is a batch of documents as one array a column, the
// statements' parameters: the batch's rows are unnest(...) WITH ORDINALITY,
// seq a document's index in the batch. Sent as arrays rather than copied
// into a temporary table, which cost a fixed few milliseconds a batch
// (creating, filling and dropping it wrote and deleted system catalog rows
// every time): batches of 25 are stored a third faster
// (BenchmarkInsertDocuments).
type batchColumns struct {
	kinds, docIDs                     []string
	clients, types, subjects, measIDs []*string
	createdAt                         []time.Time
	docs                              []json.RawMessage
}

func newBatchColumns(docs []Document) (batchColumns, error) {
	n := len(docs)
	b := batchColumns{kinds: make([]string, n), docIDs: make([]string, n), clients: make([]*string, n),
		types: make([]*string, n), subjects: make([]*string, n), measIDs: make([]*string, n),
		createdAt: make([]time.Time, n), docs: make([]json.RawMessage, n)}
	for i, d := range docs {
		if d.ClientUUID != nil {
			if _, err := uuid.Parse(*d.ClientUUID); err != nil {
				return batchColumns{}, fmt.Errorf("document %d: client_uuid %q is not a UUID", i, *d.ClientUUID)
			}
		}
		b.kinds[i], b.docIDs[i], b.clients[i] = d.Kind, d.DocID, d.ClientUUID
		b.types[i], b.subjects[i], b.measIDs[i] = d.Type, d.Subject, d.MeasurementID
		b.createdAt[i], b.docs[i] = d.CreatedAt, json.RawMessage(d.Doc)
	}
	return b, nil
}

// upsertArgs are the upsert's arguments (upsertStatement over
// batchSource): every column at $4…$11, planned with its values; $12
// mayMove.
func (b batchColumns) upsertArgs(ownerID int64, keepOthers, hold, mayMove bool) []any {
	return []any{pgx.QueryExecModeExec, ownerID, keepOthers, hold,
		b.kinds, b.docIDs, b.clients, b.types, b.subjects, b.measIDs, b.createdAt, b.docs, mayMove}
}

// movedArgs are the arguments of the statements over movedSource: the
// columns that place a document at $3…, planned with their values.
func (b batchColumns) movedArgs(ownerID int64, keepOthers bool) []any {
	return []any{pgx.QueryExecModeExec, ownerID, keepOthers, b.kinds, b.docIDs, b.clients, b.createdAt}
}

// batchSource selects the batch's rows to store from the columns at
// $4…$11 (batchColumns.upsertArgs): not another data owner's clients'; with
// repeats, the last copy of each document.
func batchSource(repeats bool) string {
	return chosenRows(`SELECT (t.n - 1)::int AS seq, t.kind, t.doc_id, t.client_uuid::uuid AS client_uuid, t.type,
		t.subject, t.measurement_id, t.created_at, t.doc
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::jsonb[])
			WITH ORDINALITY t(kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc, n)`, repeats)
}

// movedSource is batchSource with only the columns that place a document,
// from $3…$6 (batchColumns.movedArgs).
func movedSource(repeats bool) string {
	return chosenRows(`SELECT (t.n - 1)::int AS seq, t.kind, t.doc_id, t.client_uuid::uuid AS client_uuid, t.created_at
		FROM unnest($3::text[], $4::text[], $5::text[], $6::timestamptz[]) WITH ORDINALITY t(kind, doc_id, client_uuid, created_at, n)`, repeats)
}

// chosenRows keeps of the batch's rows those to store ($1 the data owner).
func chosenRows(rows string, repeats bool) string {
	if repeats {
		return `SELECT DISTINCT ON (kind, doc_id) * FROM (` + rows + `) t
			WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.uuid = t.client_uuid AND c.data_owner_id <> $1)
			ORDER BY kind, doc_id, seq DESC`
	}
	return `SELECT * FROM (` + rows + `) t
		WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.uuid = t.client_uuid AND c.data_owner_id <> $1)`
}

// upsertStatement stores src's rows and answers what it did ($1 the data
// owner, $2 keep others, $3 hold the analysis). pre: the documents of src
// stored before (xmax, which told inserted from updated rows, cannot be
// read from a partitioned table's RETURNING). One stored at another
// created_at (elsewhere) that may move there (movable: the same client's,
// or any without KeepOthers) stops the statement when $12 (may move) is
// set: it then stores nothing and answers true last, and
// InsertDocumentsWith moves the documents (moveDocuments) and runs it
// again without $12. One still elsewhere then is another client's
// (KeepOthers): not inserted beside it, reported Taken. So the stored
// copies are probed once for the batches that move nothing (nearly all),
// where a statement of their own looked for moves before (a probe per
// document more: 12 % of the statements' time at bench/probes.sh's
// ceiling).
func upsertStatement(src string) string {
	return `WITH src AS (` + src + `), pre AS MATERIALIZED (
		SELECT s.kind, s.doc_id, o.created_at <> s.created_at AS elsewhere,
			o.created_at <> s.created_at AND (NOT $2 OR o.client_uuid IS NOT DISTINCT FROM s.client_uuid) AS movable
		FROM src s ` + storedCopies + `
	), stop AS (SELECT $12::boolean AND EXISTS (SELECT 1 FROM pre WHERE movable) AS stop
	), ins AS (
		INSERT INTO documents AS d (data_owner_id, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc)
		SELECT $1, kind, doc_id, client_uuid, type, subject, measurement_id, created_at, doc FROM src s
		WHERE NOT EXISTS (SELECT 1 FROM pre WHERE pre.kind = s.kind AND pre.doc_id = s.doc_id AND pre.elsewhere)
			AND NOT (SELECT stop FROM stop)
		ON CONFLICT (data_owner_id, kind, doc_id, created_at) DO UPDATE SET client_uuid = EXCLUDED.client_uuid,
			type = EXCLUDED.type, subject = EXCLUDED.subject, measurement_id = EXCLUDED.measurement_id,
			created_at = EXCLUDED.created_at, doc = EXCLUDED.doc, version = next_document_version()
		WHERE d.doc IS DISTINCT FROM EXCLUDED.doc AND (NOT $2 OR d.client_uuid IS NOT DISTINCT FROM EXCLUDED.client_uuid)
		RETURNING NOT EXISTS (SELECT 1 FROM pre WHERE pre.kind = d.kind AND pre.doc_id = d.doc_id) AS inserted,
			d.kind, d.doc_id, d.id, d.client_uuid, d.created_at
	), inbox AS (` + inboxInsert + `)
	SELECT (SELECT count(*) FILTER (WHERE inserted) FROM ins), (SELECT count(*) FILTER (WHERE NOT inserted) FROM ins),
		CASE WHEN $2 THEN (SELECT coalesce(array_agg(s.seq ORDER BY s.seq), '{}') FROM src s
			WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.kind = s.kind AND ins.doc_id = s.doc_id)) END,
		(SELECT coalesce(array_agg(DISTINCT client_uuid::text), '{}') FROM inbox), (SELECT stop FROM stop)`
}

// storedCopies joins each row s of src to the created_at of the stored
// documents (o) of the same kind and id by probing an index once per row:
// a LATERAL subquery with OFFSET 0 is not flattened into a join. A join
// was planned as a sort or hash of every document of the data owner as
// soon as the statistics counted fewer rows than stored (a partition
// filling faster than autovacuum analyses it): a 10,000,000-document
// import slowed from 2,800 to 500 documents/s by its 400,000th. The probe
// goes by documents_doc_id (doc_id, kind) and checks the data owner
// after: written data_owner_id + 0, the owner is no index condition, so
// no index that starts with it (all the others) can be chosen instead,
// whatever the statistics say. By the unique index, on a partition
// without statistics of its rows, the planner took the owner's index on
// kind and client as cheaply and read every document of the data owner
// per probe (migration 00080).
const storedCopies = `CROSS JOIN LATERAL (SELECT o.created_at, o.client_uuid FROM documents o
	WHERE o.doc_id = s.doc_id AND o.kind = s.kind AND o.data_owner_id + 0 = $1 OFFSET 0) o`

// moveDocuments gives the stored documents whose created_at changed
// (same kind and id among the batch's) their new created_at, which moves them to
// their new month's partition (migration 00050): the upsert that follows
// then replaces them instead of storing a second copy. With keepOthers
// only the same client's documents move. It runs only when the upsert
// found a document to move, so that its join (which the planner chooses
// from the statistics) is not planned for the batches that move nothing.
func moveDocuments(ctx context.Context, tx pgx.Tx, ownerID int64, repeats, keepOthers bool, batch batchColumns) error {
	src, args := movedSource(repeats), batch.movedArgs(ownerID, keepOthers)
	q := `WITH src AS (` + src + `)
		UPDATE documents d SET created_at = s.created_at, version = next_document_version()
		FROM src s WHERE d.data_owner_id = $1 AND d.kind = s.kind AND d.doc_id = s.doc_id
			AND d.created_at <> s.created_at AND (NOT $2 OR d.client_uuid IS NOT DISTINCT FROM s.client_uuid)`
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return mapErr("move documents", err)
	}
	return nil
}

// repeats: some document of docs is there twice (same kind and id).
func repeats(docs []Document) bool {
	seen := make(map[[2]string]struct{}, len(docs))
	for _, d := range docs {
		k := [2]string{d.Kind, d.DocID}
		if _, ok := seen[k]; ok {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

// takenIDs answers which of the documents at the indices given have their
// id stored for another client (or for none). Each lookup is planned with
// its ids (QueryExecModeExec): a generic plan made while the documents'
// statistics are missing (a new database) may scan every document of the
// data owner instead of the unique index.
func takenIDs(ctx context.Context, tx pgx.Tx, ownerID int64, docs []Document, at []int) ([]int, error) {
	byKind := map[string][]int{}
	for _, i := range at {
		byKind[docs[i].Kind] = append(byKind[docs[i].Kind], i)
	}
	var taken []int
	for kind, idx := range byKind {
		ids := make([]string, len(idx))
		for j, i := range idx {
			ids[j] = docs[i].DocID
		}
		const q = `SELECT doc_id, client_uuid::text FROM documents WHERE data_owner_id = $1 AND kind = $2 AND doc_id = ANY($3)`
		rows, _ := tx.Query(ctx, q, pgx.QueryExecModeExec, ownerID, kind, ids)
		stored := map[string]*string{}
		var id string
		var cu *string
		_, err := pgx.ForEachRow(rows, []any{&id, &cu}, func() error { stored[id] = cu; return nil })
		if err != nil {
			return nil, mapErr("check document ids", err)
		}
		for _, i := range idx {
			cu, ok := stored[docs[i].DocID]
			if ok && !sameUUID(cu, docs[i].ClientUUID) {
				taken = append(taken, i)
			}
		}
	}
	slices.Sort(taken)
	return taken, nil
}

// sameUUID compares two optional UUIDs as text (any case).
func sameUUID(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && strings.EqualFold(*a, *b)
}

// statusClients lists the clients of the system status records among docs
// (their health is evaluated as they arrive).
func statusClients(docs []Document) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		if d.Kind == vocab.KindSystemStatus && d.ClientUUID != nil && !seen[*d.ClientUUID] {
			seen[*d.ClientUUID] = true
			out = append(out, *d.ClientUUID)
		}
	}
	return out
}

const documentCols = `id, kind, doc_id, client_uuid::text AS client_uuid, type, subject, measurement_id,
	created_at, doc, version`

// Document loads one of the data owner's documents.
func (s *Store) Document(ctx context.Context, ownerID int64, kind, docID string) (Document, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+documentCols+` FROM documents
		WHERE data_owner_id = $1 AND kind = $2 AND doc_id = $3`, ownerID, kind, docID)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Document])
	return d, mapErr("load document", err)
}

// DocumentsByIDs loads the data owner's documents of kind by document id
// (the federation entities); unknown ids match nothing.
func DocumentsByIDs(ownerID int64, kind string, docIDs []string) Read[Document] {
	return Read[Document]{step: "load documents by id", sql: `SELECT ` + documentCols + ` FROM documents
		WHERE data_owner_id = $1 AND kind = $2 AND doc_id = ANY($3::text[])`,
		args: []any{ownerID, kind, docIDs}, scan: pgx.RowToStructByName[Document]}
}

// DocumentsByMeasurement lists the data owner's documents of a kind that
// belong to a measurement, oldest first.
// DocumentsByMeasurements loads the documents of kind of several
// measurements (for the dataloader), oldest first.
func (s *Store) DocumentsByMeasurements(ctx context.Context, ownerID int64, kind string, measurementIDs []string) ([]Document, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+documentCols+` FROM documents
		WHERE data_owner_id = $1 AND measurement_id = ANY($3::text[]) AND kind = $2 ORDER BY created_at, id`,
		ownerID, kind, measurementIDs)
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[Document])
	return ds, mapErr("load documents", err)
}

func (s *Store) DocumentsByMeasurement(ctx context.Context, ownerID int64, kind, measurementID string) ([]Document, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+documentCols+` FROM documents
		WHERE data_owner_id = $1 AND measurement_id = $3 AND kind = $2 ORDER BY created_at, id`,
		ownerID, kind, measurementID)
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[Document])
	return ds, mapErr("load documents", err)
}

// ResolveAnomalyEvents marks the data owner's anomaly events with the given
// ids resolved (status "resolved", resolved_at now, new version), each
// with an anomaly_event.resolved event. Only events with status "new"
// change; the others and unknown ids are skipped.
func (s *Store) ResolveAnomalyEvents(ctx context.Context, ownerID int64, ids []string) (int, error) {
	const q = `UPDATE documents SET version = next_document_version(),
		doc = doc || jsonb_build_object('status', 'resolved',
			'resolved_at', to_char(now() AT TIME ZONE 'UTC', ` + isotime.MillisSQL + `))
		WHERE data_owner_id = $1 AND kind = 'anomaly_event' AND doc_id = ANY($2) AND doc->>'status' = 'new'
		RETURNING ` + documentCols
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, q, ownerID, ids)
		ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[Document])
		if err != nil {
			return mapErr("resolve anomaly events", err)
		}
		n = len(ds)
		events := make([]NewEvent, 0, len(ds))
		for _, d := range ds {
			var doc map[string]any
			if err := json.Unmarshal(d.Doc, &doc); err != nil {
				return fmt.Errorf("resolve anomaly events: %w", err)
			}
			events = append(events, anomalyEvent(EventAnomalyResolved, d, doc))
		}
		return s.Emit(ctx, tx, ownerID, events...)
	})
	return n, err
}

// DataOwnerBySlug loads a data owner by its short name.
func (s *Store) DataOwnerBySlug(ctx context.Context, slug string) (DataOwner, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+dataOwnerCols+` FROM data_owners WHERE slug = $1`, slug)
	d, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[DataOwner])
	return d, mapErr("load data owner", err)
}
