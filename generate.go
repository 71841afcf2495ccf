// Package fleetgraph is the module root; it only carries the go:generate line
// that regenerates graph/ from schema/ with the pinned gqlgen tool.
package fleetgraph

//go:generate go tool gqlgen generate --config gqlgen.yml
