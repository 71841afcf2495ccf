package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/rest"
	"github.com/fleetgraph/fleetgraph/store"
)

// licenseWorld is a data owner whose clients measured over January to
// March 2026 (and just outside), with two registration keys.
type licenseWorld struct {
	o                  *apitest.Owner
	keyA, keyB, keyC   store.RegistrationKey // C has no clients
	c1, c2, c3, c4     apitest.Client        // c1, c2: key A; c3: key B; c4: none
	firstMeasurementID string
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func newLicenseWorld(t *testing.T, e *apitest.Env, prefix string) *licenseWorld {
	t.Helper()
	o := e.NewOwner(t, prefix)
	w := &licenseWorld{o: o}
	w.keyA = o.NewRegistrationKey(t, store.RegistrationKeyInput{Comment: apitest.Ptr("key A")})
	w.keyB = o.NewRegistrationKey(t, store.RegistrationKeyInput{})
	w.keyC = o.NewRegistrationKey(t, store.RegistrationKeyInput{Comment: apitest.Ptr("=unused")})
	w.c1 = o.NewClient(t, store.NewClient{RegistrationKeyID: &w.keyA.ID})
	w.c2 = o.NewClient(t, store.NewClient{RegistrationKeyID: &w.keyA.ID})
	w.c3 = o.NewClient(t, store.NewClient{RegistrationKeyID: &w.keyB.ID})
	w.c4 = o.NewClient(t, store.NewClient{})
	m := func(c apitest.Client, subject, at string) apitest.MeasurementOpts {
		return apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: subject, CreatedAt: utc(at)}
	}
	ms := []apitest.MeasurementOpts{
		// January: c1 two subjects (the second in the month's last
		// millisecond), c2 one subject twice and one without subject.
		m(w.c1, "youtube", "2026-01-10T08:00:00Z"),
		m(w.c1, "netflix", "2026-01-31T23:59:59.999Z"),
		m(w.c2, "youtube", "2026-01-02T00:00:00Z"),
		m(w.c2, "youtube", "2026-01-03T00:00:00Z"),
		m(w.c2, "", "2026-01-04T00:00:00Z"),
		// February: c1 one subject at the month's first instant, c3 five.
		m(w.c1, "youtube", "2026-02-01T00:00:00Z"),
		m(w.c3, "s1", "2026-02-05T00:00:00Z"), m(w.c3, "s2", "2026-02-06T00:00:00Z"),
		m(w.c3, "s3", "2026-02-07T00:00:00Z"), m(w.c3, "s4", "2026-02-08T00:00:00Z"),
		m(w.c3, "s5", "2026-02-28T23:59:59Z"),
		// March: c4 (no key) six subjects, the last on March 31st.
		m(w.c4, "a", "2026-03-01T00:00:00Z"), m(w.c4, "b", "2026-03-02T00:00:00Z"),
		m(w.c4, "c", "2026-03-03T00:00:00Z"), m(w.c4, "d", "2026-03-04T00:00:00Z"),
		m(w.c4, "e", "2026-03-05T00:00:00Z"), m(w.c4, "f", "2026-03-31T23:59:59.999999Z"),
		// Outside the range of the tests.
		m(w.c1, "outside", "2025-12-31T23:59:59.999Z"),
		m(w.c3, "outside", "2026-04-01T00:00:00Z"),
	}
	w.firstMeasurementID = o.NewMeasurements(t, ms...)[0]
	return w
}

// licenseQ3 is January to March 2026, end_time as a date (the whole day).
const licenseQ3 = "start_time=2026-01-01&end_time=2026-03-31"

