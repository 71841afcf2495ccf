package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// runImport runs "fleetgraph import" against the test database.
func runImport(t *testing.T, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	e := apitest.Get(t)
	var out, errOut bytes.Buffer
	args = append([]string{"--database-url", e.DatabaseURL, "--data-dir", t.TempDir()}, args...)
	err = importDocs(context.Background(), args, stdin, &out, &errOut)
	return out.String(), errOut.String(), err
}

var summaryRe = regexp.MustCompile(`loaded (\d+) \w+ documents into \S+ \((\d+) new, (\d+) updated, (\d+) unchanged\), skipped (\d+) bad lines, created (\d+) clients`)

// summaryOf reads the summary line: loaded, new, updated, unchanged, bad, clients.
func summaryOf(t *testing.T, stdout string) string {
	t.Helper()
	m := summaryRe.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no summary in %q", stdout)
	}
	return fmt.Sprintf("loaded=%s new=%s updated=%s unchanged=%s bad=%s clients=%s", m[1], m[2], m[3], m[4], m[5], m[6])
}

func countDocs(t *testing.T, ownerID int64, kind string) int {
	t.Helper()
	var n int
	err := apitest.Get(t).Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM documents WHERE data_owner_id = $1 AND kind = $2`, ownerID, kind).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The counts below are those of testdata/README.md.
func TestImportLoadsEveryTestdataFile(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-all")
	files := []struct {
		file, kind, summary string
	}{
		{"measurements.ndjson", "measurement", "loaded=30 new=30 updated=0 unchanged=0 bad=0 clients=6"},
		{"client_reports.ndjson", "client_report", "loaded=16 new=16 updated=0 unchanged=0 bad=0 clients=0"},
		{"event_bundles.ndjson", "event_bundles", "loaded=12 new=12 updated=0 unchanged=0 bad=0 clients=0"},
		{"network_requests.ndjson", "network_request", "loaded=9 new=9 updated=0 unchanged=0 bad=0 clients=0"},
		{"user_feedbacks.ndjson", "user_feedback", "loaded=4 new=4 updated=0 unchanged=0 bad=0 clients=0"},
		{"anomaly_events.ndjson", "anomaly_event", "loaded=5 new=5 updated=0 unchanged=0 bad=0 clients=0"},
	}
	dir, cs := apitest.FixtureFiles(t, "measurements.ndjson", "client_reports.ndjson", "event_bundles.ndjson",
		"network_requests.ndjson", "user_feedbacks.ndjson", "anomaly_events.ndjson")
	for _, f := range files {
		out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", f.kind, filepath.Join(dir, f.file))
		if err != nil || errOut != "" {
			t.Fatalf("%s: err = %v, stderr = %q", f.file, err, errOut)
		}
		if got := summaryOf(t, out); got != f.summary {
			t.Errorf("%s: %s, want %s", f.file, got, f.summary)
		}
	}
	for kind, want := range map[string]int{"measurement": 30, "client_report": 16, "event_bundle": 12,
		"network_request": 9, "user_feedback": 4, "anomaly_event": 5} {
		if got := countDocs(t, o.ID, kind); got != want {
			t.Errorf("%s: %d documents, want %d", kind, got, want)
		}
	}
	clients, err := e.Store.Clients(context.Background(), o.ID)
	if err != nil || len(clients) != 6 {
		t.Errorf("clients: %d, %v; want 6", len(clients), err)
	}

	ctx := context.Background()
	const m1, m8 = "6a1f0c00-2026-4b11-8000-000000000001", "6a1f0c00-2026-4b11-8000-000000000008"
	m, err := e.Store.Document(ctx, o.ID, vocab.KindMeasurement, m1)
	if err != nil || *m.Type != "VideoMeasurement" || *m.Subject != "youtube" || *m.ClientUUID != cs[0] {
		t.Errorf("measurement 1: %+v, %v", m, err)
	}
	for _, c := range []struct {
		kind, measurement string
		want              int
	}{
		{vocab.KindClientReport, m1, 1}, {vocab.KindEventBundle, m1, 1}, {vocab.KindNetworkRequest, m8, 3},
		{vocab.KindClientReport, m8, 1}, {vocab.KindNetworkRequest, m1, 0},
	} {
		ds, err := e.Store.DocumentsByMeasurement(ctx, o.ID, c.kind, c.measurement)
		if err != nil || len(ds) != c.want {
			t.Errorf("%s of %s: %d, %v; want %d", c.kind, c.measurement, len(ds), err, c.want)
		}
	}
	fb, err := e.Store.Document(ctx, o.ID, vocab.KindUserFeedback, "7001")
	if err != nil || *fb.ClientUUID != cs[2] {
		t.Errorf("feedback 7001 (client from client.uuid): %+v, %v", fb, err)
	}
	ids := []string{"video-stalling::spike::1793687194", "speedtest-download::shift::1793626437", "web-plt::spike::1794319053",
		"ping-loss::data_quality::1794032912", "meet-jitter::shift::1793971505"}
	if n, err := e.Store.ResolveAnomalyEvents(ctx, o.ID, ids); err != nil || n != 3 {
		t.Errorf("resolve all five anomaly events: %d, %v; want the 3 new ones", n, err)
	}

	// Importing the same file again changes nothing and succeeds.
	out, _, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", filepath.Join(dir, "measurements.ndjson"))
	if err != nil || summaryOf(t, out) != "loaded=30 new=0 updated=0 unchanged=30 bad=0 clients=0" {
		t.Errorf("re-import: %v, %s", err, out)
	}
	// Another data owner cannot import documents of these clients.
	out, errOut, err := runImport(t, nil, "--data-owner", e.NewOwner(t, "import-thief").Slug, "--kind", "measurement",
		filepath.Join(dir, "measurements.ndjson"))
	if err == nil || !strings.Contains(err.Error(), "nothing loaded") ||
		strings.Count(errOut, "client belongs to another data owner") != 2 ||
		!strings.HasSuffix(errOut, "\n30 lines: client belongs to another data owner: lines 1–30\n") {
		t.Errorf("foreign import: %v, %s, stderr %q", err, out, errOut)
	}
}

// A file as people save it: with a byte order mark, as a JSON array, pretty
// printed. The mark is read past; the other two are told how to convert.
func TestImportTakesABOMAndExplainsArraysAndPrettyPrinting(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-shapes")
	doc := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"type":"WebMeasurement","client_uuid":"7f3c2a10-5b1e-4c2d-9a8e-2f6b1d0c9e47","created_at":"2026-11-02T08:00:00Z"}`, id)
	}
	out, errOut, err := runImport(t, strings.NewReader("\ufeff"+doc("bom-1")+"\n"+doc("bom-2")+"\n"),
		"--data-owner", o.Slug, "--kind", "measurement", "-")
	if err != nil || errOut != "" || summaryOf(t, out) != "loaded=2 new=2 updated=0 unchanged=0 bad=0 clients=1" {
		t.Errorf("a file with a BOM: %v, %s, stderr %q", err, out, errOut)
	}
	for name, c := range map[string]struct{ in, hint string }{
		"array":        {"[" + doc("a-1") + ",\n" + doc("a-2") + "]\n", "the input is a JSON array: import takes one JSON object per line (NDJSON); convert the file with: jq -c '.[]' FILE"},
		"pretty":       {"{\n  \"id\": \"p-1\",\n  \"type\": \"WebMeasurement\"\n}\n", "the input looks pretty-printed (one document over several lines): import takes one JSON object per line (NDJSON); convert the file with: jq -c . FILE"},
		"pretty array": {"[\n  {\n    \"id\": \"p-1\"\n  }\n]\n", "the input is a JSON array"},
	} {
		_, errOut, err := runImport(t, strings.NewReader(c.in), "--data-owner", o.Slug, "--kind", "measurement", "-")
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if err == nil || !strings.HasPrefix(lines[len(lines)-1], c.hint) || strings.Count(errOut, c.hint) != 1 {
			t.Errorf("%s: %v, stderr:\n%s\nwant its last line to be the hint %q", name, err, errOut, c.hint)
		}
	}
}

