package notify_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
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

// A welcome mail queued while the mail server is down survives the sender
// that failed to send it (a process that stops) and is delivered by the
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

	down := &notify.Sender{Store: st, Mailer: mailerFor(t, "127.0.0.1", closedPort(t), "u", "p"), Log: quiet(),
		Retry: func(int) time.Duration { return time.Hour }}
	if n, err := down.SendDue(ctx); err != nil || n != 0 {
		t.Fatalf("with the mail server down: sent %d, err %v; want 0, nil", n, err)
	}
	var attempts int
	var lastError string
	if err := st.Pool().QueryRow(ctx, `SELECT attempts, last_error FROM email_outbox WHERE user_id = $1 AND sent_at IS NULL AND given_up_at IS NULL`,
		u.ID).Scan(&attempts, &lastError); err != nil {
		t.Fatalf("the queued mail is not waiting in the outbox: %v", err)
	}
	if attempts != 1 || !strings.Contains(lastError, "127.0.0.1") {
		t.Fatalf("after one failed attempt: attempts %d, last_error %q", attempts, lastError)
	}
	// The hour of the retry passes.
	if _, err := st.Pool().Exec(ctx, `UPDATE email_outbox SET next_attempt_at = now() WHERE user_id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}

	box := apitest.NewMailbox(t, apitest.MailboxOpts{FailFirst: 1})
	next := &notify.Sender{Store: st, Mailer: box.Mailer(t), Log: quiet(),
		Retry: func(int) time.Duration { return 0 }}
	if n, err := next.SendDue(ctx); err != nil || n != 1 {
		t.Fatalf("after the restart: sent %d, err %v; want 1, nil", n, err)
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
	if err := st.Pool().QueryRow(ctx, `SELECT attempts FROM email_outbox WHERE user_id = $1 AND sent_at IS NOT NULL`, u.ID).Scan(&attempts); err != nil || attempts != 3 {
		t.Fatalf("sent row: attempts %d (want 3: down, 451, sent), err %v", attempts, err)
	}
	if n, err := next.SendDue(ctx); err != nil || n != 0 {
		t.Fatalf("a sent mail went again: sent %d, err %v", n, err)
	}
}

// A row whose template no version of the server knows is given up at once
// instead of being tried ten times.
func TestUnknownTemplateGivenUp(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	if _, err := st.Pool().Exec(ctx, `WITH o AS (INSERT INTO data_owners (slug, name) VALUES ('acme', 'Acme') RETURNING id)
		INSERT INTO email_outbox (data_owner_id, template, recipient) SELECT id, 'no_such_template', 'x@acme.test' FROM o`); err != nil {
		t.Fatal(err)
	}
	box := apitest.NewMailbox(t, apitest.MailboxOpts{})
	s := &notify.Sender{Store: st, Mailer: box.Mailer(t), Log: quiet(),
		Retry: func(int) time.Duration { return 0 }}
	if n, err := s.SendDue(ctx); err != nil || n != 0 {
		t.Fatalf("sent %d, err %v", n, err)
	}
	var attempts int
	if err := st.Pool().QueryRow(ctx, `SELECT attempts FROM email_outbox WHERE given_up_at IS NOT NULL`).Scan(&attempts); err != nil || attempts != 1 {
		t.Fatalf("given-up row: attempts %d, err %v", attempts, err)
	}
}
