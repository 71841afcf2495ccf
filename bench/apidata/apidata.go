// Package apidata is the API bench's data set and the GraphQL documents it
// sends fleetgraph, shared by bench/api.sh's programs (apibench, the
// hand-written handler) and the server's Go benchmarks, so that all of
// them measure the same requests over the same rows.
package apidata

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The client fields the bench asks fleetgraph for: groups, key and current
// contract with its ISP's name.
const ClientFragment = `fragment C on Client { id uuid type label extraLabel tags createdAt lastSeenAt
  registrationKey { id registrationKey numRegistrationsLeft validFrom }
  clientGroups { id name }
  currentIspContract { id name uploadSpeed downloadSpeed monthlyPrice validFrom ispName } }`

// The bench's GraphQL documents: one client by id (variable id), and all
// clients of the key's data owner.
const (
	OneClient  = `query One($id: ID!) { client(id: $id) { ...C } } ` + ClientFragment
	AllClients = `query List { clients { ...C } } ` + ClientFragment
)

//go:embed seed.sql
var seedSQL string

// Seed gives the data owner with slug n clients as bench/api.sh does
// (seed.sql, which psql runs there), on conn: seed.sql's function lives
// in the session's temporary schema.
func Seed(ctx context.Context, conn *pgx.Conn, slug string, n int) error {
	fn, _, ok := strings.Cut(seedSQL, "\nSELECT pg_temp.seed(")
	if !ok {
		return fmt.Errorf("seed.sql: no call of pg_temp.seed")
	}
	if _, err := conn.Exec(ctx, fn); err != nil {
		return fmt.Errorf("seed.sql: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_temp.seed($1, $2)`, slug, n); err != nil {
		return fmt.Errorf("seed %s: %w", slug, err)
	}
	_, err := conn.Exec(ctx, `DROP FUNCTION pg_temp.seed(text, int)`)
	return err
}
