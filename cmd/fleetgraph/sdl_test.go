package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetgraph/fleetgraph/apitest"
)

// fleetgraph sdl writes the subgraph schema the server answers on
// _service, without a database.
func TestSDLWritesTheServedSchema(t *testing.T) {
	var stdout bytes.Buffer
	if err := sdl(nil, &stdout); err != nil {
		t.Fatalf("sdl: %v", err)
	}
	file := filepath.Join(t.TempDir(), "fleetgraph.graphql")
	if err := sdl([]string{"--out", file}, &bytes.Buffer{}); err != nil {
		t.Fatalf("sdl --out: %v", err)
	}
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	e := apitest.Get(t)
	o := e.NewOwner(t, "sdl")
	served := e.GraphQLData(t, o.Key, `{ _service { sdl } }`, nil)["_service"].(map[string]any)["sdl"].(string)
	if stdout.String() != served || string(written) != served || !bytes.Contains(written, []byte(`@key(fields: "uuid")`)) {
		t.Errorf("sdl: stdout %d bytes, file %d bytes, served %d bytes; want the same, with the keys", stdout.Len(), len(written), len(served))
	}
}
