package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/fleetgraph/fleetgraph/apierr"
)

// Measurement configs of two kinds: public (the studies a probe runs) and
// automator (the schedule naming those studies). A config has at most one
// draft and one published version (state draft/published); a published
// version that another publish replaced stays as superseded history.

// Config kinds as stored.
const (
	ConfigPublic    = "public"
	ConfigAutomator = "automator"
)

// Config is a measurement config with its current versions' ids and
// revisions.
type Config struct {
	ID                 int64     `db:"id"`
	Kind               string    `db:"kind"`
	Name               string    `db:"name"`
	Description        *string   `db:"description"`
	ImportSource       *string   `db:"import_source"`
	IsDefault          bool      `db:"is_default"`
	CreatedAt          time.Time `db:"created_at"`
	UpdatedAt          time.Time `db:"updated_at"`
	DraftVersionID     *int64    `db:"draft_version_id"`
	PublishedVersionID *int64    `db:"published_version_id"`
	DraftRevision      *int64    `db:"draft_revision"`
	PublishedRevision  *int64    `db:"published_revision"`
}

// configTable is the configs with their current versions, as a table
// of Config's columns with data_owner_id.
const configTable = `(SELECT m.data_owner_id, m.id, m.kind, m.name, m.description, m.import_source, m.is_default,
	m.created_at, m.updated_at, d.id AS draft_version_id, p.id AS published_version_id,
	d.revision::bigint AS draft_revision, p.revision::bigint AS published_revision
	FROM measurement_configs m
	LEFT JOIN config_versions d ON d.config_id = m.id AND d.state = 'draft'
	LEFT JOIN config_versions p ON p.config_id = m.id AND p.state = 'published') configs`

// configCols are Config's columns of configTable.
const configCols = `id, kind, name, description, import_source, is_default, created_at, updated_at,
	draft_version_id, published_version_id, draft_revision, published_revision`

// configSelect reads the configs of kind $2 of data owner $1.
const configSelect = `SELECT ` + configCols + ` FROM ` + configTable + ` WHERE data_owner_id = $1 AND kind = $2`

// Configs lists the data owner's configs of kind, by name.
func (s *Store) Configs(ctx context.Context, ownerID int64, kind string) ([]Config, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, configSelect+` ORDER BY name, id`, ownerID, kind)
	cs, err := pgx.CollectRows(rows, pgx.RowToStructByName[Config])
	return cs, mapErr("list configs", err)
}

// Config loads one of the data owner's configs of kind.
func (s *Store) Config(ctx context.Context, ownerID int64, kind string, id int64) (Config, error) {
	rows, _ := s.ReadPool(ctx).Query(ctx, configSelect+` AND id = $3`, ownerID, kind, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Config])
	return c, mapErr("load config", err)
}

// ConfigVersion is a version of a config. Data is nil for superseded
// versions (their summaries are read without it).
type ConfigVersion struct {
	ID              int64      `db:"id"`
	ConfigID        int64      `db:"config_id"`
	Revision        int64      `db:"revision"`
	State           string     `db:"state"`
	Data            []byte     `db:"data"`
	DataHash        string     `db:"data_hash"`
	CreatedAt       time.Time  `db:"created_at"`
	UpdatedAt       time.Time  `db:"updated_at"`
	CreatedByID     *int64     `db:"created_by_id"`
	CreatedByName   *string    `db:"created_by_name"`
	PublishedAt     *time.Time `db:"published_at"`
	PublishedByID   *int64     `db:"published_by_id"`
	PublishedByName *string    `db:"published_by_name"`
	StudyCount      int64      `db:"study_count"`
}

// ConfigVersionsByConfig loads every version of the data owner's configs,
// newest revision first.
func ConfigVersionsByConfig(ownerID int64, configIDs []int64) Read[ConfigVersion] {
	// A user is named by first and last name, else by username.
	const q = `SELECT v.id, v.config_id, v.revision::bigint AS revision, v.state,
		CASE WHEN v.state <> 'superseded' THEN v.data END AS data, v.data_hash, v.created_at, v.updated_at,
		v.created_by_id, coalesce(nullif(btrim(concat_ws(' ', cu.first_name, cu.last_name)), ''), cu.username) AS created_by_name,
		v.published_at, v.published_by_id,
		coalesce(nullif(btrim(concat_ws(' ', pu.first_name, pu.last_name)), ''), pu.username) AS published_by_name,
		CASE m.kind WHEN 'public' THEN (SELECT count(*) FROM config_version_studies s WHERE s.config_version_id = v.id)
			ELSE (SELECT count(DISTINCT x) FROM jsonb_array_elements(v.data->'studySchedules') e,
				jsonb_array_elements_text(e->'studyIds') x) END AS study_count
		FROM config_versions v JOIN measurement_configs m ON m.id = v.config_id
		LEFT JOIN users cu ON cu.id = v.created_by_id
		LEFT JOIN users pu ON pu.id = v.published_by_id
		WHERE m.data_owner_id = $1 AND v.config_id = ANY($2) ORDER BY v.config_id, v.revision DESC`
	return Read[ConfigVersion]{step: "load config versions", sql: q, args: []any{ownerID, configIDs},
		scan: pgx.RowToStructByName[ConfigVersion]}
}

