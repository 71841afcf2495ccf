package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// newNotifiedUser creates a user through the admin API with a notification
// config and answers its id and e-mail.
func newNotifiedUser(t *testing.T, e *apitest.Env, o *apitest.Owner, name string, config map[string]any) (int64, string) {
	t.Helper()
	email := name + "-" + o.Slug + "@example.com"
	u := apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, map[string]any{
		"email": email, "username": name + "_" + o.Slug, "role": "viewer", "notification_config": config}),
		http.StatusCreated, "user").(map[string]any)
	return apitest.Int(t, u["id"]), email
}

// emit writes events of the data owner as the store's writers do.
func emit(t *testing.T, e *apitest.Env, ownerID int64, evs ...store.NewEvent) {
	t.Helper()
	ctx := context.Background()
	tx, err := e.Store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := e.Store.Emit(ctx, tx, ownerID, evs...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitFannedOut waits until no event of the data owners waits for the
// notifier.
func waitFannedOut(t *testing.T, e *apitest.Env, owners ...int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM notification_queue q
			JOIN events ev ON ev.seq = q.event_seq WHERE ev.data_owner_id = ANY($1)`, owners).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still wait for the notifier", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func outboxCount(t *testing.T, e *apitest.Env, userID int64) int {
	t.Helper()
	var n int
	if err := e.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM email_outbox WHERE user_id = $1`, userID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Users get the e-mail their notification_config asks for: anomaly events
// at once or in a digest, client offline, client degraded and study
// failures; muted clients and a data owner's detection switched off tell
// nobody.
func TestUserNotificationsByConfig(t *testing.T) {
	e := apitest.Get(t)
	box := e.Mailbox(t)
	o := e.NewOwner(t, "notif")
	quiet := e.NewOwner(t, "notif-off")
	label := "lab-probe"
	c := o.NewClient(t, store.NewClient{Label: &label})
	muted := o.NewClient(t, store.NewClient{})
	qc := quiet.NewClient(t, store.NewClient{})
	e.GraphQLData(t, o.Key, `mutation($id: ID!) { clientUpdate(id: $id, input: {anomaliesMuted: true,
		offlineNotificationsMuted: true, systemHealthNotificationsMuted: true}) { id } }`, map[string]any{"id": muted.UUID})
	apitest.WantStatus(t, e.Admin(t, http.MethodPut, "/data_owner/settings", quiet.Key, map[string]any{
		"client_offline_detection_enabled": false, "client_degraded_detection_enabled": false,
		"study_failure_detection_enabled": false}), http.StatusOK)

	_, immediate := newNotifiedUser(t, e, o, "immediate", map[string]any{"anomaly_events": true,
		"anomaly_events_frequency": "immediate", "client_offline": false})
	digestID, digest := newNotifiedUser(t, e, o, "digest", map[string]any{"anomaly_events": true,
		"anomaly_events_frequency": "digest", "anomaly_events_digest_hours": 1, "client_offline": false})
	_, fleet := newNotifiedUser(t, e, o, "fleet", map[string]any{"anomaly_events": false, "client_offline": true,
		"client_degraded": true, "study_execution_failures": true})
	quietID, _ := newNotifiedUser(t, e, quiet, "quiet", map[string]any{"client_offline": true, "client_degraded": true,
		"study_execution_failures": true})

	a1, a2, a3 := "rule-1::spike::1740787200", "rule-2::shift::1740787200", "rule-3::spike::1740787500"
	o.InsertDocuments(t, "anomaly_event", anomEvent(a1, c.UUID, "new"), anomEvent(a2, muted.UUID, "new"))
	o.InsertDocuments(t, "anomaly_event", anomEvent(a3, c.UUID, "new"))
	critical, video := "critical", "VideoMeasurement"
	offline := func(id int64) store.NewEvent {
		return store.NewEvent{Type: store.EventClientOffline, ClientID: &id,
			Data: map[string]any{"last_seen_at": "2026-11-24T08:14:03Z", "offline_threshold_minutes": 60}}
	}
	degraded := func(id int64) store.NewEvent {
		return store.NewEvent{Type: store.EventHealthCritical, ClientID: &id, Severity: &critical, HealthMetrics: []string{"cpu"},
			Data: map[string]any{"from_state": "healthy", "to_state": "critical",
				"reasons": []map[string]any{{"metric": "cpu", "percent": 97.5, "severity": "critical"}}}}
	}
	failed := func(id int64) store.NewEvent {
		return store.NewEvent{Type: store.EventStudyExecutionFailed, ClientID: &id, MeasurementType: &video,
			Data: map[string]any{"measurement": map[string]any{"id": "m-1", "type": video, "error": "player stalled"}}}
	}
	emit(t, e, o.ID, offline(c.ID), offline(muted.ID), degraded(c.ID), degraded(muted.ID), failed(c.ID))
	emit(t, e, quiet.ID, offline(qc.ID), degraded(qc.ID), failed(qc.ID))

	// Immediate anomaly mails: one per event, none for the muted client.
	// (each mail is a job of its own: they may arrive in any order)
	got := box.WaitFor(t, immediate, 2, 30*time.Second)
	for _, id := range []string{a1, a3} {
		i := slices.IndexFunc(got, func(m apitest.Mail) bool { return strings.Contains(m.Body, "Anomaly: "+id) })
		if i < 0 || !strings.Contains(got[i].Body, "Client: lab-probe") ||
			!strings.HasPrefix(got[i].Subject, "[warning] Anomaly: youtube bitrate") {
			t.Errorf("no anomaly mail of %s on lab-probe; got %v", id, mailSubjects(got))
		}
	}
	// Offline, degraded and study failure: once each, for the unmuted client.
	// Each mail is a job of its own (package jobs): they may arrive in any order.
	got = box.WaitFor(t, fleet, 3, 30*time.Second)
	wantSubjects := []string{"Client offline: lab-probe", "Client critical: lab-probe", "Study failed: VideoMeasurement on lab-probe"}
	bySubject := make([]int, len(wantSubjects))
	for i, want := range wantSubjects {
		bySubject[i] = slices.IndexFunc(got, func(m apitest.Mail) bool { return strings.HasPrefix(m.Subject, want) })
		if bySubject[i] < 0 {
			t.Errorf("no fleet mail with a subject %q...; got %v", want, mailSubjects(got))
		}
	}
	if bySubject[1] >= 0 && bySubject[2] >= 0 && (!strings.Contains(got[bySubject[1]].Body, "- cpu: 97.5 % (critical)") ||
		!strings.Contains(got[bySubject[2]].Body, "Error: player stalled")) {
		t.Errorf("degraded and failure mails:\n%s\n%s", got[bySubject[1]].Body, got[bySubject[2]].Body)
	}
	waitFannedOut(t, e, o.ID, quiet.ID)
	if n := outboxCount(t, e, quietID); n != 0 {
		t.Errorf("a data owner with detection off: %d mail(s) queued for its user", n)
	}
	if n := outboxCount(t, e, digestID); n != 0 {
		t.Errorf("a digest user got %d mail(s) before its digest", n)
	}

	// The digest's hour passes: one mail with both events, none for the
	// muted client.
	e.SQL(t, `UPDATE users SET last_digest_at = now() - interval '61 minutes' WHERE id = $1`, digestID)
	d := box.WaitFor(t, digest, 1, 30*time.Second)[0]
	if d.Subject != "2 anomaly event(s) for "+o.Slug || !strings.Contains(d.Body, a1) || !strings.Contains(d.Body, a3) ||
		strings.Contains(d.Body, a2) {
		t.Errorf("digest %q:\n%s", d.Subject, d.Body)
	}
	// The next anomaly waits for the next digest.
	o.InsertDocuments(t, "anomaly_event", anomEvent("rule-4::spike::1740787900", c.UUID, "new"))
	waitFannedOut(t, e, o.ID)
	if n := outboxCount(t, e, digestID); n != 1 {
		t.Errorf("after the digest: %d mails for the digest user, want 1", n)
	}
}

// mailSubjects are the subjects of mails, for a failure's message.
func mailSubjects(mails []apitest.Mail) []string {
	out := make([]string, len(mails))
	for i, m := range mails {
		out[i] = m.Subject
	}
	return out
}
