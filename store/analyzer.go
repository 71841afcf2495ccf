package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/vocab"
)

// The analyzer's durable pipeline (docs/analyzer.md "The pipeline"): a
// measurement stored by any write path gets an analyzer_inbox row and its
// client an AnalyzeArgs job in the same transaction; the job judges the
// client's inbox in time order in one transaction that takes the client's
// lock, reads and writes its detector states (analyzer_states), upserts the
// episodes as anomaly event documents (ids are deterministic), emits their
// events, deletes the inbox rows and completes the job. So a crash at any
// point loses no measurement and repeats no episode or event, and
// processes sharing the database never judge one client at once.

// AnalyzeArgs is the River job that judges one client's inbox.
type AnalyzeArgs struct {
	DataOwnerID int64  `json:"data_owner_id"`
	ClientUUID  string `json:"client_uuid"`
}

// Kind names the job in river_job.
func (AnalyzeArgs) Kind() string { return "analyze_client" }

// AnalyzerQueue is the River queue of the analyzer's jobs (apart from the
// webhook deliveries, so that neither starves the other).
const AnalyzerQueue = "analyzer"

// analyzeOpts: one job per client waiting or running at a time (a client
// whose job runs gets a new one once the running one committed: its
// transaction completes it).
var analyzeOpts = &river.InsertOpts{Queue: AnalyzerQueue, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true,
	ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
		rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}

// maxSharedLocks bounds the client locks a write takes (lock table
// space); a write of more clients relies on the sweep's requeue instead.
const maxSharedLocks = 16