// VersionStudy is a study of a public config version, resolved to the
// study description version it was saved as.
type VersionStudy struct {
	ID                        int64   `db:"id"`
	ConfigVersionID           int64   `db:"config_version_id"`
	Position                  int64   `db:"position"`
	StudyDescriptionVersionID int64   `db:"study_description_version_id"`
	StudyDescriptionID        int64   `db:"study_description_id"`
	Revision                  int64   `db:"revision"`
	LatestRevision            *int64  `db:"latest_revision"`
	LatestVersionID           *int64  `db:"latest_version_id"`
	Name                      string  `db:"name"`
	StudyID                   string  `db:"study_id"`
	StudyType                 string  `db:"study_type"`
	Subject                   string  `db:"subject"`
	InternalID                *string `db:"internal_id"`
}

// StudiesByVersion loads the studies of the data owner's config versions,
// in document order, each with the newest revision of its description.
func StudiesByVersion(ownerID int64, versionIDs []int64) Read[VersionStudy] {
	const q = `SELECT s.id, s.config_version_id, s.position::bigint AS position,
		dv.id AS study_description_version_id, d.id AS study_description_id, dv.revision::bigint AS revision,
		l.revision::bigint AS latest_revision, l.id AS latest_version_id, dv.name, d.study_id, dv.study_type,
		dv.subject, dv.internal_id
		FROM config_version_studies s
		JOIN study_description_versions dv ON dv.id = s.study_description_version_id
		JOIN study_descriptions d ON d.id = dv.study_description_id AND d.data_owner_id = $1
		LEFT JOIN LATERAL (SELECT x.id, x.revision FROM study_description_versions x
			WHERE x.study_description_id = d.id ORDER BY x.revision DESC LIMIT 1) l ON true
		WHERE s.config_version_id = ANY($2) ORDER BY s.config_version_id, s.position`
	return Read[VersionStudy]{step: "load config studies", sql: q, args: []any{ownerID, versionIDs},
		scan: pgx.RowToStructByName[VersionStudy]}
}

// deliveredWith is the delivery rule, in one place: the CTE "delivered"
// holds, for each managed client of data owner $1 that the condition
// clients (on c.id) and members (on gm.client_id) admit, the config of
// each kind it gets: the first of its own assignment, its groups'
// assignments (the latest assigned first) and the data owner's default
// that has a published version. It is computed for the whole set with hash
// joins on the few published configs and group assignments (a per-client
// subquery took ~300 ms for 2,000 clients). The two forms below are
// separate statements rather than one with "$2 IS NULL OR ...": PostgreSQL
// then keeps a generic plan of each instead of planning the CTEs anew at
// every execution (about 1 ms a check-in or GET /clients/{id}).
func deliveredWith(clients, members string) string {
	return fmt.Sprintf(deliveredTemplate, clients, members)
}

var (
	// deliveredToClients: the clients of the ids $2.
	deliveredToClients = deliveredWith("c.id = ANY($2)", "gm.client_id = ANY($2)")
	// deliveredToAll: every client of the data owner.
	deliveredToAll = deliveredWith("true", "true")
)

const deliveredTemplate = `WITH pub AS (
		SELECT m.id, m.kind, m.name, m.is_default, p.id AS version_id, p.revision::bigint AS revision, p.data_hash
		FROM measurement_configs m JOIN config_versions p ON p.config_id = m.id AND p.state = 'published'
		WHERE m.data_owner_id = $1),
	grp AS (
		SELECT DISTINCT ON (gm.client_id, gc.kind) gm.client_id, gc.kind, gc.config_id
		FROM client_group_configs gc
		JOIN client_groups g ON g.id = gc.client_group_id AND g.data_owner_id = $1
		JOIN pub ON pub.id = gc.config_id
		JOIN client_group_members gm ON gm.client_group_id = gc.client_group_id
			AND %[2]s
		ORDER BY gm.client_id, gc.kind, gc.assigned_at DESC, gc.config_id),
	delivered AS (
		SELECT x.client_id, x.kind, d.id, d.name, d.is_default, x.source, d.version_id, d.revision, d.data_hash
		FROM (SELECT c.id AS client_id, k.kind, coalesce(own.id, grp.config_id, def.id) AS config_id,
				CASE WHEN own.id IS NOT NULL THEN 'client' WHEN grp.config_id IS NOT NULL THEN 'client_group' ELSE 'default' END AS source
			FROM clients c CROSS JOIN (VALUES ('public'), ('automator')) k(kind)
			LEFT JOIN pub own ON own.kind = k.kind
				AND own.id = CASE k.kind WHEN 'public' THEN c.public_config_id ELSE c.automator_config_id END
			LEFT JOIN grp ON grp.client_id = c.id AND grp.kind = k.kind
			LEFT JOIN pub def ON def.kind = k.kind AND def.is_default
			WHERE c.data_owner_id = $1 AND c.config_managed AND %[1]s
			OFFSET 0) x -- planned on its own: the few configs are joined once per client, not clients per config
		JOIN pub d ON d.id = x.config_id) `

