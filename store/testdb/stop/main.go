// Command stop stops the private PostgreSQL the tests started (when no
// server answered on 127.0.0.1:5432), so that a test run leaves nothing
// running; `make test` runs it after the tests.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fleetgraph/fleetgraph/store/testdb"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := testdb.StopPrivate(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stop the tests' private PostgreSQL:", err)
		os.Exit(1)
	}
}