// wantLicenseReport is the extended report of licenseWorld over licenseQ3.
func wantLicenseReport(w *licenseWorld) string {
	return fmt.Sprintf(`{
	"monthly_usage": [
		{"month": "2026-01", "license_units": 3, "unique_clients": 2,
		 "breakdown_by_subject_count": {"1": {"clients": 1, "units": 1}, "2": {"clients": 1, "units": 2}}},
		{"month": "2026-02", "license_units": 6, "unique_clients": 2,
		 "breakdown_by_subject_count": {"1": {"clients": 1, "units": 1}, "5": {"clients": 1, "units": 5}}},
		{"month": "2026-03", "license_units": 6, "unique_clients": 1,
		 "breakdown_by_subject_count": {"6": {"clients": 1, "units": 6}}}
	],
	"total_units": 15,
	"usage_by_registration_key": [
		{"registration_key_id": %d, "registration_key": %q, "comment": null, "total_units": 5, "total_unique_clients": 1,
		 "monthly_usage": [{"month": "2026-01", "license_units": 0, "unique_clients": 0},
		                   {"month": "2026-02", "license_units": 5, "unique_clients": 1},
		                   {"month": "2026-03", "license_units": 0, "unique_clients": 0}]},
		{"registration_key_id": %d, "registration_key": %q, "comment": "key A", "total_units": 4, "total_unique_clients": 3,
		 "monthly_usage": [{"month": "2026-01", "license_units": 3, "unique_clients": 2},
		                   {"month": "2026-02", "license_units": 1, "unique_clients": 1},
		                   {"month": "2026-03", "license_units": 0, "unique_clients": 0}]},
		{"registration_key_id": null, "registration_key": null, "comment": null, "total_units": 6, "total_unique_clients": 1,
		 "monthly_usage": [{"month": "2026-01", "license_units": 0, "unique_clients": 0},
		                   {"month": "2026-02", "license_units": 0, "unique_clients": 0},
		                   {"month": "2026-03", "license_units": 6, "unique_clients": 1}]}
	]}`, w.keyB.ID, w.keyB.RegistrationKey, w.keyA.ID, w.keyA.RegistrationKey)
}

