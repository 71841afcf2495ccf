package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// A user created with notify_user gets the account_created mail through
// the SMTP server; one created without it gets nothing.
func TestNotifyUserSendsAccountCreatedMail(t *testing.T) {
	e := apitest.Get(t)
	box := e.Mailbox(t)
	o := e.NewOwner(t, "mail")
	welcome := "welcome-" + o.Slug + "@example.com"
	quiet := "quiet-" + o.Slug + "@example.com"
	apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, map[string]any{
		"email": quiet, "username": "quiet_" + o.Slug, "role": "viewer"}), http.StatusCreated, "user")
	apitest.WantEnvelope(t, e.Admin(t, http.MethodPost, "/client_admin_users", o.Key, map[string]any{
		"email": welcome, "username": "grace_" + o.Slug, "role": "editor", "first_name": "Grace", "notify_user": true}),
		http.StatusCreated, "user")

	m := box.WaitFor(t, welcome, 1, 30*time.Second)[0]
	if m.From != apitest.MailSender || m.AuthUser != box.Username {
		t.Errorf("envelope sender %q, authenticated as %q", m.From, m.AuthUser)
	}
	if !strings.Contains(m.Subject, o.Slug) {
		t.Errorf("subject %q does not name the data owner %s", m.Subject, o.Slug)
	}
	for _, want := range []string{"Hello Grace,", "User name: grace_" + o.Slug, "Role: editor"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, m.Body)
		}
	}
	if got := m.Header.Get("Message-Id"); !strings.HasPrefix(got, "<outbox-") {
		t.Errorf("Message-ID %q is not the outbox row's", got)
	}
	// The welcome mail was queued after the quiet user was created: the
	// sender, which takes rows in order, has passed the quiet user by now.
	if got := box.To(quiet); len(got) != 0 {
		t.Errorf("a user created without notify_user got %d mail(s)", len(got))
	}
}