// queueAnalysis queues the analysis of the data owner's clients in tx.
// First it takes each client's analysis lock in shared mode (up to
// maxSharedLocks clients): a judging transaction of the client that is
// running (its job running, so the unique insert below is skipped) then
// finishes first and this write's rows wait for a new job, or it waits
// for this write to commit and judges its rows; no row is left without
// a job.
func (s *Store) queueAnalysis(ctx context.Context, tx pgx.Tx, ownerID int64, clients []string) error {
	if len(clients) == 0 {
		return nil
	}
	if len(clients) <= maxSharedLocks {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtextextended('analyzer:' || c, $1))
			FROM unnest($2::text[]) AS c`, ownerID, clients)
		if err != nil {
			return mapErr("lock client analysis", err)
		}
	}
	params := make([]river.InsertManyParams, len(clients))
	for i, c := range clients {
		params[i] = river.InsertManyParams{Args: AnalyzeArgs{DataOwnerID: ownerID, ClientUUID: c}, InsertOpts: analyzeOpts}
	}
	if _, err := s.jobs.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("queue analysis: %w", err)
	}
	return nil
}

// inboxMeasurements writes the inbox rows of the measurements an insert
// stored or changed (ins: the upsert's RETURNING with id, kind,
// client_uuid, created_at) and answers their clients. held rows wait for
// ReleaseAnalysis (an import); $3 is held.
const inboxInsert = `INSERT INTO analyzer_inbox (data_owner_id, client_uuid, document_id, created_at, held)
	SELECT $1, client_uuid, id, created_at, $3::boolean FROM ins WHERE kind = 'measurement' AND client_uuid IS NOT NULL
	RETURNING client_uuid`

// ReleaseAnalysis queues the data owner's held inbox rows (an import that
// ended): the analysis then judges the whole import in time order.
func (s *Store) ReleaseAnalysis(ctx context.Context, ownerID int64) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		const q = `WITH r AS (UPDATE analyzer_inbox SET held = false, queued_at = now()
			WHERE data_owner_id = $1 AND held RETURNING client_uuid)
			SELECT DISTINCT client_uuid::text FROM r ORDER BY 1`
		rows, _ := tx.Query(ctx, q, ownerID)
		clients, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return mapErr("release analysis", err)
		}
		return s.queueAnalysis(ctx, tx, ownerID, clients)
	})
}

// RequeueAnalysis queues a job for every client whose inbox has rows
// queued before olderThan (their job was lost: a race with a job that was
// completing, or a process killed between two transactions), and releases
// held rows older than heldFor (an import that died). It answers how many
// clients it queued.
func (s *Store) RequeueAnalysis(ctx context.Context, olderThan, heldFor time.Duration) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE analyzer_inbox SET held = false, queued_at = now() - $1::interval
			WHERE held AND queued_at < now() - $2::interval`, olderThan, heldFor)
		if err != nil {
			return mapErr("release stale held analysis", err)
		}
		const q = `SELECT DISTINCT data_owner_id, client_uuid::text FROM analyzer_inbox
			WHERE NOT held AND queued_at < now() - $1::interval ORDER BY 1, 2 LIMIT 1000`
		rows, _ := tx.Query(ctx, q, olderThan)
		var owner int64
		var client string
		byOwner := map[int64][]string{}
		_, err = pgx.ForEachRow(rows, []any{&owner, &client}, func() error {
			byOwner[owner] = append(byOwner[owner], client)
			n++
			return nil
		})
		if err != nil {
			return mapErr("find lost analysis", err)
		}
		for o, cs := range byOwner {
			if err := s.queueAnalysis(ctx, tx, o, cs); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// StateKey names one detector state of a client: a rule and the
// measurements' study.subject ("" when none).
type StateKey struct {
	RuleID, Subject string
}

// DetectorState is one stored detector state (analyzer.State's encoding).
type DetectorState struct {
	Key    StateKey
	State  []byte
	LastAt time.Time // the latest value judged
	Open   bool      // an episode is open
}

// AnalyzerBatch is what a detection step of one client reads.
type AnalyzerBatch struct {
	ClientUUID string
	// Measurements in time order (created_at, then id).
	Measurements []Document
	// States are the client's stored detector states.
	States map[StateKey][]byte
	// Rules are the data owner's enabled rules, Overrides its overrides.
	Rules     []analyzer.Rule
	Overrides []Override
}

// AnalyzerResult is what a detection step writes.
type AnalyzerResult struct {
	States []DetectorState // changed states
	// Episodes are anomaly event documents to store (by id: a stored one
	// of the client is replaced).
	Episodes []map[string]any
}

// lockAnalysis takes the transaction-scoped lock of one client's analysis
// (its row may not exist: no row lock can serve). Two clients sharing a
// key only wait for each other.
func lockAnalysis(ctx context.Context, tx pgx.Tx, ownerID int64, clientUUID string) error {
	_, err := tx.Exec(ctx, lockAnalysisSQL, ownerID, clientUUID)
	return mapErr("lock client analysis", err)
}

// lockAnalysisSQL takes the lock of client $2 of data owner $1.
const lockAnalysisSQL = `SELECT pg_advisory_xact_lock(hashtextextended('analyzer:' || $2::text, $1))`

// AnalyzeInbox runs one detection step of a client: in one transaction
// under the client's lock it reads up to limit of its inbox measurements
// in time order with its states, rules and overrides, calls judge, writes
// what judge answers, deletes the inbox rows read, and calls done (the
// job's completion) when the inbox is then empty. It answers whether rows
// are left (call it again).
func (s *Store) AnalyzeInbox(ctx context.Context, ownerID int64, clientUUID string, limit int,
	judge func(AnalyzerBatch) (AnalyzerResult, error), done func(pgx.Tx) error) (more bool, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		// One round trip: the client's lock, its inbox rows in time order,
		// its states (locked), the data owner's rules and overrides. Then
		// the rows' documents (a row whose document is gone is consumed
		// unjudged). The documents are read by the client's index over the
		// batch's time range, not joined to the inbox: a join planned on
		// stale statistics (a fresh partition that autovacuum has not
		// analysed yet) scanned all of the data owner's measurements once
		// per inbox row.
		var inbox, docRows []int64
		var from, to time.Time
		b := AnalyzerBatch{ClientUUID: clientUUID}
		var reads pgx.Batch
		reads.Queue(lockAnalysisSQL, ownerID, clientUUID)
		reads.Queue(`SELECT id, document_id, created_at FROM analyzer_inbox
			WHERE data_owner_id = $1 AND client_uuid = $2 AND NOT held
			ORDER BY created_at, id LIMIT $3`, ownerID, clientUUID, limit+1).Query(func(rows pgx.Rows) error {
			var id, doc int64
			var at time.Time
			_, err := pgx.ForEachRow(rows, []any{&id, &doc, &at}, func() error {
				if len(inbox) < limit {
					if len(inbox) == 0 {
						from = at
					}
					docRows, to = append(docRows, doc), at
				}
				inbox = append(inbox, id)
				return nil
			})
			return err
		})
		queueAnalyzerBatch(&reads, ownerID, &b)
		if err := tx.SendBatch(ctx, &reads).Close(); err != nil {
			return mapErr("read analyzer inbox", err)
		}
		if more = len(inbox) > limit; more {
			inbox = inbox[:limit]
		}
		var err error
		if len(docRows) > 0 {
			// No ORDER BY: with one, a partition without statistics was
			// read through the (owner, kind, created_at) index, which
			// gives that order, filtering every client's documents of the
			// batch's range (52 ms for 51 rows after a 100,000-document
			// import); without, the client's index (0.2 ms). Go sorts.
			rows, _ := tx.Query(ctx, `SELECT `+documentCols+` FROM documents
				WHERE data_owner_id = $1 AND kind = 'measurement' AND client_uuid = $2 AND created_at BETWEEN $3 AND $4 AND id = ANY($5)`,
				ownerID, clientUUID, from, to, docRows)
			if b.Measurements, err = pgx.CollectRows(rows, pgx.RowToStructByName[Document]); err != nil {
				return mapErr("read inbox measurements", err)
			}
			slices.SortFunc(b.Measurements, func(x, y Document) int {
				if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
					return c
				}
				return cmp.Compare(x.ID, y.ID)
			})
		}
		// The inbox rows read are deleted in the round trip that saves
		// the states (rows whose documents are gone: nothing judged).
		var res AnalyzerResult
		if len(b.Measurements) > 0 {
			if res, err = judge(b); err != nil {
				return err
			}
		}
		if err := s.writeAnalysis(ctx, tx, ownerID, clientUUID, res, inbox); err != nil {
			return err
		}
		if !more && done != nil {
			return done(tx)
		}
		return nil
	})
	return more, err
}

