package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetgraph/fleetgraph/notify"
)

// smtpConfig is the mail server of serve (FLEETGRAPH_SMTP_*).
type smtpConfig struct {
	Host, Port, Username, Password, From, TLS, Auth string
}

// mailFlags registers the SMTP settings (serve only).
func (c *config) mailFlags(fs *flag.FlagSet) {
	m := &c.SMTP
	fs.StringVar(&m.Host, "smtp-host", envOr("FLEETGRAPH_SMTP_HOST", ""),
		"SMTP server that sends the users' e-mail (env FLEETGRAPH_SMTP_HOST); empty: mail stays queued in the outbox")
	fs.StringVar(&m.Port, "smtp-port", envOr("FLEETGRAPH_SMTP_PORT", "587"), "SMTP port (env FLEETGRAPH_SMTP_PORT)")
	fs.StringVar(&m.Username, "smtp-username", envOr("FLEETGRAPH_SMTP_USERNAME", ""),
		"SMTP AUTH user name (env FLEETGRAPH_SMTP_USERNAME); empty: no authentication")
	fs.Var(secretEnv(&m.Password, "FLEETGRAPH_SMTP_PASSWORD"), "smtp-password", "SMTP AUTH password (env FLEETGRAPH_SMTP_PASSWORD)")
	fs.StringVar(&m.From, "smtp-from", envOr("FLEETGRAPH_SMTP_FROM", ""),
		"sender address of the e-mail, e.g. \"fleetgraph <noreply@example.com>\" (env FLEETGRAPH_SMTP_FROM); required with --smtp-host")
	fs.StringVar(&m.TLS, "smtp-tls", envOr("FLEETGRAPH_SMTP_TLS", notify.TLSStartTLS),
		"starttls (required), tls (implicit, port 465) or none (env FLEETGRAPH_SMTP_TLS)")
	fs.StringVar(&m.Auth, "smtp-auth", envOr("FLEETGRAPH_SMTP_AUTH", "auto"),
		"SMTP AUTH mechanism: auto (the strongest offered), plain, login, cram-md5, scram-sha-256, ... (env FLEETGRAPH_SMTP_AUTH)")
}

// mailer answers the configured mailer, nil when no SMTP host is set.
func (c *config) mailer() (*notify.Mailer, error) {
	m := c.SMTP
	if strings.TrimSpace(m.Host) == "" {
		return nil, nil
	}
	port, err := strconv.Atoi(strings.TrimSpace(m.Port))
	if err != nil {
		return nil, fmt.Errorf("--smtp-port (FLEETGRAPH_SMTP_PORT) %q is not a number", m.Port)
	}
	mailer, err := notify.NewMailer(notify.SMTP{Host: strings.TrimSpace(m.Host), Port: port, Username: m.Username,
		Password: m.Password, From: m.From, TLS: m.TLS, Auth: m.Auth})
	if err != nil {
		return nil, fmt.Errorf("SMTP settings (--smtp-*, FLEETGRAPH_SMTP_*): %w", err)
	}
	return mailer, nil
}
