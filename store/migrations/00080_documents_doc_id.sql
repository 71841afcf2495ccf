-- +goose Up
-- The stored copies of a batch's documents are found by their id
-- (store/documents.go, storedCopies) through this index alone: the
-- lookup's data owner is not a condition any other index can take, so
-- its plan does not depend on the statistics. Through the unique index it
-- did: on a partition without statistics of its rows (new, or analysed
-- while empty) the planner took the data owner's index on kind and client
-- as cheaply, and read all of the data owner's documents once per
-- document of a batch: a group of 5,000 measurements ran into the 60 s
-- statement timeout at the start of a 1,000-probe run.
CREATE INDEX documents_doc_id ON documents (doc_id, kind);

-- +goose Down
DROP INDEX documents_doc_id;
