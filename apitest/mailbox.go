package apitest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/riverqueue/river"

	"github.com/fleetgraph/fleetgraph/jobs"
	"github.com/fleetgraph/fleetgraph/notify"
	"github.com/fleetgraph/fleetgraph/store"
)

// Mailbox is a real SMTP server on 127.0.0.1 (emersion/go-smtp) that keeps
// every message it accepts, for tests of what fleetgraph e-mails. It
// requires AUTH PLAIN with Username and Password, and refuses the first
// FailFirst messages with a temporary error (451) so that tests can see a
// retry.
type Mailbox struct {
	Host     string
	Port     int
	Username string
	Password string

	mu        sync.Mutex
	failFirst int
	mails     []Mail
	arrived   chan struct{} // closed and renewed at every arrival
	srv       *smtp.Server
}

// Mail is one accepted message.
type Mail struct {
	From     string   // envelope sender
	To       []string // envelope recipients
	AuthUser string   // who authenticated
	Header   mail.Header
	Subject  string
	Body     string // decoded text
}

// MailboxOpts shape NewMailbox.
type MailboxOpts struct {
	// FailFirst is how many messages are refused (451) before any is taken.
	FailFirst int
}

// NewMailbox starts a mailbox; it stops when t ends.
func NewMailbox(t testing.TB, opts MailboxOpts) *Mailbox {
	t.Helper()
	m, err := newMailbox(opts)
	if err != nil {
		t.Fatalf("mailbox: %v", err)
	}
	t.Cleanup(m.close)
	return m
}

func newMailbox(opts MailboxOpts) (*Mailbox, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mailbox{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Username: "fleetgraph-" + randomHex(4),
		Password: randomHex(12), failFirst: opts.FailFirst, arrived: make(chan struct{})}
	m.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: m}, nil }))
	m.srv.Domain = "mailbox.test"
	m.srv.AllowInsecureAuth = true // loopback only
	m.srv.ReadTimeout, m.srv.WriteTimeout = 30*time.Second, 30*time.Second
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *Mailbox) close() { _ = m.srv.Close() }

// Mailer answers a mailer that sends to m as fleetgraph's does (AUTH PLAIN,
// no TLS: loopback).
func (m *Mailbox) Mailer(t testing.TB) *notify.Mailer {
	t.Helper()
	mailer, err := m.mailer()
	if err != nil {
		t.Fatal(err)
	}
	return mailer
}

func (m *Mailbox) mailer() (*notify.Mailer, error) {
	return notify.NewMailer(notify.SMTP{Host: m.Host, Port: m.Port, Username: m.Username, Password: m.Password,
		From: "fleetgraph <" + MailSender + ">", TLS: notify.TLSNone, Auth: "plain"})
}

// MailSender is the sender address of the test servers' mail.
const MailSender = "noreply@fleetgraph.test"

// Mailbox answers the package's mailbox, where the outbox of the test
// server's database is sent (a River client working the e-mail jobs,
// beside notification rounds every 50 ms fanning events out to users'
// mail), started on first use
// and kept until the test binary ends.
func (e *Env) Mailbox(t testing.TB) *Mailbox {
	t.Helper()
	e.mailOnce.Do(func() {
		m, err := newMailbox(MailboxOpts{})
		if err != nil {
			e.mailErr = err
			return
		}
		mailer, err := m.mailer()
		if err != nil {
			m.close()
			e.mailErr = err
			return
		}
		w := river.NewWorkers()
		river.AddWorker(w, &notify.MailWorker{Store: e.Store, Mailer: mailer, Log: quietLog(),
			Retry: func(int) time.Duration { return 50 * time.Millisecond }})
		r, err := jobs.Start(context.Background(), jobs.Config{Store: e.Store, Log: quietLog(), Workers: w,
			Queues: map[string]int{store.QueueEmail: 2}, JobTimeout: time.Minute, RescueAfter: 2 * time.Minute})
		if err != nil {
			m.close()
			e.mailErr = err
			return
		}
		// The notification rounds, which fleetgraph serve runs as a
		// periodic job (jobs.Process), run here every 50 ms.
		ctx, cancel := context.WithCancel(context.Background())
		notifierDone := make(chan struct{})
		go func() {
			defer close(notifierDone)
			n := &notify.Notifier{Store: e.Store, Log: quietLog()}
			for ctx.Err() == nil {
				_ = n.Round(ctx)
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		e.mailbox = m
		e.stopMail = func() {
			cancel()
			<-notifierDone
			sctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			_ = r.Stop(sctx)
			m.close()
		}
	})
	if e.mailErr != nil {
		t.Fatalf("mailbox: %v", e.mailErr)
	}
	return e.mailbox
}

// Mails answers the messages accepted so far.
func (m *Mailbox) Mails() []Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Mail(nil), m.mails...)
}

// To answers the messages accepted so far for recipient.
func (m *Mailbox) To(recipient string) []Mail {
	var out []Mail
	for _, ml := range m.Mails() {
		for _, to := range ml.To {
			if strings.EqualFold(to, recipient) {
				out = append(out, ml)
			}
		}
	}
	return out
}

// WaitFor waits until n messages for recipient arrived (failing the test
// after timeout) and answers them.
func (m *Mailbox) WaitFor(t testing.TB, recipient string, n int, timeout time.Duration) []Mail {
	t.Helper()
	deadline := time.After(timeout)
	for {
		m.mu.Lock()
		arrived := m.arrived
		m.mu.Unlock()
		if got := m.To(recipient); len(got) >= n {
			return got
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("mailbox: %d message(s) for %s within %s, want %d; all: %+v", len(m.To(recipient)), recipient, timeout, n, m.Mails())
			return nil
		}
	}
}

type mailSession struct {
	box  *Mailbox
	user string
	from string
	to   []string
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != s.box.Username || password != s.box.Password {
			return errors.New("invalid credentials")
		}
		s.user = username
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	b := s.box
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failFirst > 0 {
		b.failFirst--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	body, err := decodeBody(msg)
	if err != nil {
		return err
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	b.mails = append(b.mails, Mail{From: s.from, To: s.to, AuthUser: s.user, Header: msg.Header, Subject: subject, Body: body})
	close(b.arrived)
	b.arrived = make(chan struct{})
	return nil
}

// decodeBody answers a single-part text message's body, decoded.
func decodeBody(msg *mail.Message) (string, error) {
	r := msg.Body
	switch strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		return "", errors.New("mailbox: base64 bodies are not decoded")
	}
	b, err := io.ReadAll(r)
	return strings.ReplaceAll(string(b), "\r\n", "\n"), err
}

func (s *mailSession) Reset() { s.from, s.to = "", nil }

func (s *mailSession) Logout() error { return nil }
