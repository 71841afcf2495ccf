package store

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/fleetgraph/fleetgraph/analyzer"
	"github.com/fleetgraph/fleetgraph/apierr"
)

// Anomaly rules (issue 24): a data owner's rules are the catalogue's
// (analyzer.Catalogue(), each enabled unless the data owner disabled it)
// and its own. anomaly_rules holds the own rules whole and, for the
// catalogue's, only the data owner's enabled choice.

// ErrBuiltinRule refuses to delete a rule of the catalogue (it can be
// disabled instead).
var ErrBuiltinRule error = &apierr.Error{Class: apierr.ErrConflict,
	Msg: "a built-in rule cannot be deleted; disable it instead (enabled: false)"}

// ruleRow is an anomaly_rules row.
type ruleRow struct {
	ID              string   `db:"id"`
	Builtin         bool     `db:"builtin"`
	Name            *string  `db:"name"`
	MeasurementType *string  `db:"measurement_type"`
	Metric          *string  `db:"metric"`
	Subject         *string  `db:"subject"`
	Direction       *string  `db:"direction"`
	Unit            *string  `db:"unit"`
	Passes          []string `db:"passes"`
	Enabled         bool     `db:"enabled"`
}

const ruleCols = `id, builtin, name, measurement_type, metric, subject, direction, unit, passes, enabled`

func (r ruleRow) rule() analyzer.Rule {
	out := analyzer.Rule{ID: r.ID, Name: orZero(r.Name), MeasurementType: orZero(r.MeasurementType),
		Metric: orZero(r.Metric), Subject: orZero(r.Subject), Direction: analyzer.Direction(orZero(r.Direction)),
		Unit: orZero(r.Unit), Enabled: r.Enabled}
	for _, p := range r.Passes {
		out.Passes = append(out.Passes, analyzer.Pass(p))
	}
	return out
}

func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// builtinRule is the catalogue's rule of id, if there is one.
func builtinRule(id string) (analyzer.Rule, bool) {
	for _, r := range analyzer.Catalogue() {
		if r.ID == id {
			return r, true
		}
	}
	return analyzer.Rule{}, false
}

// AnomalyRules lists the data owner's rules: the catalogue's first, in
// its order, then its own, oldest first.
func (s *Store) AnomalyRules(ctx context.Context, ownerID int64) ([]analyzer.Rule, error) {
	return anomalyRules(ctx, s.pool, ownerID)
}

func anomalyRules(ctx context.Context, q querier, ownerID int64) ([]analyzer.Rule, error) {
	rows, _ := q.Query(ctx, rulesSelect, ownerID)
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByName[ruleRow])
	if err != nil {
		return nil, mapErr("list anomaly rules", err)
	}
	return withCatalogue(rs), nil
}

// rulesSelect reads the data owner's ($1) anomaly_rules rows.
const rulesSelect = `SELECT ` + ruleCols + ` FROM anomaly_rules WHERE data_owner_id = $1 ORDER BY created_at, id`

// withCatalogue is the built-in rules as the data owner's rows rs enable
// them, then its own rules.
func withCatalogue(rs []ruleRow) []analyzer.Rule {
	out := analyzer.Catalogue()
	for _, r := range rs {
		if !r.Builtin {
			out = append(out, r.rule())
			continue
		}
		if i := slices.IndexFunc(out, func(b analyzer.Rule) bool { return b.ID == r.ID }); i >= 0 {
			out[i].Enabled = r.Enabled
		}
	}
	return out
}

// AnomalyRule loads one of the data owner's rules (another data owner's
// own rule is not found).
func (s *Store) AnomalyRule(ctx context.Context, ownerID int64, id string) (analyzer.Rule, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, `SELECT `+ruleCols+` FROM anomaly_rules WHERE data_owner_id = $1 AND id = $2`, ownerID, id)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ruleRow])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if b, ok := builtinRule(id); ok {
			return b, nil
		}
		return analyzer.Rule{}, ErrNotFound
	case err != nil:
		return analyzer.Rule{}, mapErr("load anomaly rule", err)
	case row.Builtin:
		b, ok := builtinRule(id)
		if !ok { // a rule the catalogue dropped
			return analyzer.Rule{}, ErrNotFound
		}
		b.Enabled = row.Enabled
		return b, nil
	}
	return row.rule(), nil
}

// CreateAnomalyRule stores a new rule of the data owner (its ID is made
// here: custom-<n>).
func (s *Store) CreateAnomalyRule(ctx context.Context, ownerID int64, r analyzer.Rule) (analyzer.Rule, error) {
	const q = `INSERT INTO anomaly_rules (data_owner_id, id, builtin, name, measurement_type, metric, subject,
			direction, unit, passes, enabled)
		VALUES ($1, 'custom-' || nextval('anomaly_rule_ids'), false, $2, $3, $4, NULLIF($5, ''), $6, $7, $8, $9)
		RETURNING ` + ruleCols
	rows, _ := s.pool.Query(ctx, q, ownerID, r.Name, r.MeasurementType, r.Metric, r.Subject, string(r.Direction),
		r.Unit, passNames(r.Passes), r.Enabled)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ruleRow])
	if err != nil {
		return analyzer.Rule{}, mapErr("create anomaly rule", err)
	}
	return row.rule(), nil
}

// UpdateAnomalyRule stores r (as loaded by AnomalyRule and changed) as the
// data owner's rule: of a built-in rule only enabled is kept.
func (s *Store) UpdateAnomalyRule(ctx context.Context, ownerID int64, r analyzer.Rule) (analyzer.Rule, error) {
	if r.Builtin {
		const q = `INSERT INTO anomaly_rules (data_owner_id, id, builtin, enabled) VALUES ($1, $2, true, $3)
			ON CONFLICT (data_owner_id, id) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = now()
			WHERE anomaly_rules.builtin`
		if _, err := s.pool.Exec(ctx, q, ownerID, r.ID, r.Enabled); err != nil {
			return analyzer.Rule{}, mapErr("update anomaly rule", err)
		}
		return r, nil
	}
	const q = `UPDATE anomaly_rules SET name = $3, measurement_type = $4, metric = $5, subject = NULLIF($6, ''),
			direction = $7, unit = $8, passes = $9, enabled = $10, updated_at = now()
		WHERE data_owner_id = $1 AND id = $2 AND NOT builtin
		RETURNING ` + ruleCols
	rows, _ := s.pool.Query(ctx, q, ownerID, r.ID, r.Name, r.MeasurementType, r.Metric, r.Subject,
		string(r.Direction), r.Unit, passNames(r.Passes), r.Enabled)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ruleRow])
	if err != nil {
		return analyzer.Rule{}, mapErr("update anomaly rule", err)
	}
	return row.rule(), nil
}

// DeleteAnomalyRule deletes one of the data owner's own rules with its
// detector states (its episodes stay); a built-in rule is ErrBuiltinRule.
func (s *Store) DeleteAnomalyRule(ctx context.Context, ownerID int64, id string) error {
	if _, ok := builtinRule(id); ok {
		return ErrBuiltinRule
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM anomaly_rules WHERE data_owner_id = $1 AND id = $2 AND NOT builtin`, ownerID, id)
		if err != nil {
			return mapErr("delete anomaly rule", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		_, err = tx.Exec(ctx, `DELETE FROM analyzer_states WHERE data_owner_id = $1 AND rule_id = $2`, ownerID, id)
		return mapErr("delete anomaly rule states", err)
	})
}

func passNames(ps []analyzer.Pass) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}