func TestImportReportsBadLinesByNumberAndLoadsTheRest(t *testing.T) {
	e := apitest.Get(t)
	o, other := e.NewOwner(t, "import-bad"), e.NewOwner(t, "import-other")
	foreign := "9f1e2d3c-4b5a-4968-8776-655443322110"
	if _, err := e.Store.CreateClient(context.Background(), other.ID, store.NewClient{UUID: foreign, Type: "automator"}); err != nil {
		t.Fatal(err)
	}
	const c = "7a0c1b2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	m := func(id, extra string) string {
		return `{"id":"` + id + `","type":"SpeedtestMeasurement","client_uuid":"` + c + `","created_at":"2026-11-02T10:00:00Z","study":{"subject":"ookla"}` + extra + `}`
	}
	lines := []string{
		m("ok-1", ""), // 1
		`{"id":"no-time","type":"SpeedtestMeasurement","client_uuid":"` + c + `"}`, // 2
		`{"id":"broken",`, // 3
		"",                // 4: blank, ignored
		m("ok-2", ""),     // 5
		`{"id":"bad-client","client_uuid":"not-a-uuid","created_at":"2026-11-02T10:00:00Z"}`,                                 // 6
		m("overflow", `,"statistic_values":{"download":1e1000000}`),                                                          // 7: refused by PostgreSQL
		`{"id":"foreign","type":"SpeedtestMeasurement","client_uuid":"` + foreign + `","created_at":"2026-11-02T10:00:00Z"}`, // 8
		m("ok-3", "") + "\r",     // 9: CRLF
		`[{"id":"in-an-array"}]`, // 10
		`{"type":"SpeedtestMeasurement","client_uuid":"` + c + `","created_at":"2026-11-02T10:00:00Z"}`,                  // 11
		`{"id":"no-type","client_uuid":"` + c + `","created_at":"2026-11-02T10:00:00Z"}`,                                 // 12
		`{"id":"bad-type","type":"Speedtest Measurement","client_uuid":"` + c + `","created_at":"2026-11-02T10:00:00Z"}`, // 13
		`{"id":"bad-time","type":"SpeedtestMeasurement","client_uuid":"` + c + `","created_at":"02.11.2026"}`,            // 14
		`   `,         // 15: blank, ignored
		m("ok-4", ""), // 16: no final newline
	}
	path := filepath.Join(t.TempDir(), "mixed.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runImport(t, nil, path, "--data-owner", o.Slug, "--kind", "measurement", "--batch", "3")
	// Some lines bad, the rest loaded: exit status 2, so a script can tell.
	if code := exitCode(err); err == nil || code != exitPartial || !strings.Contains(err.Error(), "10 bad lines skipped") {
		t.Fatalf("import: %v (exit status %d), want exit status %d (stderr %q)", err, code, exitPartial, errOut)
	}
	want := []string{
		"line 10: not a JSON object",
		"line 11: id is missing",
		"line 12: type is missing",
		`line 13: type "Speedtest Measurement" is not a document type`,
		`line 14: created_at "02.11.2026" is not an ISO 8601 time`,
		"line 2: created_at is missing",
		"line 3: invalid JSON",
		`line 6: client_uuid "not-a-uuid" is not a UUID`,
		"line 7: refused by the database: value overflows numeric format",
		"line 8: client belongs to another data owner",
	}
	// Parse errors and database refusals come from different goroutines:
	// each bad line is reported once, in no fixed order.
	got := strings.Split(strings.TrimSpace(errOut), "\n")
	sort.Strings(got)
	if len(got) != len(want) {
		t.Fatalf("stderr:\n%s\nwant %d lines", errOut, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("stderr line %q, want prefix %q", got[i], want[i])
		}
	}
	if s := summaryOf(t, out); s != "loaded=4 new=4 updated=0 unchanged=0 bad=10 clients=1" {
		t.Errorf("summary %s", s)
	}
	for _, id := range []string{"ok-1", "ok-2", "ok-3", "ok-4"} {
		if _, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if n := countDocs(t, other.ID, "measurement"); n != 0 {
		t.Errorf("other owner got %d documents", n)
	}
	if n := countDocs(t, o.ID, "measurement"); n != 4 {
		t.Errorf("owner has %d documents, want 4", n)
	}
}

func TestImportReadsStdin(t *testing.T) {
	o := apitest.Get(t).NewOwner(t, "import-stdin")
	dir, _ := apitest.FixtureFiles(t, "anomaly_events.ndjson")
	f, err := os.Open(filepath.Join(dir, "anomaly_events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, errOut, err := runImport(t, f, "--data-owner", o.Slug, "--kind", "anomaly_events", "-")
	if err != nil || errOut != "" {
		t.Fatalf("err = %v, stderr %q", err, errOut)
	}
	if s := summaryOf(t, out); s != "loaded=5 new=5 updated=0 unchanged=0 bad=0 clients=4" {
		t.Errorf("summary %s", s)
	}
}

func TestImportFailures(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-fail")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	allBad := write("bad.ndjson", "{\"id\":1}\nnot json\n")
	empty := write("empty.ndjson", "\n\n")
	good := "../../testdata/measurements.ndjson" // never loaded: every case fails first
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown data owner", []string{"--data-owner", "no-such-owner", "--kind", "measurement", good}, `data owner "no-such-owner" not found`},
		{"unknown kind", []string{"--data-owner", o.Slug, "--kind", "measurementz", good}, "--kind must be one of"},
		{"missing data owner", []string{"--kind", "measurement", good}, "--data-owner is required"},
		{"no file", []string{"--data-owner", o.Slug, "--kind", "measurement"}, "exactly one FILE"},
		{"two files", []string{"--data-owner", o.Slug, "--kind", "measurement", good, good}, "exactly one FILE"},
		{"missing file", []string{"--data-owner", o.Slug, "--kind", "measurement", filepath.Join(dir, "nope.ndjson")}, "cannot read the input: open " + filepath.Join(dir, "nope.ndjson") + ": no such file"},
		{"a directory", []string{"--data-owner", o.Slug, "--kind", "measurement", dir}, "cannot read the input: " + dir + " is a directory"},
		{"empty kind", []string{"--data-owner", o.Slug, "--kind", "", good}, `--kind must be one of measurement, client_report, event_bundle, network_request, user_feedback, anomaly_event, system_status, got ""`},
		{"max line 0", []string{"--data-owner", o.Slug, "--kind", "measurement", "--max-line-bytes", "0", good}, "--max-line-bytes must be at least 1"},
		{"every line bad", []string{"--data-owner", o.Slug, "--kind", "measurement", allBad}, "nothing loaded: all 2 documents were bad"},
		{"no documents", []string{"--data-owner", o.Slug, "--kind", "measurement", empty}, "holds no documents"},
		{"unknown flag", []string{"--data-owner", o.Slug, "--kind", "measurement", "--nope", good}, "usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runImport(t, strings.NewReader(""), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if c := exitCode(err); c != 1 {
				t.Errorf("exit status %d, want 1", c)
			}
		})
	}
	if n := countDocs(t, o.ID, "measurement"); n != 0 {
		t.Errorf("%d documents loaded by failed imports", n)
	}
}

