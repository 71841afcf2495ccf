package fleetgraph

import "embed"

// Fixtures is the testdata/ fixture set (one NDJSON file per document
// kind), embedded so that `serve --demo` can load it into the demo data
// owner.
//
//go:embed testdata/*.ndjson
var Fixtures embed.FS
