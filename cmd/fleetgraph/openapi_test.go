package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
	"github.com/fleetgraph/fleetgraph/clientapi"
	"github.com/fleetgraph/fleetgraph/server"
)

// fleetgraph openapi writes the documents the server serves, one file per
// API, without a database.
func TestOpenAPIWritesTheServedDocuments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docs")
	var out bytes.Buffer
	if err := openapi([]string{"--out", dir}, &out); err != nil {
		t.Fatalf("openapi: %v", err)
	}
	e := apitest.Get(t)
	for file, base := range map[string]string{"client_admin_api_v1.json": server.AdminBase, "export_api_v1.json": server.ExportBase,
		"client_api_v1.json": clientapi.Base} {
		written, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s: %v (printed %q)", file, err, out.String())
		}
		if !strings.Contains(out.String(), base+server.OpenAPIPath) {
			t.Errorf("the output does not say where %s is served: %q", file, out.String())
		}
		r := e.Do(t, http.MethodGet, base+server.OpenAPIPath, "", nil)
		if r.Status != http.StatusOK || !bytes.Equal(bytes.TrimSpace(written), r.Raw) {
			t.Fatalf("%s differs from GET %s (status %d)", file, base+server.OpenAPIPath, r.Status)
		}
		var doc map[string]any
		if err := json.Unmarshal(written, &doc); err != nil || doc["openapi"] != "3.1.0" {
			t.Fatalf("%s: %v, openapi %v", file, err, doc["openapi"])
		}
	}
}