// DeliveredConfig is the config of one kind a client gets: its published
// version. Data is read only by DeliveredConfigsForClient.
type DeliveredConfig struct {
	ClientID  int64  `db:"client_id"`
	Kind      string `db:"kind"`
	ID        int64  `db:"id"`
	Name      string `db:"name"`
	IsDefault bool   `db:"is_default"`
	// Source says why: client (assigned to the client), client_group
	// (assigned to one of its groups) or default.
	Source    string `db:"source"`
	VersionID int64  `db:"version_id"`
	Revision  int64  `db:"revision"`
	DataHash  string `db:"data_hash"`
	Data      []byte `db:"data"`
}

// DeliveredConfigsByClients loads the configs the data owner's clients
// get (none for clients it does not own or does not manage).
func DeliveredConfigsByClients(ownerID int64, clientIDs []int64) Read[DeliveredConfig] {
	q := deliveredToClients + `SELECT ` + deliveredCols + `, NULL::bytea AS data FROM delivered d`
	return Read[DeliveredConfig]{step: "load delivered configs", sql: q, args: []any{ownerID, clientIDs},
		scan: scanDeliveredConfig}
}

// deliveredCols are the columns of the delivered CTE (d) that
// scanDeliveredConfig reads, in its order, before data.
const deliveredCols = `d.client_id, d.kind, d.id, d.name, d.is_default, d.source, d.version_id, d.revision, d.data_hash`

// scanDeliveredConfig reads a row of deliveredCols and data, by position
// (a config is read for every client of a list); its text columns, kind,
// name, source and data_hash, are one string (texts).
func scanDeliveredConfig(row pgx.CollectableRow) (DeliveredConfig, error) {
	var s struct {
		d    DeliveredConfig
		raw  [4]pgtype.DriverBytes
		dest [10]any // in the row's block: no allocation of their own
	}
	d, t := &s.d, &s.raw
	s.dest = [10]any{&d.ClientID, &t[0], &d.ID, &t[1], &d.IsDefault, &t[2], &d.VersionID, &d.Revision, &t[3], &d.Data}
	if err := row.Scan(s.dest[:]...); err != nil {
		return DeliveredConfig{}, err
	}
	var text [4]string
	texts(s.raw[:], text[:])
	out := s.d
	out.Kind, out.Name, out.Source, out.DataHash = text[0], text[1], text[2], text[3]
	return out, nil
}

// ClientDelivery is what a client gets at check-in: the published version
// of its public and of its automator (schedule) config, each nil when
// none applies. Credentials are the data owner's stored service
// credentials of the services the public config names (passwords sealed;
// see WithSecrets).
type ClientDelivery struct {
	Public, Automator *DeliveredConfig
	Credentials       []ServiceCredential
}

// DeliveredConfigsForClient answers what the data owner's client gets at
// check-in: only published versions, the client's own assignment first,
// then its client groups' (the latest assigned), then the data owner's
// default of the kind; nothing for a client whose configs are not managed.
// The client API's check-in calls it (ETag over Revision/DataHash).
func (s *Store) DeliveredConfigsForClient(ctx context.Context, ownerID, clientID int64) (ClientDelivery, error) {
	var b Batch
	var out ClientDelivery
	var readErr error
	QueueDeliveredConfigs(&b, ownerID, clientID, &out, func(err error) { readErr = err })
	if err := s.Send(ctx, &b); err != nil {
		return ClientDelivery{}, err
	}
	return out, readErr
}

// QueueDeliveredConfigs queues to b the reads of DeliveredConfigsForClient
// (the configs and the credentials the public one names, in the same
// round trip as the rest of b): out is filled and done called when b is
// sent.
func QueueDeliveredConfigs(b *Batch, ownerID, clientID int64, out *ClientDelivery, done func(error)) {
	var errs []error
	q := deliveredToClients + `SELECT ` + deliveredCols + `, v.data FROM delivered d JOIN config_versions v ON v.id = d.version_id`
	Queue(b, Read[DeliveredConfig]{step: "load delivery", sql: q, args: []any{ownerID, []int64{clientID}},
		scan: scanDeliveredConfig}, func(ds []DeliveredConfig, err error) {
		errs = append(errs, err)
		for i := range ds {
			if ds[i].Kind == ConfigPublic {
				out.Public = &ds[i]
			} else {
				out.Automator = &ds[i]
			}
		}
	})
	credQ := deliveredToClients + `SELECT ` + credentialCols + ` FROM service_credentials
		WHERE data_owner_id = $1 AND service IN (SELECT jsonb_object_keys(coalesce(v.data->'credentials', '{}'))
			FROM delivered d JOIN config_versions v ON v.id = d.version_id WHERE d.kind = 'public') ORDER BY service, id`
	Queue(b, Read[ServiceCredential]{step: "load delivered credentials", sql: credQ, args: []any{ownerID, []int64{clientID}},
		scan: pgx.RowToStructByName[ServiceCredential]}, func(cs []ServiceCredential, err error) {
		if out.Public != nil {
			out.Credentials = cs
		}
		done(errors.Join(append(errs, err)...))
	})
}

