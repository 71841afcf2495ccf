package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/mail"
	"regexp"
	"strings"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/server"
	"github.com/fleetgraph/fleetgraph/store"
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

	keys, b, err := bootstrapKeys(ctx, st, sealer, owner, email, "bootstrap")
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{
			"data_owner": owner, "data_owner_id": b.DataOwnerID, "user_id": b.UserID,
			"api_key_id": b.KeyID, "api_key": keys.Admin, "export_api_key": keys.Export, "role": "org_admin",
		})
	}
	fmt.Fprintf(out, "data owner: %s\nuser:       %s (id %d, org_admin)\n", owner, email, b.UserID)
	keys.print(out, baseURL(cfg.Addr))
	return nil
}

// issuedKeys are the keys bootstrap and serve --demo hand out: one for the
// admin API and GraphQL, one for the export API.
type issuedKeys struct{ Admin, Export string }

// bootstrapKeys creates the data owner (if missing) with an org_admin user
// of email, and a fresh admin key and export key of that user, both named
// name.
func bootstrapKeys(ctx context.Context, st *store.Store, sealer *auth.Sealer, owner, email, name string) (issuedKeys, store.Bootstrapped, error) {
	var keys issuedKeys
	var rec store.NewAPIKey
	keys.Admin, rec = auth.NewKeyRecord(sealer, auth.KindClientAdmin, 0, &name, nil, nil)
	b, err := st.Bootstrap(ctx, owner, email, rec)
	if err != nil {
		return keys, b, err
	}
	keys.Export, rec = auth.NewKeyRecord(sealer, auth.KindExport, b.UserID, &name, nil, nil)
	if _, err := st.CreateAPIKey(ctx, b.DataOwnerID, rec); err != nil {
		return keys, b, fmt.Errorf("create export key: %w", err)
	}
	return keys, b, nil
}

// print writes the keys and how to use them on the server at base.
func (k issuedKeys) print(out io.Writer, base string) {
	fmt.Fprintf(out, "admin key:  %s\n            (for %s%s and GraphQL/GraphiQL at %s/graphql)\n"+
		"export key: %s\n            (for %s%s)\n\n"+
		"Send a key as the X-API-KEY header, e.g.\n"+
		"  curl -H 'X-API-KEY: %s' %s%s/isps\n"+
		"  curl -H 'X-API-KEY: %s' %s%s/clients\n",
		k.Admin, base, server.AdminBase, base, k.Export, base, server.ExportBase,
		k.Admin, base, server.AdminBase, k.Export, base, server.ExportBase)
}

// baseURL is the address a client on this machine reaches a server
// listening on addr at: a bare port or an unspecified host is localhost.
func baseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