// loadAnalyzerBatch reads the client's states (locked) and the data
// owner's enabled rules and overrides into b.
func loadAnalyzerBatch(ctx context.Context, tx pgx.Tx, ownerID int64, b *AnalyzerBatch) error {
	var bt pgx.Batch
	queueAnalyzerBatch(&bt, ownerID, b)
	return mapErr("read detector states, rules and overrides", tx.SendBatch(ctx, &bt).Close())
}

// queueAnalyzerBatch queues loadAnalyzerBatch's reads in bt (one round
// trip with the statements before and after them).
func queueAnalyzerBatch(bt *pgx.Batch, ownerID int64, b *AnalyzerBatch) {
	bt.Queue(`SELECT rule_id, subject, state FROM analyzer_states
		WHERE data_owner_id = $1 AND client_uuid = $2 ORDER BY rule_id, subject FOR UPDATE`, ownerID, b.ClientUUID).
		Query(func(rows pgx.Rows) error {
			b.States = map[StateKey][]byte{}
			var k StateKey
			var st []byte
			_, err := pgx.ForEachRow(rows, []any{&k.RuleID, &k.Subject, &st}, func() error {
				b.States[k] = append([]byte(nil), st...)
				return nil
			})
			return err
		})
	bt.Queue(rulesSelect, ownerID).Query(func(rows pgx.Rows) error {
		rs, err := pgx.CollectRows(rows, pgx.RowToStructByName[ruleRow])
		for _, r := range withCatalogue(rs) {
			if r.Enabled {
				b.Rules = append(b.Rules, r)
			}
		}
		return err
	})
	bt.Queue(overrideSelect+` ORDER BY o.id`, ownerID).Query(func(rows pgx.Rows) error {
		var err error
		b.Overrides, err = pgx.CollectRows(rows, pgx.RowToStructByName[Override])
		return err
	})
}

