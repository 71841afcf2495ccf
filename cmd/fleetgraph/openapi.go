package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fleetgraph/fleetgraph/server"
)

// openapi writes the OpenAPI documents the server serves at
// <base>/openapi.json into a directory, one file per REST API named after
// its base path (client_admin_api_v1.json, export_api_v1.json), for the
// linter and for people without a running server. No database is needed.
func openapi(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("openapi", flag.ContinueOnError)
	out := fs.String("out", ".", "directory to write the documents into (created if missing)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	docs, err := server.OpenAPIDocuments()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	bases := make([]string, 0, len(docs))
	for base := range docs {
		bases = append(bases, base)
	}
	sort.Strings(bases)
	for _, base := range bases {
		name := filepath.Join(*out, strings.ReplaceAll(strings.Trim(base, "/"), "/", "_")+".json")
		if err := os.WriteFile(name, append(docs[base], '\n'), 0o644); err != nil {
			return fmt.Errorf("openapi: %w", err)
		}
		fmt.Fprintf(stdout, "%s  (served at %s%s)\n", name, base, server.OpenAPIPath)
	}
	return nil
}
