package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/mail"
	"regexp"
	"strings"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/resolvers"
)

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,62}$`)

func bootstrap(ctx context.Context, args []string, out io.Writer) error {
	var cfg config
	var owner, email string
	var asJSON bool
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	cfg.storeFlags(fs)
	cfg.secretFlag(fs)
	cfg.addrFlag(fs)
	fs.StringVar(&owner, "data-owner", "", "data owner short name (lower-case slug, used in index names)")
	fs.StringVar(&email, "email", "", "e-mail of the org_admin user")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	owner = strings.TrimSpace(owner)
	if !slugRe.MatchString(owner) {
		return fmt.Errorf("--data-owner must be a lower-case short name (a-z, 0-9 and _, at most 63 characters; no '-', which separates the parts of index names), got %q", owner)
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return fmt.Errorf("--email must be an e-mail address, got %q", email)
	}
	log := newLogger()
	sealer, err := cfg.sealer(log)
	if err != nil {
		return err
	}
	st, closeStore, err := cfg.openStore(ctx, log)
	if err != nil {
		return err
	}
	defer closeStore()

	name := "bootstrap"
	key, rec := resolvers.NewKeyRecord(sealer, auth.KindClientAdmin, 0, &name, nil, nil)
	b, err := st.Bootstrap(ctx, owner, email, rec)
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{
			"data_owner": owner, "data_owner_id": b.DataOwnerID, "user_id": b.UserID,
			"api_key_id": b.KeyID, "api_key": key, "role": "org_admin",
		})
	}
	fmt.Fprintf(out, "data owner: %s\nuser:       %s (id %d, org_admin)\napi key:    %s\n\n"+
		"Use it as the X-API-KEY header, e.g.\n  curl -H 'X-API-KEY: %s' http://localhost:8080/client_admin_api/v1/isps\n",
		owner, email, b.UserID, key, key)
	return nil
}
