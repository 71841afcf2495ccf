package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

func TestMain(m *testing.M) { apitest.Main(m) }

func mustParse(t *testing.T, kind, js string) store.Document {
	t.Helper()
	d, err := store.ParseDocument(kind, []byte(js))
	if err != nil {
		t.Fatalf("ParseDocument(%s): %v", js, err)
	}
	return d
}

func measurementJSON(id, client, created string, extra string) string {
	return fmt.Sprintf(`{"id":%q,"type":"VideoMeasurement","client_uuid":%q,"created_at":%q,`+
		`"study":{"subject":"youtube","study_id":"yt"},"statistic_values":{"initial_loading_time":900%s}}`, id, client, created, extra)
}

func TestDocumentFields(t *testing.T) {
	const cu = "0B6F3C1E-7D4A-4C2B-9E51-1A2B3C4D5E01"
	str := func(s string) *string { return &s }
	tests := []struct {
		name, kind, doc string
		want            store.Document
		wantErr         string
	}{
		{name: "measurement takes study.subject and lower-cases the client uuid", kind: vocab.KindMeasurement,
			doc: `{"id":"m1","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":"2026-11-01T06:00:00.5Z","study":{"subject":"youtube"}}`,
			want: store.Document{Kind: vocab.KindMeasurement, DocID: "m1", ClientUUID: str(strings.ToLower(cu)), Type: str("VideoMeasurement"),
				Subject: str("youtube"), CreatedAt: time.Date(2026, 11, 1, 6, 0, 0, 5e8, time.UTC)}},
		{name: "numeric id kept as written", kind: vocab.KindUserFeedback,
			doc:  `{"id":70001,"client":{"uuid":"` + cu + `"},"type":"rating","created_at":"2026-11-03T06:31:36+01:00"}`,
			want: store.Document{Kind: vocab.KindUserFeedback, DocID: "70001", ClientUUID: str(strings.ToLower(cu)), Type: str("rating"), CreatedAt: time.Date(2026, 11, 3, 5, 31, 36, 0, time.UTC)}},
		{name: "client report takes measurement_id", kind: vocab.KindClientReport,
			doc: `{"id":"cr-1","type":"P1203ClientReport","measurement_id":"m1","client_uuid":"` + cu + `","created_at":"2026-11-01T06:01:15Z"}`,
			want: store.Document{Kind: vocab.KindClientReport, DocID: "cr-1", ClientUUID: str(strings.ToLower(cu)), Type: str("P1203ClientReport"),
				MeasurementID: str("m1"), CreatedAt: time.Date(2026, 11, 1, 6, 1, 15, 0, time.UTC)}},
		{name: "anomaly event: anomaly id, subject, no type, client optional", kind: vocab.KindAnomalyEvent,
			doc: `{"id":"video-stalling::spike::1793687194","measurement_type":"VideoMeasurement","subject":"youtube","created_at":"2026-11-03T06:31:34Z"}`,
			want: store.Document{Kind: vocab.KindAnomalyEvent, DocID: "video-stalling::spike::1793687194", Subject: str("youtube"),
				CreatedAt: time.Date(2026, 11, 3, 6, 31, 34, 0, time.UTC)}},
		{name: "id of 512 bytes and a type of 100 characters with _ . -", kind: vocab.KindMeasurement,
			doc: `{"id":"` + strings.Repeat("é", 256) + `","type":"` + strings.Repeat("a", 97) + `_.-","client_uuid":"` + cu + `","created_at":"2026-11-01"}`,
			want: store.Document{Kind: vocab.KindMeasurement, DocID: strings.Repeat("é", 256), ClientUUID: str(strings.ToLower(cu)),
				Type: str(strings.Repeat("a", 97) + "_.-"), CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "time without zone is UTC", kind: vocab.KindSystemStatus,
			doc:  `{"id":"s1","client_uuid":"` + cu + `","created_at":"2026-11-03T06:31:34"}`,
			want: store.Document{Kind: vocab.KindSystemStatus, DocID: "s1", ClientUUID: str(strings.ToLower(cu)), CreatedAt: time.Date(2026, 11, 3, 6, 31, 34, 0, time.UTC)}},
		{name: "missing created_at", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"VideoMeasurement","client_uuid":"` + cu + `"}`, wantErr: "created_at is missing"},
		{name: "bad created_at", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":"yesterday"}`, wantErr: `created_at "yesterday" is not an ISO 8601 time`},
		{name: "numeric created_at", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":1700000000}`, wantErr: "created_at must be an ISO 8601 string"},
		{name: "missing id", kind: vocab.KindMeasurement, doc: `{"client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "id is missing"},
		{name: "object id", kind: vocab.KindMeasurement, doc: `{"id":{},"client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "id must be a string or a number"},
		{name: "client_uuid not a UUID", kind: vocab.KindMeasurement, doc: `{"id":"m1","client_uuid":"abc","created_at":"2026-11-01"}`, wantErr: `client_uuid "abc" is not a UUID`},
		{name: "client_uuid missing", kind: vocab.KindMeasurement, doc: `{"id":"m1","created_at":"2026-11-01"}`, wantErr: "client_uuid is missing"},
		{name: "type not a string", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":3,"client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "type must be a string"},
		{name: "measurement without type", kind: vocab.KindMeasurement, doc: `{"id":"m1","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "type is missing"},
		{name: "client report without type", kind: vocab.KindClientReport, doc: `{"id":"r1","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "type is missing"},
		{name: "event bundle with null type", kind: vocab.KindEventBundle, doc: `{"id":"e1","type":null,"client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "type is missing"},
		{name: "empty type", kind: vocab.KindUserFeedback, doc: `{"id":1,"type":"","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: `type "" is not a document type`},
		{name: "type that cannot name an index", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"Video Measurement,*","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: `type "Video Measurement,*" is not a document type`},
		{name: "type of 101 characters", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"` + strings.Repeat("T", 101) + `","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "is not a document type"},
		{name: "id of 513 bytes", kind: vocab.KindMeasurement, doc: `{"id":"` + strings.Repeat("é", 256) + `x","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "id is longer than 512 bytes"},
		{name: "measurement_id of 513 bytes", kind: vocab.KindClientReport, doc: `{"id":"r1","type":"P1203ClientReport","measurement_id":"` + strings.Repeat("m", 513) + `","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "measurement_id is longer than 512 bytes"},
		{name: "empty id", kind: vocab.KindMeasurement, doc: `{"id":" ","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":"2026-11-01"}`, wantErr: "id is empty"},
		{name: "unknown kind", kind: "measurements", doc: `{"id":"m1"}`, wantErr: `unknown kind "measurements"`},
		{name: "not an object", kind: vocab.KindMeasurement, doc: `[1]`, wantErr: "not a JSON object"},
		{name: "broken JSON", kind: vocab.KindMeasurement, doc: `{"id":"m1",`, wantErr: "invalid JSON"},
		{name: "two values", kind: vocab.KindMeasurement, doc: `{"id":"m1"} {}`, wantErr: "text after the object"},
		{name: "NUL character", kind: vocab.KindMeasurement, doc: `{"id":"m1","type":"VideoMeasurement","client_uuid":"` + cu + `","created_at":"2026-11-01","x":"a\u0000b"}`, wantErr: "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := store.ParseDocument(tc.kind, []byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Doc = nil
			if g, w := fmt.Sprintf("%+v", show(got)), fmt.Sprintf("%+v", show(tc.want)); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

// show makes a store.Document comparable as text (pointers dereferenced).
func show(d store.Document) map[string]any {
	deref := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{"kind": d.Kind, "doc_id": d.DocID, "client_uuid": deref(d.ClientUUID), "type": deref(d.Type),
		"subject": deref(d.Subject), "measurement_id": deref(d.MeasurementID), "created_at": d.CreatedAt.UTC().Format(time.RFC3339Nano)}
}

func TestLoneSurrogateIsReEncoded(t *testing.T) {
	ctx := context.Background()
	owner := apitest.Get(t).NewOwner(t, "surrogate").ID
	d := mustParse(t, vocab.KindMeasurement, measurementJSON("m-sur", uuid.NewString(), "2026-11-01T00:00:00Z", `,"note":"\ud800x"`))
	if _, err := apitest.Get(t).Store.InsertDocuments(ctx, owner, []store.Document{d}); err != nil {
		t.Fatalf("insert: %v", err)
	}
}

func TestInsertDocumentsInsertsAndReimportUpdates(t *testing.T) {
	ctx := context.Background()
	owner := apitest.Get(t).NewOwner(t, "insert").ID
	c1, c2 := uuid.NewString(), uuid.NewString()
	docs := []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("m1", c1, "2026-11-01T06:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("m2", c1, "2026-11-02T06:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("m3", c2, "2026-11-03T06:00:00Z", "")),
	}
	res, err := apitest.Get(t).Store.InsertDocuments(ctx, owner, docs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 3 || res.Updated != 0 || res.Unchanged != 0 || res.ClientsCreated != 2 || len(res.Refused) != 0 {
		t.Fatalf("first import: %+v", res)
	}
	m1, err := apitest.Get(t).Store.Document(ctx, owner, vocab.KindMeasurement, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if *m1.ClientUUID != c1 || *m1.Subject != "youtube" || *m1.Type != "VideoMeasurement" || !m1.CreatedAt.Equal(time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)) {
		t.Errorf("m1 = %+v", show(m1))
	}
	var doc map[string]any
	if err := json.Unmarshal(m1.Doc, &doc); err != nil || doc["id"] != "m1" {
		t.Errorf("m1 doc = %s (%v)", m1.Doc, err)
	}

	// Re-import: m1 changed, m2 identical, m4 new and repeated (last wins).
	again := []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("m1", c1, "2026-11-01T07:00:00Z", `,"stalling_number":2`)),
		docs[1],
		mustParse(t, vocab.KindMeasurement, measurementJSON("m4", c2, "2026-11-04T06:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("m4", c2, "2026-11-04T06:00:00Z", `,"final":true`)),
	}
	res, err = apitest.Get(t).Store.InsertDocuments(ctx, owner, again)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 1 || res.Updated != 1 || res.Unchanged != 2 || res.ClientsCreated != 0 || res.Loaded() != 4 {
		t.Fatalf("re-import: %+v", res)
	}
	m1b, _ := apitest.Get(t).Store.Document(ctx, owner, vocab.KindMeasurement, "m1")
	if m1b.Version <= m1.Version || !strings.Contains(string(m1b.Doc), "stalling_number") || m1b.CreatedAt.Hour() != 7 || m1b.ID != m1.ID {
		t.Errorf("m1 after re-import: version %d (was %d), doc %s", m1b.Version, m1.Version, m1b.Doc)
	}
	m2 := func() store.Document {
		d, _ := apitest.Get(t).Store.Document(ctx, owner, vocab.KindMeasurement, "m2")
		return d
	}()
	if m2.Version > m1b.Version {
		t.Errorf("identical m2 got a new version")
	}
	m4, _ := apitest.Get(t).Store.Document(ctx, owner, vocab.KindMeasurement, "m4")
	if !strings.Contains(string(m4.Doc), `"final"`) {
		t.Errorf("m4 = %s, want the last copy", m4.Doc)
	}
}

// TestInsertDocumentsKeepOthers: with KeepOthers (the client API) a stored
// document of another client, or of none, keeps its id: the document given
// is answered in Taken, and the stored one is left as it was; the client's
// own documents are inserted, replaced and kept unchanged as always.
func TestInsertDocumentsKeepOthers(t *testing.T) {
	ctx := context.Background()
	st := apitest.Get(t).Store
	owner := apitest.Get(t).NewOwner(t, "keep-others").ID
	mine, other := uuid.NewString(), uuid.NewString()
	first := []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("own-changed", mine, "2026-11-01T06:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("own-same", mine, "2026-11-01T06:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("others", other, "2026-11-01T06:00:00Z", "")),
		mustParse(t, vocab.KindAnomalyEvent, `{"id":"no-client","subject":"youtube","created_at":"2026-11-01T06:00:00Z"}`),
	}
	if _, err := st.InsertDocuments(ctx, owner, first); err != nil {
		t.Fatal(err)
	}
	second := []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("own-changed", mine, "2026-11-01T07:00:00Z", "")),
		first[1],
		mustParse(t, vocab.KindMeasurement, measurementJSON("others", mine, "2026-11-01T08:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("new", mine, "2026-11-01T06:00:00Z", "")),
		mustParse(t, vocab.KindAnomalyEvent, fmt.Sprintf(`{"id":"no-client","client_uuid":%q,"subject":"youtube","created_at":"2026-11-01T06:00:00Z"}`, mine)),
	}
	res, err := st.InsertDocumentsWith(ctx, owner, second, store.InsertOptions{KeepOthers: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 1 || res.Updated != 1 || res.Unchanged != 1 || !slices.Equal(res.Taken, []int{2, 4}) {
		t.Errorf("KeepOthers: %+v, want 1 inserted, 1 updated, 1 unchanged, taken [2 4]", res)
	}
	if d, _ := st.Document(ctx, owner, vocab.KindMeasurement, "others"); d.ClientUUID == nil || *d.ClientUUID != other {
		t.Errorf("another client's document was replaced: %+v", show(d))
	}
	if d, _ := st.Document(ctx, owner, vocab.KindAnomalyEvent, "no-client"); d.ClientUUID != nil {
		t.Errorf("a document without a client was replaced: %+v", show(d))
	}
	// Without the option (fleetgraph import) the last copy wins, as before.
	res, err = st.InsertDocuments(ctx, owner, second)
	if err != nil || res.Updated != 2 || len(res.Taken) != 0 {
		t.Errorf("without KeepOthers: %+v, %v; want the 2 taken documents replaced", res, err)
	}
}

func TestInsertDocumentsCreatesMissingClientsForTheOwner(t *testing.T) {
	ctx := context.Background()
	owner := apitest.Get(t).NewOwner(t, "clients").ID
	known, fresh := uuid.NewString(), uuid.NewString()
	if _, err := apitest.Get(t).Store.CreateClient(ctx, owner, store.NewClient{UUID: known, Type: "automator"}); err != nil {
		t.Fatal(err)
	}
	res, err := apitest.Get(t).Store.InsertDocuments(ctx, owner, []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("a", known, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("b", fresh, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("c", fresh, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindAnomalyEvent, `{"id":"r::spike::1","subject":"youtube","created_at":"2026-11-01T00:00:00Z"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClientsCreated != 1 || res.Inserted != 4 {
		t.Fatalf("res = %+v", res)
	}
	c, err := apitest.Get(t).Store.ClientByUUID(ctx, owner, fresh)
	if err != nil || c.Type != "automator" || c.Shared {
		t.Errorf("created client = %+v, %v", c, err)
	}
}

func TestInsertDocumentsRefusesAnotherOwnersClient(t *testing.T) {
	ctx := context.Background()
	a, b := apitest.Get(t).NewOwner(t, "owner-a").ID, apitest.Get(t).NewOwner(t, "owner-b").ID
	aClient, bClient := uuid.NewString(), uuid.NewString()
	if _, err := apitest.Get(t).Store.CreateClient(ctx, a, store.NewClient{UUID: aClient, Type: "automator"}); err != nil {
		t.Fatal(err)
	}
	res, err := apitest.Get(t).Store.InsertDocuments(ctx, b, []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("x1", bClient, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindMeasurement, measurementJSON("x2", aClient, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindClientReport, `{"id":"r1","type":"P1203ClientReport","measurement_id":"x2","client_uuid":"`+aClient+`","created_at":"2026-11-01T00:00:00Z"}`),
		// The same client written in capitals is the same client.
		mustParse(t, vocab.KindMeasurement, measurementJSON("x4", strings.ToUpper(aClient), "2026-11-01T00:00:00Z", "")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Refused) != "[1 2 3]" || res.Inserted != 1 || res.ClientsCreated != 1 || res.Loaded() != 1 {
		t.Fatalf("res = %+v", res)
	}
	if _, err := apitest.Get(t).Store.Document(ctx, b, vocab.KindMeasurement, "x2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused document stored: %v", err)
	}
	// Sharing the client does not make it B's to import into.
	var clientID int64
	_ = apitest.Get(t).Store.Pool().QueryRow(ctx, `SELECT id FROM clients WHERE uuid = $1`, aClient).Scan(&clientID)
	if err := apitest.Get(t).Store.ShareClient(ctx, a, clientID, b); err != nil {
		t.Fatal(err)
	}
	res, err = apitest.Get(t).Store.InsertDocuments(ctx, b, []store.Document{mustParse(t, vocab.KindMeasurement, measurementJSON("x3", aClient, "2026-11-01T00:00:00Z", ""))})
	if err != nil || len(res.Refused) != 1 {
		t.Errorf("shared client: res = %+v, %v", res, err)
	}
	var owner int64
	_ = apitest.Get(t).Store.Pool().QueryRow(ctx, `SELECT data_owner_id FROM clients WHERE uuid = $1`, aClient).Scan(&owner)
	if owner != a {
		t.Errorf("client moved to owner %d", owner)
	}
}

func TestDocumentsAreScopedByOwner(t *testing.T) {
	ctx := context.Background()
	a, b := apitest.Get(t).NewOwner(t, "scope-a").ID, apitest.Get(t).NewOwner(t, "scope-b").ID
	client := uuid.NewString()
	_, err := apitest.Get(t).Store.InsertDocuments(ctx, a, []store.Document{
		mustParse(t, vocab.KindMeasurement, measurementJSON("shared-id", client, "2026-11-01T00:00:00Z", "")),
		mustParse(t, vocab.KindClientReport, `{"id":"r2","type":"DnsClientReport","measurement_id":"shared-id","client_uuid":"`+client+`","created_at":"2026-11-01T00:02:00Z"}`),
		mustParse(t, vocab.KindClientReport, `{"id":"r1","type":"DnsClientReport","measurement_id":"shared-id","client_uuid":"`+client+`","created_at":"2026-11-01T00:01:00Z"}`),
		mustParse(t, vocab.KindEventBundle, `{"id":"e1","type":"VideoEventBundle","measurement_id":"shared-id","client_uuid":"`+client+`","created_at":"2026-11-01T00:01:00Z"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apitest.Get(t).Store.Document(ctx, b, vocab.KindMeasurement, "shared-id"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("owner B reads A's document: err = %v", err)
	}
	if ds, err := apitest.Get(t).Store.DocumentsByMeasurement(ctx, b, vocab.KindClientReport, "shared-id"); err != nil || len(ds) != 0 {
		t.Errorf("owner B lists A's reports: %d, %v", len(ds), err)
	}
	ds, err := apitest.Get(t).Store.DocumentsByMeasurement(ctx, a, vocab.KindClientReport, "shared-id")
	if err != nil || len(ds) != 2 || ds[0].DocID != "r1" || ds[1].DocID != "r2" {
		t.Errorf("owner A's reports: %v, %v", ds, err)
	}
	if _, err := apitest.Get(t).Store.Document(ctx, a, vocab.KindClientReport, "e1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("kind is part of the key: err = %v", err)
	}
	// The same doc_id under B is B's own document.
	other := uuid.NewString()
	if _, err := apitest.Get(t).Store.InsertDocuments(ctx, b, []store.Document{mustParse(t, vocab.KindMeasurement, measurementJSON("shared-id", other, "2026-11-05T00:00:00Z", ""))}); err != nil {
		t.Fatal(err)
	}
	da, _ := apitest.Get(t).Store.Document(ctx, a, vocab.KindMeasurement, "shared-id")
	db, _ := apitest.Get(t).Store.Document(ctx, b, vocab.KindMeasurement, "shared-id")
	if *da.ClientUUID != client || *db.ClientUUID != other {
		t.Errorf("A's %v, B's %v", *da.ClientUUID, *db.ClientUUID)
	}
}

func TestResolveAnomalyEvents(t *testing.T) {
	ctx := context.Background()
	a, b := apitest.Get(t).NewOwner(t, "resolve-a").ID, apitest.Get(t).NewOwner(t, "resolve-b").ID
	ev := func(id, status string) store.Document {
		return mustParse(t, vocab.KindAnomalyEvent, fmt.Sprintf(`{"id":%q,"client_uuid":%q,"subject":"youtube","metric":"total_stalling_time",`+
			`"detection_pass":"spike","severity":"warning","status":%q,"created_at":"2026-11-01T00:00:00Z"}`, id, uuid.NewString(), status))
	}
	if _, err := apitest.Get(t).Store.InsertDocuments(ctx, a, []store.Document{ev("r::spike::1", "new"), ev("r::spike::2", "new"), ev("r::shift::3", "resolved")}); err != nil {
		t.Fatal(err)
	}
	if _, err := apitest.Get(t).Store.InsertDocuments(ctx, b, []store.Document{ev("r::spike::9", "new")}); err != nil {
		t.Fatal(err)
	}
	before, _ := apitest.Get(t).Store.Document(ctx, a, vocab.KindAnomalyEvent, "r::spike::1")

	tests := []struct {
		name  string
		owner int64
		ids   []string
		want  int
	}{
		{"other owner's, unknown and already resolved are ignored", a, []string{"r::spike::9", "nope", "r::shift::3"}, 0},
		{"own new events are resolved", a, []string{"r::spike::1", "r::spike::2", "r::spike::9"}, 2},
		{"resolving again changes nothing", a, []string{"r::spike::1"}, 0},
		{"no ids", a, nil, 0},
	}
	for _, tc := range tests {
		n, err := apitest.Get(t).Store.ResolveAnomalyEvents(ctx, tc.owner, tc.ids)
		if err != nil || n != tc.want {
			t.Errorf("%s: n = %d, %v; want %d", tc.name, n, err, tc.want)
		}
	}
	after, _ := apitest.Get(t).Store.Document(ctx, a, vocab.KindAnomalyEvent, "r::spike::1")
	var doc map[string]any
	_ = json.Unmarshal(after.Doc, &doc)
	ts, _ := doc["resolved_at"].(string)
	if doc["status"] != "resolved" || after.Version <= before.Version || ts == "" {
		t.Errorf("after resolve: %s (version %d, was %d)", after.Doc, after.Version, before.Version)
	}
	if _, err := store.ParseTime(ts); err != nil {
		t.Errorf("resolved_at: %v", err)
	}
	bEv, _ := apitest.Get(t).Store.Document(ctx, b, vocab.KindAnomalyEvent, "r::spike::9")
	if !strings.Contains(string(bEv.Doc), `"status": "new"`) {
		t.Errorf("B's event changed: %s", bEv.Doc)
	}
	if _, err := apitest.Get(t).Store.ResolveAnomalyEvents(ctx, a, []string{"a\x00b"}); !errors.Is(err, store.ErrInvalidText) {
		t.Errorf("NUL id: err = %v", err)
	}
}

func TestDataOwnerBySlug(t *testing.T) {
	ctx := context.Background()
	id := apitest.Get(t).NewOwner(t, "slug").ID
	var slug string
	_ = apitest.Get(t).Store.Pool().QueryRow(ctx, `SELECT slug FROM data_owners WHERE id = $1`, id).Scan(&slug)
	o, err := apitest.Get(t).Store.DataOwnerBySlug(ctx, slug)
	if err != nil || o.ID != id {
		t.Errorf("DataOwnerBySlug(%q) = %+v, %v", slug, o, err)
	}
	if _, err := apitest.Get(t).Store.DataOwnerBySlug(ctx, "no-such-owner"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown slug: err = %v", err)
	}
}