// writeAnalysis stores a detection step's states and episodes in tx and
// emits the episodes' events (none for a client with anomalies_muted).
// The states are saved and the inbox rows consumed (none for a sweep or
// a replay) deleted in one round trip.
func (s *Store) writeAnalysis(ctx context.Context, tx pgx.Tx, ownerID int64, clientUUID string, res AnalyzerResult,
	consumed []int64) error {
	var writes pgx.Batch
	queueStates(&writes, ownerID, clientUUID, res.States)
	queueConsume(&writes, consumed)
	if writes.Len() > 0 {
		if err := tx.SendBatch(ctx, &writes).Close(); err != nil {
			return mapErr("save detector states", err)
		}
	}
	if len(res.Episodes) == 0 {
		return nil
	}
	prior, err := placeEpisodes(ctx, tx, ownerID, clientUUID, res.Episodes)
	if err != nil {
		return err
	}
	// An episode someone resolved (PATCH /anomaly_events/resolve) stays
	// resolved while the analyzer still holds it open; it resolves it in
	// its own time, and a recurrence after that opens a new one.
	var eps []map[string]any
	for _, e := range res.Episodes {
		if !(prior[e["id"].(string)] == "resolved" && e["status"] != "resolved") {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return nil
	}
	docs := make([]Document, 0, len(eps))
	for _, e := range eps {
		d, err := DocumentFields(vocab.KindAnomalyEvent, e)
		if err != nil {
			return fmt.Errorf("episode document: %w", err)
		}
		if d.Doc, err = json.Marshal(e); err != nil {
			return fmt.Errorf("episode document: %w", err)
		}
		docs = append(docs, d)
	}
	const q = `INSERT INTO documents AS d (data_owner_id, kind, doc_id, client_uuid, type, subject, created_at, doc)
		SELECT $1, 'anomaly_event', x.doc_id, x.client_uuid, x.type, x.subject, x.created_at, x.doc
		FROM unnest($2::text[], $3::uuid[], $4::text[], $5::text[], $6::timestamptz[], $7::jsonb[])
			AS x(doc_id, client_uuid, type, subject, created_at, doc)
		ON CONFLICT (data_owner_id, kind, doc_id, created_at) DO UPDATE SET type = EXCLUDED.type, subject = EXCLUDED.subject,
			doc = EXCLUDED.doc, version = next_document_version()
		WHERE d.doc IS DISTINCT FROM EXCLUDED.doc AND d.client_uuid IS NOT DISTINCT FROM EXCLUDED.client_uuid`
	clients := make([]*string, len(docs))
	types := make([]*string, len(docs))
	subjects := make([]*string, len(docs))
	times := make([]time.Time, len(docs))
	bodies := make([]string, len(docs))
	for i, d := range docs {
		clients[i], types[i], subjects[i], times[i], bodies[i] = d.ClientUUID, d.Type, d.Subject, d.CreatedAt, string(d.Doc)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.DocID
	}
	if _, err := tx.Exec(ctx, q, ownerID, ids, clients, types, subjects, times, bodies); err != nil {
		return mapErr("store episodes", err)
	}
	if err := saveMappings(ctx, tx, ownerID, DetectMappings(docs, nil)); err != nil {
		return err
	}
	var muted bool
	err = tx.QueryRow(ctx, `SELECT coalesce((SELECT anomalies_muted FROM clients WHERE data_owner_id = $1 AND uuid = $2), false)`,
		ownerID, clientUUID).Scan(&muted)
	if err != nil {
		return mapErr("read client muting", err)
	}
	if muted {
		return nil
	}
	var events []NewEvent
	for i, e := range eps {
		before := prior[docs[i].DocID]
		if before == "" {
			events = append(events, anomalyEvent(EventAnomalyCreated, docs[i], e))
		}
		if e["status"] == "resolved" && before != "resolved" {
			events = append(events, anomalyEvent(EventAnomalyResolved, docs[i], e))
		}
	}
	return s.Emit(ctx, tx, ownerID, events...)
}

// maxIDBump bounds how far an episode's id moves off its first second
// (6 hours): a burst of one rule's episodes over the whole fleet (an ISP
// outage) takes one second each.
const maxIDBump = 6 * 3600

// placeEpisodes gives each episode its document id and answers the stored
// status of each id placed ("" absent), so that events tell only what
// changed (a replay or a retried step tells nothing twice). An episode id
// ({rule_id}::{pass}::{first_seen_epoch}) names no client, so two clients'
// episodes of a rule may start in the same second: the episode takes the
// first id from its own on, one second later each time, that no other
// episode of the data owner holds, and claims it in episode_ids (primary
// key data owner x id); the claim finds it again when the episode changes
// (same client, first_seen_at and rule and pass, which the id's prefix
// names). A lock per data owner x rule x pass (taken in order, so that two
// never wait for each other) makes two clients judged at once look one
// after the other. An episode that finds no free id within maxIDBump
// fails its batch (retried), never stored under another's id.
func placeEpisodes(ctx context.Context, tx pgx.Tx, ownerID int64, clientUUID string, eps []map[string]any) (map[string]string, error) {
	bases := make([]string, 0, len(eps))
	for _, e := range eps {
		base, _ := splitEpisodeID(e["id"].(string))
		bases = append(bases, base)
	}
	slices.Sort(bases)
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('analyzer-episode:' || b, $1))
		FROM unnest($2::text[]) AS b`, ownerID, slices.Compact(bases))
	if err != nil {
		return nil, mapErr("lock episode ids", err)
	}
	// The episode's own claim, else the first second from its own on that
	// neither a claim nor a stored (imported) episode holds, claimed; then
	// the stored status of the client's episode under that id.
	const q = `WITH mine AS (
			SELECT doc_id FROM episode_ids
			WHERE data_owner_id = $1 AND client_uuid = $2 AND first_seen_at = $3 AND starts_with(doc_id, $4)
			ORDER BY doc_id LIMIT 1),
		free AS (
			SELECT $4 || s AS doc_id FROM generate_series($5::bigint, $5::bigint + $6) AS s
			WHERE NOT EXISTS (SELECT 1 FROM mine)
				AND NOT EXISTS (SELECT 1 FROM episode_ids c WHERE c.data_owner_id = $1 AND c.doc_id = $4 || s)
				AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.data_owner_id = $1 AND d.kind = 'anomaly_event' AND d.doc_id = $4 || s)
			ORDER BY s LIMIT 1),
		pick AS (SELECT doc_id FROM mine UNION ALL SELECT doc_id FROM free),
		claim AS (
			INSERT INTO episode_ids (data_owner_id, doc_id, client_uuid, first_seen_at)
			SELECT $1, doc_id, $2, $3 FROM free
			ON CONFLICT (data_owner_id, doc_id) DO NOTHING RETURNING doc_id)
		SELECT p.doc_id, EXISTS (SELECT 1 FROM mine) OR EXISTS (SELECT 1 FROM claim),
			coalesce((SELECT d.doc->>'status' FROM documents d
				WHERE d.data_owner_id = $1 AND d.kind = 'anomaly_event' AND d.doc_id = p.doc_id AND d.client_uuid = $2::uuid LIMIT 1), '')
		FROM pick p`
	prior := map[string]string{}
	for _, e := range eps {
		base, epoch := splitEpisodeID(e["id"].(string))
		first, _ := e["first_seen_at"].(string)
		var id, status string
		var held bool
		err := tx.QueryRow(ctx, q, ownerID, clientUUID, first, base, epoch, maxIDBump).Scan(&id, &held, &status)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && !held {
			return nil, fmt.Errorf("no episode id free for %s within %d s of %d", base, maxIDBump, epoch)
		}
		if err != nil {
			return nil, mapErr("place episode", err)
		}
		e["id"], prior[id] = id, status
	}
	return prior, nil
}

func splitEpisodeID(id string) (string, int64) {
	i := strings.LastIndex(id, "::")
	epoch, _ := strconv.ParseInt(id[i+2:], 10, 64)
	return id[:i+2], epoch
}

// queueConsume queues the deletion of the inbox rows ids in bt.
func queueConsume(bt *pgx.Batch, ids []int64) {
	if len(ids) > 0 {
		bt.Queue(`DELETE FROM analyzer_inbox WHERE id = ANY($1)`, ids)
	}
}

// queueStates queues the upsert of the client's detector states in bt.
func queueStates(bt *pgx.Batch, ownerID int64, clientUUID string, states []DetectorState) {
	if len(states) == 0 {
		return
	}
	rules := make([]string, len(states))
	subjects := make([]string, len(states))
	blobs := make([][]byte, len(states))
	last := make([]time.Time, len(states))
	open := make([]bool, len(states))
	for i, st := range states {
		rules[i], subjects[i], blobs[i], last[i], open[i] = st.Key.RuleID, st.Key.Subject, st.State, st.LastAt, st.Open
	}
	const q = `INSERT INTO analyzer_states (data_owner_id, client_uuid, rule_id, subject, state, last_at, open)
		SELECT $1, $2, x.rule_id, x.subject, x.state, x.last_at, x.open
		FROM unnest($3::text[], $4::text[], $5::bytea[], $6::timestamptz[], $7::bool[]) AS x(rule_id, subject, state, last_at, open)
		ON CONFLICT (data_owner_id, client_uuid, rule_id, subject) DO UPDATE SET state = EXCLUDED.state,
			last_at = EXCLUDED.last_at, open = EXCLUDED.open`
	bt.Queue(q, ownerID, clientUUID, rules, subjects, blobs, last, open)
}

// SweepClient is a client whose detector states are due for the
// resolution sweep.
type SweepClient struct {
	DataOwnerID int64
	ClientUUID  string
}

// SweepDue lists up to limit clients with states the sweep has not looked
// at for every (an open episode, or a value judged in the last week).
func (s *Store) SweepDue(ctx context.Context, every time.Duration, limit int) ([]SweepClient, error) {
	const q = `SELECT DISTINCT data_owner_id, client_uuid::text FROM analyzer_states
		WHERE swept_at < now() - $1::interval AND (open OR last_at > now() - interval '7 days')
		ORDER BY 1, 2 LIMIT $2`
	rows, _ := s.pool.Query(ctx, q, every, limit)
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SweepClient, error) {
		var c SweepClient
		return c, r.Scan(&c.DataOwnerID, &c.ClientUUID)
	})
	return cs, mapErr("list clients to sweep", err)
}

// SweepStates runs the sweep of one client in one transaction: unless
// another transaction holds the client's analysis (then it answers false
// and the next sweep comes back), it reads the states with the rules and
// overrides, calls sweep and writes what it answers like AnalyzeInbox.
func (s *Store) SweepStates(ctx context.Context, ownerID int64, clientUUID string,
	sweep func(AnalyzerBatch) (AnalyzerResult, error)) (bool, error) {
	swept := false
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var got bool
		err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended('analyzer:' || $2::text, $1))`,
			ownerID, clientUUID).Scan(&got)
		if err != nil || !got {
			return mapErr("lock client analysis", err)
		}
		b := AnalyzerBatch{ClientUUID: clientUUID}
		if err := loadAnalyzerBatch(ctx, tx, ownerID, &b); err != nil {
			return err
		}
		res, err := sweep(b)
		if err != nil {
			return err
		}
		if err := s.writeAnalysis(ctx, tx, ownerID, clientUUID, res, nil); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE analyzer_states SET swept_at = now() WHERE data_owner_id = $1 AND client_uuid = $2`,
			ownerID, clientUUID)
		swept = true
		return mapErr("mark states swept", err)
	})
	return swept, err
}

// MeasurementClients lists the data owner's clients with measurements
// created at or after since.
func (s *Store) MeasurementClients(ctx context.Context, ownerID int64, since time.Time) ([]string, error) {
	const q = `SELECT DISTINCT client_uuid::text FROM documents
		WHERE data_owner_id = $1 AND kind = 'measurement' AND client_uuid IS NOT NULL AND created_at >= $2 ORDER BY 1`
	rows, _ := s.pool.Query(ctx, q, ownerID, since)
	cs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return cs, mapErr("list measurement clients", err)
}

// Replay is how ReplayClient feeds a replay: observe is called with each
// measurement in time order, then result answers what to write.
type Replay struct {
	Observe func(Document)
	Result  func() (AnalyzerResult, error)
}

// ReplayClient replays the analysis of one client (fleetgraph analyze) in
// one transaction under the client's lock: its detector states (of ruleID
// only, when given) start afresh; start is called with the rules and
// overrides (the rules narrowed to ruleID) and its Replay observes the
// client's measurements created at or after since, in time order
// (streamed: memory does not grow with them). The episodes it makes are
// stored (the same ids as before replace the stored ones; events tell
// only what changed), the detected episodes of the client first seen since
// then that the replay did not make again are deleted, and the client's
// inbox is emptied (the replay covered it). It answers how many
// measurements were observed.
func (s *Store) ReplayClient(ctx context.Context, ownerID int64, clientUUID string, since time.Time, ruleID string,
	start func(AnalyzerBatch) (Replay, error)) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockAnalysis(ctx, tx, ownerID, clientUUID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM analyzer_states WHERE data_owner_id = $1 AND client_uuid = $2
			AND ($3 = '' OR rule_id = $3)`, ownerID, clientUUID, ruleID)
		if err != nil {
			return mapErr("reset detector states", err)
		}
		b := AnalyzerBatch{ClientUUID: clientUUID}
		if err := loadAnalyzerBatch(ctx, tx, ownerID, &b); err != nil {
			return err
		}
		if ruleID != "" {
			var only []analyzer.Rule
			for _, r := range b.Rules {
				if r.ID == ruleID {
					only = append(only, r)
				}
			}
			b.Rules = only
		}
		rp, err := start(b)
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT `+documentCols+` FROM documents WHERE data_owner_id = $1 AND kind = 'measurement'
			AND client_uuid = $2 AND created_at >= $3 ORDER BY created_at, id`, ownerID, clientUUID, since)
		var d Document
		scan := pgx.RowToAddrOfStructByName[Document]
		for rows.Next() {
			p, err := scan(rows)
			if err != nil {
				rows.Close()
				return mapErr("read measurements", err)
			}
			d = *p
			rp.Observe(d)
			n++
		}
		if err := rows.Err(); err != nil {
			return mapErr("read measurements", err)
		}
		res, err := rp.Result()
		if err != nil {
			return err
		}
		if err := s.writeAnalysis(ctx, tx, ownerID, clientUUID, res, nil); err != nil {
			return err
		}
		kept := make([]string, len(res.Episodes))
		for i, e := range res.Episodes {
			kept[i], _ = e["id"].(string)
		}
		_, err = tx.Exec(ctx, `DELETE FROM documents WHERE data_owner_id = $1 AND kind = 'anomaly_event' AND client_uuid = $2
			AND doc->>'detected_by' = 'analyzer' AND ($3 = '' OR doc->>'rule_id' = $3) AND created_at >= $4
			AND NOT doc_id = ANY($5)`, ownerID, clientUUID, ruleID, since, kept)
		if err != nil {
			return mapErr("delete episodes the replay did not make", err)
		}
		if ruleID == "" {
			_, err = tx.Exec(ctx, `DELETE FROM analyzer_inbox WHERE data_owner_id = $1 AND client_uuid = $2`, ownerID, clientUUID)
		}
		return mapErr("empty the analyzer inbox", err)
	})
	return n, err
}

// InboxClients lists the data owner's clients with measurements waiting
// in the inbox (not held).
func (s *Store) InboxClients(ctx context.Context, ownerID int64) ([]string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT DISTINCT client_uuid::text FROM analyzer_inbox
		WHERE data_owner_id = $1 AND NOT held ORDER BY 1`, ownerID)
	cs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return cs, mapErr("list inbox clients", err)
}
