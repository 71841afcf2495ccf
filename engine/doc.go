// Package engine is the graph engine under the resolvers: the one
// declaration of every nested field (the edge table, edgetable.go) and the
// Attacher, the executor extension that loads those fields level by level
// below each root field in one round trip per level (edges.go), reads a
// root lookup's first level ahead with the lookup (readahead.go) and writes
// root lists of plain objects straight to JSON (render.go), the three
// sharing the fields collected from a selection across requests
// (collect.go). Beside them: Relay connections and cursors (connections.go,
// paged.go), global object identification (node.go), federation entities
// (entities.go), the one reading of a client reference (clientref.go), and
// the converters from store rows to API types the table attaches
// (convert.go).
package engine
