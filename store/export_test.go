package store

import "github.com/jackc/pgx/v5"

// SettingRead is a Read of a setting's value as the reads run under it.
func SettingRead(name string) Read[string] {
	return Read[string]{step: "read setting", sql: `SELECT current_setting($1)`, args: []any{name}, scan: pgx.RowTo[string]}
}

// CacheDeaf turns the caches of keys and probes on without listening: no
// notification ever empties them, so a test sees exactly what the store's
// own writes empty.
func (s *Store) CacheDeaf() { s.flushAuth(true) }

// ImportStatements are the statements InsertDocumentsWith runs over its
// import table, for tests that read their plans: the table's creation, the
// search for moved documents ($1 data owner, $2 keep others) and the upsert
// (and $3 hold the analysis).
func ImportStatements() (create, moved, upsert string) {
	src := importSource(false)
	return createImportTable, movedStatement(src), upsertStatement(src)
}