func TestImportIsACommand(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-cmd")
	stdout := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	t.Cleanup(func() { os.Stdout = stdout; devnull.Close() })
	dir, _ := apitest.FixtureFiles(t, "user_feedbacks.ndjson")
	err := run(context.Background(), []string{"import", "--database-url", e.DatabaseURL, "--data-dir", t.TempDir(),
		"--data-owner", o.Slug, "--kind", "user_feedback", filepath.Join(dir, "user_feedbacks.ndjson")})
	if err != nil {
		t.Fatal(err)
	}
	if n := countDocs(t, o.ID, "user_feedback"); n != 4 {
		t.Errorf("%d feedbacks, want 4", n)
	}
}

func TestImportKeepsTheLastCopyOfARepeatedDocument(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-repeat")
	c := uuid.NewString()
	var lines []string
	for i := range 9 {
		lines = append(lines, fmt.Sprintf(`{"id":"m-%d","type":"WebMeasurement","client_uuid":%q,"created_at":"2026-11-0%dT08:00:00Z","copy":%d}`,
			i%3, c, i+1, i))
	}
	path := filepath.Join(t.TempDir(), "repeat.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", "--batch", "1", "--workers", "3", path)
	if err != nil || errOut != "" {
		t.Fatalf("err = %v, stderr %q", err, errOut)
	}
	if s := summaryOf(t, out); s != "loaded=9 new=3 updated=6 unchanged=0 bad=0 clients=1" {
		t.Errorf("summary %s", s)
	}
	for i := range 3 {
		d, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, fmt.Sprintf("m-%d", i))
		if err != nil || !strings.Contains(string(d.Doc), fmt.Sprintf(`"copy": %d`, i+6)) {
			t.Errorf("m-%d = %s, %v; want copy %d", i, d.Doc, err, i+6)
		}
	}
}