// ConfigClient is a client that gets a config.
type ConfigClient struct {
	ConfigID   int64      `db:"config_id"`
	ID         int64      `db:"id"`
	UUID       string     `db:"uuid"`
	Label      *string    `db:"label"`
	LastSeenAt *time.Time `db:"last_seen_at"`
}

// DeliveredClientsByConfig loads the managed clients that get each of the
// data owner's configs at their next check-in, by label.
func DeliveredClientsByConfig(ownerID int64, configIDs []int64) Read[ConfigClient] {
	q := deliveredToAll + `SELECT d.id AS config_id, c.id, c.uuid::text AS uuid, c.label, c.last_seen_at
		FROM delivered d JOIN clients c ON c.id = d.client_id
		WHERE d.id = ANY($2) ORDER BY d.id, c.label NULLS LAST, c.id`
	return Read[ConfigClient]{step: "load delivered clients", sql: q, args: []any{ownerID, configIDs},
		scan: pgx.RowToStructByName[ConfigClient]}
}

// ScheduleConfigRef is a schedule (automator) config that runs studies of
// a public config.
type ScheduleConfigRef struct {
	PublicConfigID    int64    `db:"public_config_id"`
	ID                int64    `db:"id"`
	Name              string   `db:"name"`
	IsDefault         bool     `db:"is_default"`
	DraftRevision     *int64   `db:"draft_revision"`
	PublishedRevision *int64   `db:"published_revision"`
	StudyIDs          []string `db:"study_ids"`
}

// ScheduleConfigsByPublic loads, per public config, the data owner's
// schedule configs whose current version (published, else draft) names
// one of the studies of the public config's draft or published version.
func ScheduleConfigsByPublic(ownerID int64, publicIDs []int64) Read[ScheduleConfigRef] {
	const q = `WITH studies AS (
			SELECT DISTINCT v.config_id AS public_config_id, d.study_id
			FROM config_versions v
			JOIN measurement_configs m ON m.id = v.config_id AND m.data_owner_id = $1 AND m.kind = 'public'
			JOIN config_version_studies s ON s.config_version_id = v.id
			JOIN study_description_versions dv ON dv.id = s.study_description_version_id
			JOIN study_descriptions d ON d.id = dv.study_description_id
			WHERE v.config_id = ANY($2) AND v.state IN ('draft', 'published')),
		schedules AS (
			SELECT m.id, m.name, m.is_default, dr.revision::bigint AS draft_revision, p.revision::bigint AS published_revision,
				array(SELECT DISTINCT x FROM jsonb_array_elements(coalesce(p.data, dr.data)->'studySchedules') e,
					jsonb_array_elements_text(e->'studyIds') x ORDER BY x) AS study_ids
			FROM measurement_configs m
			LEFT JOIN config_versions dr ON dr.config_id = m.id AND dr.state = 'draft'
			LEFT JOIN config_versions p ON p.config_id = m.id AND p.state = 'published'
			WHERE m.data_owner_id = $1 AND m.kind = 'automator')
		SELECT DISTINCT st.public_config_id, sc.id, sc.name, sc.is_default, sc.draft_revision, sc.published_revision, sc.study_ids
		FROM studies st JOIN schedules sc ON st.study_id = ANY(sc.study_ids)
		ORDER BY st.public_config_id, sc.name, sc.id`
	return Read[ScheduleConfigRef]{step: "load schedule configs", sql: q, args: []any{ownerID, publicIDs},
		scan: pgx.RowToStructByName[ScheduleConfigRef]}
}

// ConfigWarning is one warning about a config's current version (the
// draft, else the published one).
type ConfigWarning struct {
	ConfigID int64  `db:"config_id"`
	Message  string `db:"message"`
}

