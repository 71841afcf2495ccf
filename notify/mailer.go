// Package notify e-mails users: the mailer (SMTP through wneessen/go-mail),
// the River worker that sends the durable outbox (email_outbox) at least once,
// the templates of every mail, and the fan-out of domain events to the
// users whose notification_config asks for them, immediately or in digests.
package notify

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTP is the mail server configuration (FLEETGRAPH_SMTP_*).
type SMTP struct {
	Host     string
	Port     int
	Username string
	Password string
	// From is the sender address, optionally with a name
	// ("fleetgraph <noreply@example.com>").
	From string
	// TLS is starttls (required), tls (implicit, e.g. port 465) or none.
	TLS string
	// Auth is the SMTP AUTH mechanism when Username is set: auto (the
	// strongest the server offers), plain, login, cram-md5, scram-sha-256...
	Auth string
}

// TLS modes of SMTP.TLS.
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
	TLSNone     = "none"
)

// sendTimeout bounds one SMTP conversation.
const sendTimeout = 30 * time.Second

// Mailer sends messages through one SMTP server.
type Mailer struct {
	cfg  SMTP
	from string
	opts []gomail.Option
}

// NewMailer checks cfg and answers a mailer for it.
func NewMailer(cfg SMTP) (*Mailer, error) {
	if cfg.Host == "" {
		return nil, errors.New("SMTP host is empty")
	}
	if cfg.Port <= 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("SMTP port %d is not a port", cfg.Port)
	}
	if _, err := mail.ParseAddress(cfg.From); err != nil {
		return nil, fmt.Errorf("SMTP sender %q is not an e-mail address: %w", cfg.From, err)
	}
	opts := []gomail.Option{gomail.WithPort(cfg.Port), gomail.WithTimeout(sendTimeout)}
	switch strings.ToLower(cfg.TLS) {
	case TLSStartTLS, "":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		return nil, fmt.Errorf("SMTP TLS mode %q: want starttls, tls or none", cfg.TLS)
	}
	if cfg.Username != "" {
		var mech gomail.SMTPAuthType
		auth := cfg.Auth
		if auth == "" {
			auth = "auto"
		}
		if err := mech.UnmarshalString(auth); err != nil {
			return nil, fmt.Errorf("SMTP auth %q: %w", cfg.Auth, err)
		}
		opts = append(opts, gomail.WithSMTPAuth(mech), gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	return &Mailer{cfg: cfg, from: cfg.From, opts: opts}, nil
}

// Addr is host:port of the server, for logs.
func (m *Mailer) Addr() string { return fmt.Sprintf("%s:%d", m.cfg.Host, m.cfg.Port) }

// Message is one plain-text mail to one recipient.
type Message struct {
	To      string
	Subject string
	Body    string
	// MessageID is the Message-ID without angle brackets; the same on every
	// retry of one outbox row, so that a receiver can drop a duplicate.
	MessageID string
}

// Send delivers msg over one SMTP conversation.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	out := gomail.NewMsg()
	if err := out.From(m.from); err != nil {
		return fmt.Errorf("sender: %w", err)
	}
	if err := out.To(msg.To); err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	out.Subject(msg.Subject)
	out.SetDate()
	if msg.MessageID != "" {
		out.SetMessageIDWithValue(msg.MessageID)
	} else {
		out.SetMessageID()
	}
	out.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated") // RFC 3834: no auto-replies
	out.SetBodyString(gomail.TypeTextPlain, msg.Body)
	c, err := gomail.NewClient(m.cfg.Host, m.opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, out); err != nil {
		return fmt.Errorf("send through %s: %w", m.Addr(), err)
	}
	return nil
}