func TestImportRollsUpTheDaysItLoaded(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-rollup")
	dir, _ := apitest.FixtureFiles(t, "measurements.ndjson")
	out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", filepath.Join(dir, "measurements.ndjson"))
	if err != nil || errOut != "" {
		t.Fatalf("err = %v, stderr = %q", err, errOut)
	}
	if !regexp.MustCompile(`(?m)^rolled up \d+ days in \S+$`).MatchString(out) {
		t.Errorf("no rollup line in %q", out)
	}
	var dirty, docs int
	err = e.Store.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM rollup_dirty WHERE data_owner_id = $1),
		(SELECT coalesce(sum(docs), 0) FROM rollup_days WHERE data_owner_id = $1 AND kind = 'measurement')`, o.ID).Scan(&dirty, &docs)
	if err != nil {
		t.Fatal(err)
	}
	if dirty != 0 || docs != 30 {
		t.Errorf("after import: %d dirty marks, %d documents rolled up; want 0 and 30", dirty, docs)
	}
}

// A line over --max-line-bytes is one bad line: it is read past (not held,
// not fatal as bufio.Scanner's "token too long" would be) and the lines
// after it load. The default limit is 1 MiB; under a higher one a 10 MB
// document loads.
func TestImportSkipsOverLongLines(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-long")
	c := uuid.NewString()
	m := func(id, pad string) string {
		return `{"id":"` + id + `","type":"WebMeasurement","client_uuid":"` + c + `","created_at":"2026-11-04T10:00:00Z","pad":"` + pad + `"}`
	}
	big := m("big", strings.Repeat("x", 10<<20)) // 10 MB and a bit: valid JSON
	lines := []string{
		m("short-1", ""),                        // 1
		big,                                     // 2
		m("short-2", ""),                        // 3
		"{" + strings.Repeat(" ", 3<<20),        // 4: 3 MB of broken JSON
		m("short-3", strings.Repeat("y", 1000)), // 5
		big,                                     // 6: the last line, no newline
	}
	path := filepath.Join(t.TempDir(), "long.ndjson")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", path) // the default limit
	if exitCode(err) != exitPartial {
		t.Fatalf("err = %v, want exit status %d; stderr %q", err, exitPartial, errOut)
	}
	want := fmt.Sprintf("line 2: longer than 1048576 bytes (the --max-line-bytes limit): %d bytes\n"+
		"line 4: longer than 1048576 bytes (the --max-line-bytes limit): %d bytes\n"+
		"line 6: longer than 1048576 bytes (the --max-line-bytes limit): %d bytes\n", len(big)+1, 1+3<<20+1, len(big))
	if errOut != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
	if s := summaryOf(t, out); s != "loaded=3 new=3 updated=0 unchanged=0 bad=3 clients=1" {
		t.Errorf("summary %s", s)
	}
	if n := countDocs(t, o.ID, "measurement"); n != 3 {
		t.Errorf("%d documents, want the 3 short ones", n)
	}

	// A 16 MiB limit takes the 10 MB document; the broken line stays bad.
	out, errOut, err = runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", "--max-line-bytes", "16777216", path)
	if exitCode(err) != exitPartial || !strings.HasPrefix(errOut, "line 4: invalid JSON") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("16 MiB limit: err = %v, stderr %q", err, errOut)
	}
	if s := summaryOf(t, out); s != "loaded=5 new=1 updated=0 unchanged=4 bad=1 clients=0" {
		t.Errorf("16 MiB limit: summary %s (big is repeated: its two copies count once new, once unchanged)", s)
	}
	d, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, "big")
	if err != nil || len(d.Doc) < 10<<20 {
		t.Errorf("big document: %d bytes, %v", len(d.Doc), err)
	}
}

// Importing a file again replaces the documents it names: a changed one is
// updated (new version), the others unchanged, nothing is duplicated.
func TestImportAgainUpdatesInPlace(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-again")
	dir, _ := apitest.FixtureFiles(t, "measurements.ndjson")
	path := filepath.Join(dir, "measurements.ndjson")
	if out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", path); err != nil ||
		summaryOf(t, out) != "loaded=30 new=30 updated=0 unchanged=0 bad=0 clients=6" {
		t.Fatalf("first import: %v, %s, stderr %q", err, out, errOut)
	}
	const m5 = "6a1f0c00-2026-4b11-8000-000000000005"
	before, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, m5)
	if err != nil {
		t.Fatal(err)
	}
	// Measurement #5 (C5, netflix) gets another created_at and a new field.
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	changed := 0
	for i, l := range lines {
		if strings.Contains(l, `"id":"`+m5+`"`) || strings.Contains(l, `"id": "`+m5+`"`) {
			var doc map[string]any
			if err := json.Unmarshal([]byte(l), &doc); err != nil {
				t.Fatal(err)
			}
			doc["created_at"], doc["note"] = "2026-11-05T07:00:00Z", "re-measured"
			b, _ := json.Marshal(doc)
			lines[i] = string(b)
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("measurement #5 found %d times in the fixture", changed)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "measurement", path)
	if err != nil || errOut != "" {
		t.Fatalf("second import: %v, stderr %q", err, errOut)
	}
	if s := summaryOf(t, out); s != "loaded=30 new=0 updated=1 unchanged=29 bad=0 clients=0" {
		t.Errorf("second import: %s", s)
	}
	if n := countDocs(t, o.ID, "measurement"); n != 30 {
		t.Errorf("%d measurements after importing twice, want 30", n)
	}
	after, err := e.Store.Document(context.Background(), o.ID, vocab.KindMeasurement, m5)
	if err != nil || after.ID != before.ID || after.Version <= before.Version ||
		!after.CreatedAt.Equal(time.Date(2026, 11, 5, 7, 0, 0, 0, time.UTC)) || !strings.Contains(string(after.Doc), "re-measured") {
		t.Errorf("measurement #5 after the second import: row %d version %d created %s %s (before: row %d version %d), %v",
			after.ID, after.Version, after.CreatedAt, after.Doc, before.ID, before.Version, err)
	}
}

// User feedbacks name their client as client.uuid; importing them alone
// creates those clients (C1, C3, C4, C5: testdata/README.md) for the owner.
func TestImportCreatesTheClientsOfUserFeedbacks(t *testing.T) {
	e := apitest.Get(t)
	o := e.NewOwner(t, "import-fb-clients")
	dir, cs := apitest.FixtureFiles(t, "user_feedbacks.ndjson")
	out, errOut, err := runImport(t, nil, "--data-owner", o.Slug, "--kind", "user_feedback", filepath.Join(dir, "user_feedbacks.ndjson"))
	if err != nil || errOut != "" {
		t.Fatalf("err = %v, stderr %q", err, errOut)
	}
	if s := summaryOf(t, out); s != "loaded=4 new=4 updated=0 unchanged=0 bad=0 clients=4" {
		t.Errorf("summary %s", s)
	}
	clients, err := e.Store.Clients(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range clients {
		got = append(got, c.UUID+" "+c.Type)
	}
	sort.Strings(got)
	want := []string{cs[0] + " automator", cs[2] + " automator", cs[3] + " automator", cs[4] + " automator"}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("clients %v, want %v", got, want)
	}
}

func TestImportExitStatus(t *testing.T) {
	if c := exitCode(errUsage); c != 1 {
		t.Errorf("usage error: exit status %d, want 1", c)
	}
	if c := exitCode(fmt.Errorf("import stopped: %w", context.Canceled)); c != 1 {
		t.Errorf("fatal error: exit status %d, want 1", c)
	}
	if c := exitCode(fmt.Errorf("wrapped: %w", &exitError{code: exitPartial, msg: "bad lines"})); c != exitPartial {
		t.Errorf("bad lines: exit status %d, want %d", c, exitPartial)
	}
}