// ConfigWarnings loads the warnings of the data owner's configs: service
// credentials the data names that the data owner has not stored, studies
// saved at an older revision than their description's newest, schedules
// naming studies no public config defines, and configs without a
// published version.
func ConfigWarnings(ownerID int64, configIDs []int64) Read[ConfigWarning] {
	const q = `WITH cur AS (
			SELECT DISTINCT ON (v.config_id) v.config_id, v.id, v.state, v.data, m.kind
			FROM config_versions v JOIN measurement_configs m ON m.id = v.config_id AND m.data_owner_id = $1
			WHERE v.config_id = ANY($2) AND v.state IN ('draft', 'published')
			ORDER BY v.config_id, v.state = 'draft' DESC)
		SELECT config_id, message FROM (
			SELECT m.id AS config_id, 0 AS ord, 'no published version: probes do not get this config until it is published' AS message
			FROM measurement_configs m WHERE m.data_owner_id = $1 AND m.id = ANY($2)
				AND NOT EXISTS (SELECT 1 FROM config_versions p WHERE p.config_id = m.id AND p.state = 'published')
			UNION ALL
			SELECT cur.config_id, 1, format('credentials.%s: no service credential for service "%s" is stored; probes get none for it (POST /service_credentials)', k, k)
			FROM cur, jsonb_object_keys(CASE WHEN jsonb_typeof(cur.data->'credentials') = 'object' THEN cur.data->'credentials' ELSE '{}' END) k
			WHERE cur.kind = 'public' AND NOT EXISTS (SELECT 1 FROM service_credentials sc WHERE sc.data_owner_id = $1 AND sc.service = k)
			UNION ALL
			SELECT cur.config_id, 2, format('studies.%s: revision %s of study "%s" is newer than the revision %s this %s version uses',
				s.position, l.revision, d.study_id, dv.revision, cur.state)
			FROM cur JOIN config_version_studies s ON s.config_version_id = cur.id
			JOIN study_description_versions dv ON dv.id = s.study_description_version_id
			JOIN study_descriptions d ON d.id = dv.study_description_id
			JOIN LATERAL (SELECT max(x.revision) AS revision FROM study_description_versions x WHERE x.study_description_id = d.id) l
				ON l.revision > dv.revision
			UNION ALL
			SELECT DISTINCT cur.config_id, 3, format('studySchedules: study "%s" is defined by no public config', x)
			FROM cur, jsonb_array_elements(cur.data->'studySchedules') e, jsonb_array_elements_text(e->'studyIds') x
			WHERE cur.kind = 'automator' AND NOT EXISTS (SELECT 1 FROM study_descriptions d WHERE d.data_owner_id = $1 AND d.study_id = x)
		) w ORDER BY config_id, ord, message`
	return Read[ConfigWarning]{step: "load config warnings", sql: q, args: []any{ownerID, configIDs},
		scan: pgx.RowToStructByName[ConfigWarning]}
}

// ConfigInput is a config's own fields; nil leaves a field alone on update.
type ConfigInput struct {
	Kind                      string
	Name                      *string
	Description, ImportSource *string
	ClearDescription          bool
	// IsDefault makes the config the default of its kind (the previous
	// default stops being one); false changes nothing on update.
	IsDefault bool
	// Publish makes the draft the published version in the same transaction.
	Publish bool
}

// StudyInput is a study of a public config document, as its study
// description stores it.
type StudyInput struct {
	StudyID, Name, Type, Subject string
	InternalID                   *string
	Data                         []byte // the study object, canonical JSON
	Hash                         string
}

// VersionInput is a version's content: the document (canonical JSON) with
// its digest, and for public configs its studies.
type VersionInput struct {
	Data    []byte
	Hash    string
	Studies []StudyInput
}

// BuildVersion makes a version's content once its revision is known (the
// document carries its revision).
type BuildVersion func(revision int64) (VersionInput, error)

// StudyAction is what saving a version did to the description of one of
// its studies: created (new study id), updated (a new revision) or
// unchanged (the same content as its newest revision).
type StudyAction struct {
	StudyID                   string
	Action                    string
	StudyDescriptionID        int64
	Name                      string
	StudyDescriptionVersionID int64
	Revision                  int64
	FromRevision              *int64
}

