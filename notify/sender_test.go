package notify_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/notify"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/store/testdb"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// closedPort answers a loopback port where nothing listens.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}

// freshStore is a new migrated database of the test's own: the outbox
// holds only what the test queues.
func freshStore(t *testing.T) *store.Store {
	t.Helper()
	db, st, err := testdb.Create(context.Background(), "fleetgraph_notify", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); db.Drop() })
	return st
}

func mailerFor(t *testing.T, host string, port int, user, password string) *notify.Mailer {
	t.Helper()
	m, err := notify.NewMailer(notify.SMTP{Host: host, Port: port, Username: user, Password: password,
		From: "fleetgraph <noreply@fleetgraph.test>", TLS: notify.TLSNone, Auth: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startMail works the e-mail jobs of st through mailer until it returns
// stop (a process that starts and stops), with River's pause after a
// failed attempt set to retry.
func startMail(t *testing.T, st *store.Store, mailer *notify.Mailer, retry time.Duration) (stop func()) {
	t.Helper()
	w := river.NewWorkers()
	river.AddWorker(w, &notify.MailWorker{Store: st, Mailer: mailer, Log: quiet(), Retry: func(int) time.Duration { return retry }})
	r, err := jobs.Start(context.Background(), jobs.Config{Store: st, Log: quiet(), Workers: w,
		Queues: map[string]int{store.QueueEmail: 1}, JobTimeout: time.Minute, RescueAfter: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = r.Stop(context.Background())
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitFor waits until cond holds, failing with what after 20 s (River's
// clients start and fetch at their pace on a busy machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// outboxRow is what the outbox and River know of a user's mail.
type outboxRow struct {
	attempts  int
	lastError string
	sent      bool
	jobState  string
}

func readOutbox(t *testing.T, st *store.Store, userID int64) outboxRow {
	t.Helper()
	var r outboxRow
	err := st.Pool().QueryRow(context.Background(), `SELECT o.attempts, coalesce(o.last_error, ''), o.sent_at IS NOT NULL,
			coalesce((SELECT j.state::text FROM river_job j WHERE j.kind = 'email' AND (j.args->>'outbox_id')::bigint = o.id), '')
		FROM email_outbox o WHERE o.user_id = $1`, userID).Scan(&r.attempts, &r.lastError, &r.sent, &r.jobState)
	if err != nil {
		t.Fatalf("read the outbox: %v", err)
	}
	return r
}

// A welcome mail queued while the mail server is down survives the
// process that failed to send it (one that stops) and is delivered by the
// next one, once, after a refused attempt (451) is retried.
func TestQueuedMailSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	var owner int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO data_owners (slug, name) VALUES ('acme', 'Acme Networks') RETURNING id`).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	first := "Ada"
	u, err := st.CreateUser(ctx, owner, store.NewUser{Email: "ada@acme.test", Username: "ada", Role: "editor",
		FirstName: &first, NotificationConfig: []byte(store.DefaultNotificationConfig), NotifyUser: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := readOutbox(t, st, u.ID); r.jobState != "available" {
		t.Fatalf("the welcome mail's job: %q, want available (queued with the user)", r.jobState)
	}

	stopDown := startMail(t, st, mailerFor(t, "127.0.0.1", closedPort(t), "u", "p"), time.Hour)
	var r outboxRow
	waitFor(t, "the attempt with the mail server down is not recorded", func() bool {
		r = readOutbox(t, st, u.ID)
		return r.attempts == 1 && r.jobState == "retryable"
	})
	stopDown()
	if r.sent || !strings.Contains(r.lastError, "127.0.0.1") {
		t.Fatalf("after one failed attempt: %+v", r)
	}
	// The hour of the retry passes.
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET scheduled_at = now() WHERE kind = 'email'`); err != nil {
		t.Fatal(err)
	}

	box := apitest.NewMailbox(t, apitest.MailboxOpts{FailFirst: 1})
	startMail(t, st, box.Mailer(t), 0)
	waitFor(t, "the mail is not sent after the restart", func() bool {
		r = readOutbox(t, st, u.ID)
		return r.sent && r.jobState == "completed"
	})
	if r.attempts != 3 {
		t.Fatalf("sent row: attempts %d (want 3: down, 451, sent)", r.attempts)
	}
	mails := box.To("ada@acme.test")
	if len(mails) != 1 {
		t.Fatalf("mails to ada@acme.test: %d, want 1", len(mails))
	}
	m := mails[0]
	if m.AuthUser != box.Username || m.From != "noreply@fleetgraph.test" {
		t.Errorf("authenticated as %q, envelope sender %q", m.AuthUser, m.From)
	}
	if m.Subject != "Your fleetgraph account for Acme Networks" {
		t.Errorf("subject %q", m.Subject)
	}
	for _, want := range []string{"Hello Ada,", "User name: ada", "Role: editor"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, m.Body)
		}
	}
}

// A row queued without a job (by a server before the outbox ran on River)
// is queued when the e-mail jobs start; one whose template no version of
// the server knows is given up at once instead of being tried ten times.
func TestUnknownTemplateGivenUp(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	if _, err := st.Pool().Exec(ctx, `WITH o AS (INSERT INTO data_owners (slug, name) VALUES ('acme', 'Acme') RETURNING id)
		INSERT INTO email_outbox (data_owner_id, template, recipient) SELECT id, 'no_such_template', 'x@acme.test' FROM o`); err != nil {
		t.Fatal(err)
	}
	box := apitest.NewMailbox(t, apitest.MailboxOpts{})
	startMail(t, st, box.Mailer(t), 0)
	var attempts int
	var state string
	waitFor(t, "the row is not given up", func() bool {
		err := st.Pool().QueryRow(ctx, `SELECT o.attempts, j.state::text FROM email_outbox o
			JOIN river_job j ON j.kind = 'email' AND (j.args->>'outbox_id')::bigint = o.id
			WHERE o.given_up_at IS NOT NULL`).Scan(&attempts, &state)
		return err == nil && state == "cancelled"
	})
	if attempts != 1 || len(box.To("x@acme.test")) != 0 {
		t.Fatalf("given-up row: attempts %d, mails %d", attempts, len(box.To("x@acme.test")))
	}
}
