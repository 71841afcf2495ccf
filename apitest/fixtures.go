package apitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph"
	"github.com/fleetgraph/fleetgraph/store"
)

// FixtureClients are C1..C6 of testdata/README.md, as the files name them.
var FixtureClients = []string{
	"0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01", "1c7a4d2f-8e5b-4d3c-8f62-2b3c4d5e6f02",
	"2d8b5e3a-9f6c-4e4d-9a73-3c4d5e6f7a03", "3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04",
	"4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05", "5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06",
}

// FreshFixtureClients are new UUIDs for C1..C6 that sort in that order
// (a client UUID belongs to one data owner, so each loaded copy needs its
// own).
func FreshFixtureClients() []string {
	out := make([]string, len(FixtureClients))
	for i := range out {
		out[i] = fmt.Sprintf("%d", i) + uuid.NewString()[1:]
	}
	return out
}

// ByClientName maps "C1".."C6" to clients.
func ByClientName(clients []string) map[string]string {
	out := map[string]string{}
	for i, c := range clients {
		out[fmt.Sprintf("C%d", i+1)] = c
	}
	return out
}

// FixtureDocuments reads testdata/<kind>s.ndjson with C1..C6 replaced by
// clients, parsed as `fleetgraph import` parses it.
func FixtureDocuments(t testing.TB, kind string, clients []string) []store.Document {
	t.Helper()
	name := path.Join("testdata", kind+"s.ndjson")
	raw, err := fs.ReadFile(fleetgraph.Fixtures, name)
	if err != nil {
		t.Fatal(err)
	}
	var docs []store.Document
	lines := bufio.NewScanner(strings.NewReader(clientReplacer(clients).Replace(string(raw))))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		d, err := store.ParseDocument(kind, bytes.Clone(lines.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// LoadFixtureSet loads the testdata/ files of kinds into the data owner as
// `fleetgraph import` does (store.ParseDocument, store.InsertDocuments),
// with C1..C6 replaced by clients (created when missing).
func (e *Env) LoadFixtureSet(t testing.TB, ownerID int64, clients []string, kinds ...string) {
	t.Helper()
	for _, kind := range kinds {
		docs := FixtureDocuments(t, kind, clients)
		res, err := e.Store.InsertDocuments(context.Background(), ownerID, docs)
		if err != nil || len(res.Refused) > 0 || res.Inserted != len(docs) {
			t.Fatalf("load testdata/%ss.ndjson: %+v %v", kind, res, err)
		}
	}
}

// LoadFixtures is LoadFixtureSet with fresh clients; it answers them by
// name ("C1".."C6").
func (e *Env) LoadFixtures(t testing.TB, ownerID int64, kinds ...string) map[string]string {
	t.Helper()
	fresh := FreshFixtureClients()
	e.LoadFixtureSet(t, ownerID, fresh, kinds...)
	return ByClientName(fresh)
}

// FixtureFiles writes the testdata/ files named (measurements.ndjson, ...)
// into a new temporary directory with fresh clients for C1..C6, for tests
// of `fleetgraph import`; it answers the directory and the clients.
func FixtureFiles(t testing.TB, files ...string) (dir string, clients []string) {
	t.Helper()
	dir, clients = t.TempDir(), FreshFixtureClients()
	sub := clientReplacer(clients)
	for _, f := range files {
		raw, err := fs.ReadFile(fleetgraph.Fixtures, path.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(sub.Replace(string(raw))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, clients
}

// clientReplacer replaces C1..C6 by clients.
func clientReplacer(clients []string) *strings.Replacer {
	var pairs []string
	for i, c := range FixtureClients {
		pairs = append(pairs, c, clients[i])
	}
	return strings.NewReplacer(pairs...)
}

// FixtureMeasurement is the id of fixture measurement #n (testdata/README.md).
func FixtureMeasurement(n int) string {
	return fmt.Sprintf("6a1f0c00-2026-4b11-8000-0000000000%02d", n)
}

// FixtureMeasurements are the ids of fixture measurements #n.
func FixtureMeasurements(ns ...int) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, FixtureMeasurement(n))
	}
	return out
}