// CreateConfig inserts a config of the data owner and, when build is not
// nil, its first draft (revision 1), in one transaction; as the default of
// its kind it takes over from the previous default.
func (s *Store) CreateConfig(ctx context.Context, ownerID int64, userID *int64, in ConfigInput, build BuildVersion) (int64, []StudyAction, error) {
	var id int64
	var actions []StudyAction
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if in.IsDefault {
			if err := clearDefault(ctx, tx, ownerID, in.Kind); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `INSERT INTO measurement_configs (data_owner_id, kind, name, description, import_source, is_default)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, ownerID, in.Kind, in.Name, in.Description, in.ImportSource,
			in.IsDefault).Scan(&id); err != nil {
			return mapErr("insert config", err)
		}
		var err error
		if build != nil {
			if actions, err = saveDraft(ctx, tx, ownerID, id, userID, build); err != nil {
				return err
			}
		}
		if in.Publish {
			return publishDraft(ctx, tx, userID, id)
		}
		return nil
	})
	return id, actions, err
}

// UpdateConfig writes the config's fields that in sets and, when build is
// not nil, saves its draft: the existing draft keeps its revision, a new
// draft gets the revision after the config's newest.
func (s *Store) UpdateConfig(ctx context.Context, ownerID int64, userID *int64, id int64, in ConfigInput, build BuildVersion) ([]StudyAction, error) {
	var actions []StudyAction
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE measurement_configs SET name = coalesce($4, name),
			description = CASE WHEN $5 THEN NULL ELSE coalesce($6, description) END,
			import_source = coalesce($7, import_source), updated_at = now()
			WHERE data_owner_id = $1 AND kind = $2 AND id = $3`,
			ownerID, in.Kind, id, in.Name, in.ClearDescription, in.Description, in.ImportSource)
		if err != nil {
			return mapErr("update config", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if in.IsDefault {
			if err := clearDefault(ctx, tx, ownerID, in.Kind); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE measurement_configs SET is_default = true WHERE id = $1`, id); err != nil {
				return mapErr("set default config", err)
			}
		}
		if build != nil {
			if actions, err = saveDraft(ctx, tx, ownerID, id, userID, build); err != nil {
				return err
			}
		}
		if in.Publish {
			return publishDraft(ctx, tx, userID, id)
		}
		return nil
	})
	return actions, err
}

// saveDraft writes the draft of config id (locked by the caller's update
// or insert) and resolves its studies to study description versions.
func saveDraft(ctx context.Context, tx pgx.Tx, ownerID, id int64, userID *int64, build BuildVersion) ([]StudyAction, error) {
	var draftID *int64
	var revision int64
	err := tx.QueryRow(ctx, `SELECT (SELECT v.id FROM config_versions v WHERE v.config_id = $1 AND v.state = 'draft'),
		coalesce((SELECT v.revision FROM config_versions v WHERE v.config_id = $1 AND v.state = 'draft'),
			(SELECT max(v.revision) FROM config_versions v WHERE v.config_id = $1), 0)::bigint`, id).Scan(&draftID, &revision)
	if err != nil {
		return nil, mapErr("read draft", err)
	}
	if draftID == nil {
		revision++
	}
	v, err := build(revision)
	if err != nil {
		return nil, err
	}
	var versionID int64
	if draftID == nil {
		err = tx.QueryRow(ctx, `INSERT INTO config_versions (config_id, revision, state, data, data_hash, created_by_id)
			VALUES ($1, $2, 'draft', $3::text::jsonb, $4, $5) RETURNING id`, id, revision, string(v.Data), v.Hash, userID).Scan(&versionID)
	} else {
		versionID = *draftID
		_, err = tx.Exec(ctx, `UPDATE config_versions SET data = $2::text::jsonb, data_hash = $3, updated_at = now()
			WHERE id = $1`, versionID, string(v.Data), v.Hash)
	}
	if err != nil {
		return nil, mapErr("save draft", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM config_version_studies WHERE config_version_id = $1`, versionID); err != nil {
		return nil, mapErr("clear draft studies", err)
	}
	// Study descriptions are locked in the order of their ids, so that
	// drafts of two configs naming the same studies cannot deadlock.
	order := make([]int, len(v.Studies))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(v.Studies[a].StudyID, v.Studies[b].StudyID) })
	actions := make([]StudyAction, len(v.Studies))
	for _, pos := range order {
		a, err := resolveStudy(ctx, tx, ownerID, v.Studies[pos])
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO config_version_studies (config_version_id, position, study_description_version_id)
			VALUES ($1, $2, $3)`, versionID, pos, a.StudyDescriptionVersionID); err != nil {
			return nil, mapErr("insert draft study", err)
		}
		actions[pos] = a
	}
	return actions, nil
}

// resolveStudy finds or makes the study description version of st: the
// newest revision when its content is the same, else a new revision.
func resolveStudy(ctx context.Context, tx pgx.Tx, ownerID int64, st StudyInput) (StudyAction, error) {
	a := StudyAction{StudyID: st.StudyID, Name: st.Name}
	// The upsert locks the description's row, so concurrent saves of the
	// same study make one revision after the other.
	if err := tx.QueryRow(ctx, `INSERT INTO study_descriptions (data_owner_id, study_id) VALUES ($1, $2)
		ON CONFLICT (data_owner_id, study_id) DO UPDATE SET study_id = EXCLUDED.study_id RETURNING id`,
		ownerID, st.StudyID).Scan(&a.StudyDescriptionID); err != nil {
		return a, mapErr("upsert study description", err)
	}
	var latestID, latestRev *int64
	var latestHash *string
	err := tx.QueryRow(ctx, `SELECT id, revision::bigint, data_hash FROM study_description_versions
		WHERE study_description_id = $1 ORDER BY revision DESC LIMIT 1`, a.StudyDescriptionID).Scan(&latestID, &latestRev, &latestHash)
	if err != nil && err != pgx.ErrNoRows {
		return a, mapErr("read study description", err)
	}
	if latestHash != nil && *latestHash == st.Hash {
		a.Action, a.StudyDescriptionVersionID, a.Revision, a.FromRevision = "unchanged", *latestID, *latestRev, latestRev
		return a, nil
	}
	a.Action, a.Revision = "created", 1
	if latestRev != nil {
		a.Action, a.Revision, a.FromRevision = "updated", *latestRev+1, latestRev
	}
	err = tx.QueryRow(ctx, `INSERT INTO study_description_versions (study_description_id, revision, name, study_type,
		subject, internal_id, data, data_hash) VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8) RETURNING id`,
		a.StudyDescriptionID, a.Revision, st.Name, st.Type, st.Subject, st.InternalID, string(st.Data), st.Hash).
		Scan(&a.StudyDescriptionVersionID)
	return a, mapErr("insert study description version", err)
}

// ErrNoDraft: publish or discard of a config without a draft.
var ErrNoDraft = apierr.Errorf(apierr.ErrConflict, "the config has no draft version: save a draft (its data) first")

// PublishConfig makes the config's draft its published version (the
// previous published version becomes superseded history).
func (s *Store) PublishConfig(ctx context.Context, ownerID int64, userID *int64, kind string, id int64) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockConfig(ctx, tx, ownerID, kind, id); err != nil {
			return err
		}
		return publishDraft(ctx, tx, userID, id)
	})
}

// publishDraft publishes the draft of config id (locked by the caller).
func publishDraft(ctx context.Context, tx pgx.Tx, userID *int64, id int64) error {
	if _, err := tx.Exec(ctx, `UPDATE config_versions SET state = 'superseded'
		WHERE config_id = $1 AND state = 'published' AND EXISTS (SELECT 1 FROM config_versions d
			WHERE d.config_id = $1 AND d.state = 'draft')`, id); err != nil {
		return mapErr("supersede published version", err)
	}
	tag, err := tx.Exec(ctx, `UPDATE config_versions SET state = 'published', published_at = now(),
		published_by_id = $2, updated_at = now() WHERE config_id = $1 AND state = 'draft'`, id, userID)
	if err != nil {
		return mapErr("publish draft", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNoDraft
	}
	return touchConfig(ctx, tx, id)
}

// DiscardDraft deletes the config's draft version.
func (s *Store) DiscardDraft(ctx context.Context, ownerID int64, kind string, id int64) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockConfig(ctx, tx, ownerID, kind, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM config_versions WHERE config_id = $1 AND state = 'draft'`, id)
		if err != nil {
			return mapErr("discard draft", err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNoDraft
		}
		return touchConfig(ctx, tx, id)
	})
}

