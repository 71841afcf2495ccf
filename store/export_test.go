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

// ImportStatement is the upsert InsertDocumentsWith runs for a batch, for
// tests that read its plan, with its arguments for docs of ownerID (keep
// others, hold the analysis, may move: the first run; the second, after
// documents moved, has mayMove false).
func ImportStatement(ownerID int64, docs []Document, keepOthers, hold, mayMove bool) (upsert string, args []any) {
	b, err := newBatchColumns(docs)
	if err != nil {
		panic(err)
	}
	return upsertStatement(batchSource(repeats(docs))), b.upsertArgs(ownerID, keepOthers, hold, mayMove)
}
