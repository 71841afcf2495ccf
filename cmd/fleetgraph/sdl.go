package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fleetgraph/fleetgraph/server"
)

// sdl writes fleetgraph's Apollo Federation subgraph schema (what
// _service { sdl } answers) to a file or stdout, for composing a
// supergraph (rover, @apollo/composition) without a running server. No
// database is needed.
func sdl(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sdl", flag.ContinueOnError)
	out := fs.String("out", "", "file to write the schema to (default: stdout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	schema, err := server.SubgraphSDL()
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = io.WriteString(stdout, schema)
		return err
	}
	if err := os.WriteFile(*out, []byte(schema), 0o644); err != nil {
		return fmt.Errorf("sdl: %w", err)
	}
	return nil
}