// SetDefaultConfig makes the config the data owner's default of its kind
// (the previous default stops being one), or, with isDefault false, no
// longer the default.
func (s *Store) SetDefaultConfig(ctx context.Context, ownerID int64, kind string, id int64, isDefault bool) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockConfig(ctx, tx, ownerID, kind, id); err != nil {
			return err
		}
		if isDefault {
			if err := clearDefault(ctx, tx, ownerID, kind); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE measurement_configs SET is_default = $2, updated_at = now() WHERE id = $1`, id, isDefault)
		return mapErr("set default config", err)
	})
}

// DeleteConfig removes a config; its clients and groups fall back to the
// next config of the delivery rule.
func (s *Store) DeleteConfig(ctx context.Context, ownerID int64, kind string, id int64) error {
	defer s.probes.changed() // clients' config ids (cached with their probes) go null
	tag, err := s.pool.Exec(ctx, `DELETE FROM measurement_configs WHERE data_owner_id = $1 AND kind = $2 AND id = $3`,
		ownerID, kind, id)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return mapErr("delete config", err)
}

// ConfigAssignment names the clients and client groups of an assignment.
type ConfigAssignment struct {
	ClientIDs, ClientGroupIDs []int64
}

// AssignConfig assigns the config to the data owner's clients (their own
// assignment) and client groups (the group's, one per kind), or with
// assign false removes it from those of them that have it. Every id must
// name one of the data owner's clients or groups: else nothing changes
// and the answer is a 404 naming the ids.
func (s *Store) AssignConfig(ctx context.Context, ownerID int64, kind string, id int64, a ConfigAssignment, assign bool) error {
	defer s.probes.changed() // after the commit: config ids are cached with the probes
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockConfig(ctx, tx, ownerID, kind, id); err != nil {
			return err
		}
		if err := ownedIDs(ctx, tx, "clients", `SELECT array(SELECT x FROM unnest($2::bigint[]) x
			WHERE NOT EXISTS (SELECT 1 FROM clients c WHERE c.data_owner_id = $1 AND c.id = x) ORDER BY x)`, ownerID, a.ClientIDs); err != nil {
			return err
		}
		if err := ownedIDs(ctx, tx, "client groups", `SELECT array(SELECT x FROM unnest($2::bigint[]) x
			WHERE NOT EXISTS (SELECT 1 FROM client_groups g WHERE g.data_owner_id = $1 AND g.id = x) ORDER BY x)`, ownerID, a.ClientGroupIDs); err != nil {
			return err
		}
		// Clients are locked in the order of their ids (concurrent
		// assignments of overlapping clients wait instead of deadlocking).
		if _, err := tx.Exec(ctx, `SELECT id FROM clients WHERE data_owner_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`,
			ownerID, a.ClientIDs); err != nil {
			return mapErr("lock clients", err)
		}
		var target *int64
		if assign {
			target = &id
		}
		// The kind picks the column; an unassign only clears this config.
		if _, err := tx.Exec(ctx, `UPDATE clients SET
			public_config_id = CASE WHEN $3 = 'public' THEN $4 ELSE public_config_id END,
			automator_config_id = CASE WHEN $3 = 'automator' THEN $4 ELSE automator_config_id END, updated_at = now()
			WHERE data_owner_id = $1 AND id = ANY($2)
				AND ($4::bigint IS NOT NULL OR (CASE WHEN $3 = 'public' THEN public_config_id ELSE automator_config_id END) = $5)`,
			ownerID, a.ClientIDs, kind, target, id); err != nil {
			return mapErr("assign config to clients", err)
		}
		var err error
		if assign {
			_, err = tx.Exec(ctx, `INSERT INTO client_group_configs (client_group_id, kind, config_id)
				SELECT g.id, $3, $4 FROM client_groups g WHERE g.data_owner_id = $1 AND g.id = ANY($2) ORDER BY g.id
				ON CONFLICT (client_group_id, kind) DO UPDATE SET config_id = EXCLUDED.config_id, assigned_at = now()`,
				ownerID, a.ClientGroupIDs, kind, id)
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM client_group_configs gc USING client_groups g
				WHERE g.id = gc.client_group_id AND g.data_owner_id = $1 AND gc.client_group_id = ANY($2) AND gc.config_id = $3`,
				ownerID, a.ClientGroupIDs, id)
		}
		if err != nil {
			return mapErr("assign config to client groups", err)
		}
		return touchConfig(ctx, tx, id)
	})
}

