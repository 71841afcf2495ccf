package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/fleetgraph/fleetgraph"
	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/store"
)

// fixtureClients are C1..C6 of testdata/README.md, as the files name them.
var fixtureClients = []string{
	"0b6f3c1e-7d4a-4c2b-9e51-1a2b3c4d5e01", "1c7a4d2f-8e5b-4d3c-8f62-2b3c4d5e6f02",
	"2d8b5e3a-9f6c-4e4d-9a73-3c4d5e6f7a03", "3e9c6f4b-a07d-4f5e-8b84-4d5e6f7a8b04",
	"4fad7a5c-b18e-4a6f-9c95-5e6f7a8b9c05", "5abe8b6d-c29f-4b7a-8da6-6f7a8b9cad06",
}

// freshFixtureClients are new UUIDs for C1..C6 that sort in that order
// (a client UUID belongs to one data owner, so each loaded copy needs its
// own).
func freshFixtureClients() []string {
	out := make([]string, len(fixtureClients))
	for i := range out {
		out[i] = fmt.Sprintf("%d", i) + uuid.NewString()[1:]
	}
	return out
}

// byClientName maps "C1".."C6" to clients.
func byClientName(clients []string) map[string]string {
	out := map[string]string{}
	for i, c := range clients {
		out[fmt.Sprintf("C%d", i+1)] = c
	}
	return out
}

// loadFixtureSet loads the testdata/ files of kinds into the data owner as
// `fleetgraph import` does (store.ParseDocument, store.InsertDocuments),
// with C1..C6 replaced by clients (created when missing).
func loadFixtureSet(t *testing.T, e *apitest.Env, ownerID int64, clients []string, kinds ...string) {
	t.Helper()
	var pairs []string
	for i, c := range fixtureClients {
		pairs = append(pairs, c, clients[i])
	}
	sub := strings.NewReplacer(pairs...)
	for _, kind := range kinds {
		name := path.Join("testdata", kind+"s.ndjson")
		raw, err := fs.ReadFile(fleetgraph.Fixtures, name)
		if err != nil {
			t.Fatal(err)
		}
		var docs []store.Document
		lines := bufio.NewScanner(strings.NewReader(sub.Replace(string(raw))))
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
		res, err := e.Store.InsertDocuments(context.Background(), ownerID, docs)
		if err != nil || len(res.Refused) > 0 || res.Inserted != len(docs) {
			t.Fatalf("load %s: %+v %v", name, res, err)
		}
	}
}
