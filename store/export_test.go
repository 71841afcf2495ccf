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

// ImportStatements are the statements InsertDocumentsWith runs for a
// batch, for tests that read their plans: the search for moved documents
// and the upsert, each with its arguments for docs of ownerID (keep others,
// and for the upsert hold the analysis too).
func ImportStatements(ownerID int64, docs []Document, keepOthers, hold bool) (moved string, movedArgs []any, upsert string, upsertArgs []any) {
	b, err := newBatchColumns(docs)
	if err != nil {
		panic(err)
	}
	rep := repeats(docs)
	return movedStatement(movedSource(rep)), b.movedArgs(ownerID, keepOthers),
		upsertStatement(batchSource(rep)), b.upsertArgs(ownerID, keepOthers, hold)
}