// ownedIDs refuses ids that the query ($1 owner, $2 ids) lists as not the
// data owner's.
func ownedIDs(ctx context.Context, tx pgx.Tx, what, q string, ownerID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var missing []int64
	if err := tx.QueryRow(ctx, q, ownerID, ids).Scan(&missing); err != nil {
		return mapErr("check "+what, err)
	}
	if len(missing) > 0 {
		return apierr.Errorf(apierr.ErrNotFound, "%s not found: %v", what, missing)
	}
	return nil
}

// ConfigGroup is a client group a config is assigned to.
type ConfigGroup struct {
	ConfigID int64  `db:"config_id"`
	ID       int64  `db:"id"`
	Name     string `db:"name"`
}

// GroupsByConfig loads the data owner's client groups each config is
// assigned to, by name.
func GroupsByConfig(ownerID int64, configIDs []int64) Read[ConfigGroup] {
	const q = `SELECT gc.config_id, g.id, g.name FROM client_group_configs gc
		JOIN client_groups g ON g.id = gc.client_group_id AND g.data_owner_id = $1
		WHERE gc.config_id = ANY($2) ORDER BY gc.config_id, g.name, g.id`
	return Read[ConfigGroup]{step: "load config groups", sql: q, args: []any{ownerID, configIDs},
		scan: pgx.RowToStructByName[ConfigGroup]}
}

// lockConfig locks the data owner's config of kind for the transaction.
func lockConfig(ctx context.Context, tx pgx.Tx, ownerID int64, kind string, id int64) error {
	var got int64
	err := tx.QueryRow(ctx, `SELECT id FROM measurement_configs WHERE data_owner_id = $1 AND kind = $2 AND id = $3 FOR UPDATE`,
		ownerID, kind, id).Scan(&got)
	return mapErr("lock config", err)
}

// clearDefault makes no config of kind the data owner's default.
func clearDefault(ctx context.Context, tx pgx.Tx, ownerID int64, kind string) error {
	_, err := tx.Exec(ctx, `UPDATE measurement_configs SET is_default = false, updated_at = now()
		WHERE data_owner_id = $1 AND kind = $2 AND is_default`, ownerID, kind)
	return mapErr("clear default config", err)
}

func touchConfig(ctx context.Context, tx pgx.Tx, id int64) error {
	_, err := tx.Exec(ctx, `UPDATE measurement_configs SET updated_at = now() WHERE id = $1`, id)
	return mapErr("touch config", err)
}

// WithSecrets is the public config's document as a probe gets it: each
// entry of its credentials object filled in with the username and the
// password (unsealed by open) of the data owner's stored service
// credential of that service (the first by id when several are stored).
// Services without a stored credential keep their entry as it is. Only the
// client API may send the result, and only to the probe it is for.
func (d ClientDelivery) WithSecrets(open func(sealed []byte) (string, error)) ([]byte, error) {
	if d.Public == nil {
		return nil, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(d.Public.Data, &doc); err != nil {
		return nil, fmt.Errorf("decode delivered config: %w", err)
	}
	creds, _ := doc["credentials"].(map[string]any)
	done := map[string]bool{}
	for _, c := range d.Credentials {
		entry, ok := creds[c.Service].(map[string]any)
		if !ok || done[c.Service] {
			continue
		}
		done[c.Service] = true
		if c.Username != nil {
			entry["username"] = *c.Username
		}
		if c.SealedPassword != nil {
			pw, err := open(c.SealedPassword)
			if err != nil {
				return nil, fmt.Errorf("unseal credential %d: %w", c.ID, err)
			}
			entry["password"] = pw
		}
	}
	return json.Marshal(doc)
}