// TestLicenseUsageCountsSubjectsPerClientAndMonth: units are distinct
// subjects per client and UTC month, split exactly at month boundaries,
// the same whether the months are read from the log of new pairs, the
// refreshed pairs or (dirty) from the documents.
func TestLicenseUsageCountsSubjectsPerClientAndMonth(t *testing.T) {
	e := apitest.Get(t)
	w := newLicenseWorld(t, e, "license")
	newLicenseWorld(t, e, "license_other") // the same months of another data owner count apart
	want := wantLicenseReport(w)
	path := "/license_usage?extended=true&" + licenseQ3
	check := func(t *testing.T) {
		t.Helper()
		r := e.Admin(t, http.MethodGet, path, w.o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		apitest.SameJSON(t, "extended report", r.Raw, want)
	}
	t.Run("new pairs from the log", check)
	t.Run("refreshed pairs", func(t *testing.T) {
		if _, err := e.Store.RefreshLicensePairs(context.Background()); err != nil {
			t.Fatal(err)
		}
		var logged, dirty int
		_ = e.Store.Pool().QueryRow(context.Background(), `SELECT (SELECT count(*) FROM license_pair_log WHERE data_owner_id = $1),
			(SELECT count(*) FROM license_dirty WHERE data_owner_id = $1)`, w.o.ID).Scan(&logged, &dirty)
		if logged != 0 || dirty != 0 {
			t.Fatalf("after the refresh: %d logged pairs, %d dirty months; want none", logged, dirty)
		}
		check(t)
	})
	t.Run("new pairs of counted clients", func(t *testing.T) {
		// c1 measures a third January subject and one it had; c4 (no key)
		// a first one in January.
		w.o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: w.c1.UUID, Subject: "dazn", CreatedAt: utc("2026-01-20T00:00:00Z")},
			apitest.MeasurementOpts{ClientUUID: w.c1.UUID, Subject: "netflix", CreatedAt: utc("2026-01-21T00:00:00Z")},
			apitest.MeasurementOpts{ClientUUID: w.c4.UUID, Subject: "dazn", CreatedAt: utc("2026-01-22T00:00:00Z")})
		for _, state := range []string{"logged", "merged"} {
			r := e.Admin(t, http.MethodGet, path, w.o.Key, nil)
			jan := apitest.List(t, r.Obj(t)["monthly_usage"])[0].(map[string]any)
			if apitest.Int(t, jan["license_units"]) != 5 || apitest.Int(t, jan["unique_clients"]) != 3 {
				t.Errorf("%s: January = %v, want 5 units (c1 3, c2 1, c4 1) of 3 clients", state, jan)
			}
			if _, err := e.Store.RefreshLicensePairs(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		// The per-client counts agree with the pairs.
		var wrong int
		_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM license_clients lc FULL JOIN (
			SELECT data_owner_id, month, client_uuid, count(*) FILTER (WHERE subject <> '') AS n FROM license_pairs GROUP BY 1, 2, 3) p
			USING (data_owner_id, month, client_uuid) WHERE lc.subjects IS DISTINCT FROM p.n`).Scan(&wrong)
		if wrong != 0 {
			t.Errorf("%d per-client counts differ from the pairs", wrong)
		}
		// Back to the world of wantLicenseReport.
		e.SQL(t, `DELETE FROM documents WHERE data_owner_id = $1 AND kind = 'measurement' AND created_at BETWEEN '2026-01-20' AND '2026-01-23'`, w.o.ID)
		check(t)
	})
	t.Run("dirty months from the documents", func(t *testing.T) {
		// Replacing a measurement (an import of the same id with another
		// document) marks its month dirty.
		w.o.NewMeasurements(t, apitest.MeasurementOpts{ID: w.firstMeasurementID, ClientUUID: w.c1.UUID,
			Subject: "youtube", Type: "WebMeasurement", CreatedAt: utc("2026-01-10T08:00:00Z")})
		var dirty int
		_ = e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM license_dirty WHERE data_owner_id = $1`, w.o.ID).Scan(&dirty)
		if dirty == 0 {
			t.Fatal("replacing a measurement marked no month dirty")
		}
		check(t)
	})
	t.Run("a measurement moved to another month", func(t *testing.T) {
		w.o.NewMeasurements(t, apitest.MeasurementOpts{ID: w.firstMeasurementID, ClientUUID: w.c1.UUID,
			Subject: "youtube", CreatedAt: utc("2026-04-10T08:00:00Z")})
		for range 2 { // read dirty, then refreshed
			r := e.Admin(t, http.MethodGet, path, w.o.Key, nil)
			months := apitest.List(t, r.Obj(t)["monthly_usage"])
			jan := months[0].(map[string]any)
			if apitest.Int(t, jan["license_units"]) != 2 { // c1 netflix, c2 youtube
				t.Errorf("January after moving c1's youtube measurement to April: %v, want 2 units", jan)
			}
			if _, err := e.Store.RefreshLicensePairs(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestLicenseUsageRangesAndReports: the simple report, ranges cutting
// months, time formats, the registration key filter and deleted keys.
func TestLicenseUsageRangesAndReports(t *testing.T) {
	e := apitest.Get(t)
	w := newLicenseWorld(t, e, "license_ranges")
	get := func(t *testing.T, query string) map[string]any {
		t.Helper()
		r := e.Admin(t, http.MethodGet, "/license_usage?"+query, w.o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		return r.Obj(t)
	}
	units := func(t *testing.T, rep map[string]any) []int64 {
		t.Helper()
		var out []int64
		for _, m := range apitest.List(t, rep["monthly_usage"]) {
			out = append(out, apitest.Int(t, m.(map[string]any)["license_units"]))
		}
		return out
	}

	t.Run("simple report: month and unique clients only", func(t *testing.T) {
		r := e.Admin(t, http.MethodGet, "/license_usage?"+licenseQ3, w.o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		apitest.SameJSON(t, "simple report", r.Raw, `{"monthly_usage": [
			{"month": "2026-01", "unique_clients": 2}, {"month": "2026-02", "unique_clients": 2},
			{"month": "2026-03", "unique_clients": 1}]}`)
		r = e.Admin(t, http.MethodGet, "/license_usage?extended=false&"+licenseQ3, w.o.Key, nil)
		apitest.SameJSON(t, "extended=false", r.Raw, `{"monthly_usage": [
			{"month": "2026-01", "unique_clients": 2}, {"month": "2026-02", "unique_clients": 2},
			{"month": "2026-03", "unique_clients": 1}]}`)
	})

	t.Run("the same range in other time formats", func(t *testing.T) {
		start, end := utc("2026-01-01T00:00:00Z"), utc("2026-03-31T23:59:59.999999Z")
		for _, q := range []string{
			"start_time=2026-01-01T00:00:00Z&end_time=2026-03-31T23:59:59.999999Z",
			"start_time=2026-01-01T01:00:00%2B01:00&end_time=2026-04-01T01:59:59.999999%2B02:00",
			fmt.Sprintf("start_time=%d&end_time=%d", start.Unix(), end.Unix()+1), // epoch seconds; end_time inclusive: April 1st 00:00 is in
			fmt.Sprintf("start_time=%d&end_time=%d", start.UnixMilli(), end.Add(-time.Millisecond).UnixMilli()),
			"start_time=20260101&end_time=20260331",
		} {
			got := units(t, get(t, "extended=true&"+q))
			want := []int64{3, 6, 6}
			if strings.Contains(q, fmt.Sprint(end.Unix()+1)) {
				want = []int64{3, 6, 6, 1} // April's first instant is on or before end_time
			}
			if strings.Contains(q, fmt.Sprint(end.Add(-time.Millisecond).UnixMilli())) {
				want = []int64{3, 6, 5} // c4's last subject came after end_time
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: units %v, want %v", q, got, want)
			}
		}
	})

	t.Run("a range cutting months counts what lies inside", func(t *testing.T) {
		// January 31st noon to February 5th: c1 netflix (Jan), c1 youtube and c3 s1 (Feb).
		rep := get(t, "extended=true&start_time=2026-01-31T12:00:00Z&end_time=2026-02-05")
		if got := units(t, rep); !reflect.DeepEqual(got, []int64{1, 2}) {
			t.Errorf("units %v, want [1 2]", got)
		}
		if n := apitest.Int(t, rep["total_units"]); n != 3 {
			t.Errorf("total_units %d, want 3", n)
		}
	})

	t.Run("every month of the range is present", func(t *testing.T) {
		rep := get(t, "extended=true&start_time=2025-11-15&end_time=2026-06-01")
		want := []string{"2025-11", "2025-12", "2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06"}
		if got := apitest.Field(t, rep["monthly_usage"], "month"); !reflect.DeepEqual(got, want) {
			t.Errorf("months %v, want %v", got, want)
		}
		for _, k := range apitest.List(t, rep["usage_by_registration_key"]) {
			if got := apitest.Field(t, k.(map[string]any)["monthly_usage"], "month"); !reflect.DeepEqual(got, want) {
				t.Errorf("key %v months %v, want %v", k.(map[string]any)["registration_key_id"], got, want)
			}
		}
	})

	t.Run("default range: the last 12 months", func(t *testing.T) {
		o := e.NewOwner(t, "license_now")
		c := o.NewClient(t, store.NewClient{})
		o.NewMeasurements(t, apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "now"},
			apitest.MeasurementOpts{ClientUUID: c.UUID, Subject: "a year ago", CreatedAt: time.Now().AddDate(-1, 0, 0)})
		r := e.Admin(t, http.MethodGet, "/license_usage?extended=true", o.Key, nil)
		apitest.WantStatus(t, r, http.StatusOK)
		rep := r.Obj(t)
		months := apitest.Field(t, rep["monthly_usage"], "month")
		now := time.Now().UTC()
		if len(months) != 12 || months[11] != now.Format("2006-01") {
			t.Fatalf("months %v, want 12 ending with %s", months, now.Format("2006-01"))
		}
		if n := apitest.Int(t, rep["total_units"]); n != 1 {
			t.Errorf("total_units %d, want the 1 of this month's measurement", n)
		}
	})

	t.Run("registration key filter", func(t *testing.T) {
		rep := get(t, fmt.Sprintf("extended=true&registration_key_id=%d&%s", w.keyA.ID, licenseQ3))
		if got := units(t, rep); !reflect.DeepEqual(got, []int64{3, 1, 0}) {
			t.Errorf("units of key A %v, want [3 1 0]", got)
		}
		keys := apitest.List(t, rep["usage_by_registration_key"])
		if len(keys) != 1 || apitest.Int(t, keys[0].(map[string]any)["registration_key_id"]) != w.keyA.ID {
			t.Errorf("usage_by_registration_key = %v, want key A alone", keys)
		}
		// A key without clients is listed with zeros.
		rep = get(t, fmt.Sprintf("extended=true&registration_key_id=%d&%s", w.keyC.ID, licenseQ3))
		keys = apitest.List(t, rep["usage_by_registration_key"])
		if len(keys) != 1 || apitest.Int(t, keys[0].(map[string]any)["total_units"]) != 0 ||
			keys[0].(map[string]any)["comment"] != "=unused" || apitest.Int(t, rep["total_units"]) != 0 {
			t.Errorf("report of the unused key: %v", rep)
		}
	})

	t.Run("clients of a deleted key count without a key", func(t *testing.T) {
		if err := e.Store.DeleteRegistrationKey(context.Background(), w.o.ID, w.keyB.ID); err != nil {
			t.Fatal(err)
		}
		rep := get(t, "extended=true&"+licenseQ3)
		keys := apitest.List(t, rep["usage_by_registration_key"])
		if len(keys) != 2 {
			t.Fatalf("usage_by_registration_key = %v, want key A and no key", keys)
		}
		last := keys[1].(map[string]any)
		if last["registration_key_id"] != nil || apitest.Int(t, last["total_units"]) != 11 {
			t.Errorf("entry without a key = %v, want 11 units (c3's 5 and c4's 6), listed last", last)
		}
		if apitest.Int(t, keys[0].(map[string]any)["total_units"]) != 4 {
			t.Errorf("key A = %v", keys[0])
		}
	})
}

// TestLicenseUsageRefusesBadParameters: the spec's 400 and 404, and a clear
// 400 for every parameter that cannot be read.
func TestLicenseUsageRefusesBadParameters(t *testing.T) {
	e := apitest.Get(t)
	w := newLicenseWorld(t, e, "license_bad")
	other := e.NewOwner(t, "license_bad_other")
	otherKey := other.NewRegistrationKey(t, store.RegistrationKeyInput{})
	for _, path := range []string{"/license_usage", "/license_usage/export"} {
		extended := "&extended=true" // the export takes no extended parameter
		if path == "/license_usage/export" {
			extended = ""
		}
		for _, c := range []struct{ query, mention string }{
			{"start_time=yesterday", "start_time must be"},
			{"end_time=2026-13-01", "end_time must be"},
			{"start_time=2026-03-01&end_time=2026-02-01", "start_time must not be after end_time"},
			{"start_time=2000-01-01&end_time=2026-01-01", "at most 120"},
			{"registration_key_id=abc&extended=true", "registration_key_id must be an integer"},
			{"unknown=1", "unknown query parameter unknown"},
			{"start_time=2026-01-01&start_time=2026-02-01", "more than once"},
		} {
			q := c.query
			if path == "/license_usage/export" {
				q = strings.ReplaceAll(q, "&extended=true", "")
			}
			apitest.Want400(t, e.Admin(t, http.MethodGet, path+"?"+q, w.o.Key, nil), c.mention)
		}
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, fmt.Sprintf("%s?registration_key_id=%d%s", path, otherKey.ID, extended), w.o.Key, nil),
			"another owner's key")
		apitest.WantNotFound(t, e.Admin(t, http.MethodGet, path+"?registration_key_id=999999999"+extended, w.o.Key, nil),
			"unknown key")
	}
	// registration_key_id needs extended=true (spec), checked before the key is looked up.
	for _, q := range []string{
		fmt.Sprintf("registration_key_id=%d", w.keyA.ID),
		fmt.Sprintf("registration_key_id=%d&extended=false", w.keyA.ID),
		fmt.Sprintf("registration_key_id=%d", otherKey.ID),
	} {
		apitest.Want400(t, e.Admin(t, http.MethodGet, "/license_usage?"+q, w.o.Key, nil), "registration_key_id needs extended=true")
	}
	apitest.Want400(t, e.Admin(t, http.MethodGet, "/license_usage?extended=maybe", w.o.Key, nil), "extended must be true or false")
	apitest.Want400(t, e.Admin(t, http.MethodGet, "/license_usage/export?extended=true", w.o.Key, nil), "unknown query parameter extended")
}

// TestLicenseUsageExportIsCSV: one row per registration key and month, in
// the report's order, the same numbers as the JSON report.
func TestLicenseUsageExportIsCSV(t *testing.T) {
	e := apitest.Get(t)
	w := newLicenseWorld(t, e, "license_csv")
	r := e.Admin(t, http.MethodGet, "/license_usage/export?"+licenseQ3, w.o.Key, nil)
	apitest.WantStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != rest.CSVContentType {
		t.Errorf("Content-Type %q, want %q", ct, rest.CSVContentType)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") {
		t.Errorf("Content-Disposition %q", cd)
	}
	records, err := csv.NewReader(strings.NewReader(string(r.Raw))).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, r.Raw)
	}
	a, b := strconv.FormatInt(w.keyA.ID, 10), strconv.FormatInt(w.keyB.ID, 10)
	want := [][]string{
		{"month", "registration_key_id", "registration_key", "comment", "license_units", "unique_clients"},
		{"2026-01", b, w.keyB.RegistrationKey, "", "0", "0"},
		{"2026-02", b, w.keyB.RegistrationKey, "", "5", "1"},
		{"2026-03", b, w.keyB.RegistrationKey, "", "0", "0"},
		{"2026-01", a, w.keyA.RegistrationKey, "key A", "3", "2"},
		{"2026-02", a, w.keyA.RegistrationKey, "key A", "1", "1"},
		{"2026-03", a, w.keyA.RegistrationKey, "key A", "0", "0"},
		{"2026-01", "", "", "", "0", "0"},
		{"2026-02", "", "", "", "0", "0"},
		{"2026-03", "", "", "", "6", "1"},
	}
	if !reflect.DeepEqual(records, want) {
		t.Errorf("CSV:\n%s\nwant %v", r.Raw, want)
	}

	// A text cell that a spreadsheet would run as a formula is defused.
	r = e.Admin(t, http.MethodGet, fmt.Sprintf("/license_usage/export?registration_key_id=%d&%s", w.keyC.ID, licenseQ3), w.o.Key, nil)
	records, _ = csv.NewReader(strings.NewReader(string(r.Raw))).ReadAll()
	if len(records) != 4 || records[1][3] != "'=unused" || records[1][4] != "0" {
		t.Errorf("export of the unused key: %v", records)
	}
}

// TestLicenseUsageGraphQL: the same report through GraphQL; another data
// owner's key is NOT_FOUND.
func TestLicenseUsageGraphQL(t *testing.T) {
	e := apitest.Get(t)
	w := newLicenseWorld(t, e, "license_gql")
	const q = `query($s: String, $e: String, $k: Int) { licenseUsage(startTime: $s, endTime: $e, registrationKeyId: $k) {
		totalUnits monthlyUsage { month licenseUnits uniqueClients breakdownBySubjectCount }
		usageByRegistrationKey { registrationKeyId totalUnits totalUniqueClients monthlyUsage { month licenseUnits } } } }`
	d := e.GraphQLData(t, w.o.Key, q, map[string]any{"s": "2026-01-01", "e": "2026-03-31"})
	rep := d["licenseUsage"].(map[string]any)
	if apitest.Int(t, rep["totalUnits"]) != 15 {
		t.Errorf("totalUnits = %v, want 15", rep["totalUnits"])
	}
	jan, _ := json.Marshal(apitest.List(t, rep["monthlyUsage"])[0])
	apitest.SameJSON(t, "January", jan, `{"month": "2026-01", "licenseUnits": 3, "uniqueClients": 2,
		"breakdownBySubjectCount": {"1": {"clients": 1, "units": 1}, "2": {"clients": 1, "units": 2}}}`)
	keys := apitest.List(t, rep["usageByRegistrationKey"])
	if len(keys) != 3 || apitest.Int(t, keys[0].(map[string]any)["registrationKeyId"]) != w.keyB.ID {
		t.Errorf("usageByRegistrationKey = %v", keys)
	}

	other := e.NewOwner(t, "license_gql_other")
	otherKey := other.NewRegistrationKey(t, store.RegistrationKeyInput{})
	g := e.GraphQL(t, w.o.Key, q, map[string]any{"k": otherKey.ID})
	if g.Code() != "NOT_FOUND" {
		t.Errorf("another owner's key: code %q, want NOT_FOUND: %s", g.Code(), g.Raw)
	}
	g = e.GraphQL(t, w.o.Key, q, map[string]any{"s": "last week"})
	if g.Code() != "BAD_REQUEST" || !strings.Contains(g.Errors[0].Message, "start_time") {
		t.Errorf("bad startTime: %s", g.Raw)
	}
}
