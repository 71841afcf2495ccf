package main

import (
	"strconv"
	"strings"
	"time"
)

// clientsSQL reads, for the data owner of the client_admin key with digest
// $1 (the key check folded in: no row when the key is not valid), the owner's
// offline threshold and detection switch and the clients it sees (its own
// and those shared with it) that filter picks (a condition on c, constant
// text) with everything the REST shape shows; callers append the order. A shared
// client shows no config, key or contracts of its owner. The delivered
// configs follow fleetgraph's rule, computed for the picked clients at once:
// the published config of the client's own assignment, else of its groups'
// (the latest assigned first), else the data owner's default.
func clientsSQL(filter string) string {
	return strings.ReplaceAll(`WITH o AS (SELECT k.data_owner_id AS id,
		coalesce(d.offline_threshold_minutes, `+strconv.Itoa(defaultOfflineMinutes)+`) AS offline_minutes,
		d.client_offline_detection_enabled AS offline_detection
		FROM api_keys k JOIN data_owners d ON d.id = k.data_owner_id
		JOIN users u ON u.id = k.user_id AND u.data_owner_id = k.data_owner_id
		WHERE k.digest = $1 AND k.kind = 'client_admin' AND k.valid_from <= now() AND k.valid_until > now()),
	pub AS (
		SELECT m.id, m.kind, m.name, m.is_default FROM measurement_configs m
		JOIN config_versions p ON p.config_id = m.id AND p.state = 'published' WHERE m.data_owner_id = $owner),
	grp AS (
		SELECT DISTINCT ON (gm.client_id, gc.kind) gm.client_id, gc.kind, gc.config_id
		FROM client_group_configs gc JOIN client_groups g ON g.id = gc.client_group_id AND g.data_owner_id = $owner
		JOIN pub ON pub.id = gc.config_id JOIN client_group_members gm ON gm.client_group_id = gc.client_group_id
		ORDER BY gm.client_id, gc.kind, gc.assigned_at DESC, gc.config_id),
	delivered AS (
		SELECT x.client_id, x.kind, d.id, d.name, d.is_default
		FROM (SELECT c.id AS client_id, k.kind, coalesce(own.id, grp.config_id, def.id) AS config_id
			FROM clients c CROSS JOIN (VALUES ('public'), ('automator')) k(kind)
			LEFT JOIN pub own ON own.kind = k.kind
				AND own.id = CASE k.kind WHEN 'public' THEN c.public_config_id ELSE c.automator_config_id END
			LEFT JOIN grp ON grp.client_id = c.id AND grp.kind = k.kind
			LEFT JOIN pub def ON def.kind = k.kind AND def.is_default
			WHERE c.data_owner_id = $owner AND c.config_managed AND `+filter+` OFFSET 0) x
		JOIN pub d ON d.id = x.config_id)
	SELECT (SELECT offline_minutes FROM o), (SELECT offline_detection FROM o), c.id, c.uuid::text, c.type, c.data_owner_id <> $owner, c.label, c.extra_label, c.tags,
	c.created_at, c.updated_at, c.disabled_at, c.disabled_reason, c.last_measurement_at, c.last_seen_at,
	c.last_client_type, c.last_client_version, c.config_managed, c.public_config_id, c.automator_config_id,
	c.anomalies_muted, c.offline_notifications_muted, c.system_health_notifications_muted,
	pc.id, pc.name, pc.is_default, ac.id, ac.name, ac.is_default,
	k.id, k.registration_key, k.comment, k.valid_from, k.valid_until, k.num_registrations_left, k.usage_limit_days,
	coalesce(g.ids, '{}'), coalesce(g.names, '{}'),
	ct.id, ct.isp_id, ct.upload_speed, ct.download_speed, ct.monthly_price, ct.currency, ct.assumed_tariff,
	ct.connection_type, ct.name, ct.valid_from, ct.valid_until, ct.isp_name
	FROM clients c
	LEFT JOIN delivered pc ON pc.client_id = c.id AND pc.kind = 'public'
	LEFT JOIN delivered ac ON ac.client_id = c.id AND ac.kind = 'automator'
	LEFT JOIN registration_keys k ON k.id = c.registration_key_id AND k.data_owner_id = $owner AND c.data_owner_id = $owner
	LEFT JOIN LATERAL (SELECT array_agg(g.id ORDER BY g.name, g.id) AS ids, array_agg(g.name ORDER BY g.name, g.id) AS names
		FROM client_group_members m JOIN client_groups g ON g.id = m.client_group_id
		WHERE m.client_id = c.id AND g.data_owner_id = $owner) g ON true
	LEFT JOIN LATERAL (SELECT k.id, k.isp_id, k.upload_speed, k.download_speed, k.monthly_price::float8 AS monthly_price,
		k.currency, k.assumed_tariff, k.connection_type, k.name, k.valid_from, k.valid_until, i.name AS isp_name
		FROM isp_contracts k JOIN isps i ON i.id = k.isp_id
		WHERE k.data_owner_id = $owner AND k.client_id = c.id
		AND (k.valid_from IS NULL OR k.valid_from <= now()) AND (k.valid_until IS NULL OR k.valid_until > now())
		ORDER BY k.valid_from DESC NULLS LAST, k.id DESC LIMIT 1) ct ON true
	WHERE (c.data_owner_id = $owner OR EXISTS (SELECT 1 FROM client_shares s WHERE s.client_id = c.id AND s.data_owner_id = $owner))
		AND `+filter, "$owner", "(SELECT id FROM o)")
}

// clientRow is one row of clientsSQL.
type clientRow struct {
	owner                             owner
	c                                 client
	shared, configManaged             bool
	publicConfigID, automatorConfigID *int64
	pcID, acID                        *int64
	pcName, acName                    *string
	pcDefault, acDefault              *bool
	key                               registrationKey
	keyID                             *int64
	keyValidFrom                      *time.Time
	keyName                           *string
	keyLeft                           *int64
	groupIDs                          []int64
	groupNames                        []string
	contract                          contract
	contractID, contractIspID         *int64
	contractName, contractIspName     *string
}

func (r *clientRow) dest() []any {
	c, k, ct := &r.c, &r.key, &r.contract
	return []any{&r.owner.offlineMinutes, &r.owner.offlineDetection, &c.ID, &c.UUID, &c.Type, &r.shared, &c.Label, &c.ExtraLabel, &c.Tags,
		&c.CreatedAt, &c.UpdatedAt, &c.DisabledAt, &c.DisabledReason, &c.LastMeasurementAt, &c.LastSeenAt,
		&c.LastClientType, &c.LastClientVersion, &r.configManaged, &r.publicConfigID, &r.automatorConfigID,
		&c.AnomaliesMuted, &c.OfflineNotificationsMuted, &c.SystemHealthNotificationsMuted,
		&r.pcID, &r.pcName, &r.pcDefault, &r.acID, &r.acName, &r.acDefault,
		&r.keyID, &r.keyName, &k.Comment, &r.keyValidFrom, &k.ValidUntil, &r.keyLeft, &k.UsageLimitDays,
		&r.groupIDs, &r.groupNames,
		&r.contractID, &r.contractIspID, &ct.UploadSpeed, &ct.DownloadSpeed, &ct.MonthlyPrice, &ct.Currency,
		&ct.AssumedTariff, &ct.ConnectionType, &r.contractName, &ct.ValidFrom, &ct.ValidUntil, &r.contractIspName}
}

// client shapes the row as the REST API shows it at now (offline only
// while the data owner's offline detection is on).
func (r *clientRow) client(now time.Time, o owner) client {
	c := r.c
	c.row = r
	c.AccessLevel = "owner"
	if r.shared {
		c.AccessLevel = "shared"
	} else {
		c.ConfigManaged = &r.configManaged
	}
	c.DeliveredPublicConfig = configOf(r.pcID, r.pcName, r.pcDefault)
	c.DeliveredAutomatorConfig = configOf(r.acID, r.acName, r.acDefault)
	if c.LastSeenAt != nil && o.offlineDetection {
		off := now.Sub(*c.LastSeenAt) > time.Duration(o.offlineMinutes)*time.Minute
		c.Offline = &off
	}
	if r.keyID != nil {
		k := r.key
		k.ID, k.RegistrationKey, k.ValidFrom, k.NumRegistrationsLeft = *r.keyID, *r.keyName, *r.keyValidFrom, *r.keyLeft
		c.RegistrationKey = &k
	}
	c.ClientGroups = make([]group, len(r.groupIDs))
	for i, id := range r.groupIDs {
		c.ClientGroups[i] = group{ID: id, Name: r.groupNames[i]}
	}
	if r.contractID != nil {
		ct := r.contract
		ct.ID, ct.IspID, ct.ClientID, ct.Name, ct.IspName = *r.contractID, *r.contractIspID, c.ID, *r.contractName, *r.contractIspName
		c.CurrentIspContract = &ct
	}
	return c
}

func configOf(id *int64, name *string, isDefault *bool) *configRef {
	if id == nil {
		return nil
	}
	return &configRef{ID: *id, Name: *name, IsDefault: *isDefault}
}

// client is the REST shape of a client (rest/ops/fragments.graphql,
// ClientFields), field for field in the same order.
type client struct {
	ID                             int64            `json:"id"`
	UUID                           string           `json:"uuid"`
	Type                           string           `json:"type"`
	AccessLevel                    string           `json:"access_level"`
	Label                          *string          `json:"label"`
	ExtraLabel                     *string          `json:"extra_label"`
	Tags                           []string         `json:"tags"`
	CreatedAt                      time.Time        `json:"created_at"`
	UpdatedAt                      time.Time        `json:"updated_at"`
	DisabledAt                     *time.Time       `json:"disabled_at"`
	DisabledReason                 *string          `json:"disabled_reason"`
	LastMeasurementAt              *time.Time       `json:"last_measurement_at"`
	LastSeenAt                     *time.Time       `json:"last_seen_at"`
	LastClientType                 *string          `json:"last_client_type"`
	LastClientVersion              *string          `json:"last_client_version"`
	ConfigManaged                  *bool            `json:"config_managed"`
	DeliveredPublicConfig          *configRef       `json:"delivered_public_config"`
	DeliveredAutomatorConfig       *configRef       `json:"delivered_automator_config"`
	Offline                        *bool            `json:"offline"`
	AnomaliesMuted                 bool             `json:"anomalies_muted"`
	OfflineNotificationsMuted      bool             `json:"offline_notifications_muted"`
	SystemHealthNotificationsMuted bool             `json:"system_health_notifications_muted"`
	RegistrationKey                *registrationKey `json:"registration_key"`
	ClientGroups                   []group          `json:"client_groups"`
	CurrentIspContract             *contract        `json:"current_isp_contract"`
	Configuration                  *configuration   `json:"configuration,omitempty"`
	row                            *clientRow
}

type configRef struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	IsDefault bool   `json:"is_default"`
}

type registrationKey struct {
	ID                   int64      `json:"id"`
	RegistrationKey      string     `json:"registration_key"`
	Comment              *string    `json:"comment"`
	ValidFrom            time.Time  `json:"valid_from"`
	ValidUntil           *time.Time `json:"valid_until"`
	NumRegistrationsLeft int64      `json:"num_registrations_left"`
	UsageLimitDays       *int64     `json:"usage_limit_days"`
}

type group struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type contract struct {
	ID             int64      `json:"id"`
	IspID          int64      `json:"isp_id"`
	ClientID       int64      `json:"client_id"`
	UploadSpeed    *int64     `json:"upload_speed"`
	DownloadSpeed  *int64     `json:"download_speed"`
	MonthlyPrice   *gqlFloat  `json:"monthly_price"`
	Currency       *string    `json:"currency"`
	AssumedTariff  *string    `json:"assumed_tariff"`
	ConnectionType *string    `json:"connection_type"`
	Name           string     `json:"name"`
	ValidFrom      *time.Time `json:"valid_from"`
	ValidUntil     *time.Time `json:"valid_until"`
	IspName        string     `json:"isp_name"`
}

type configuration struct {
	Managed           bool   `json:"managed"`
	PublicConfigID    *int64 `json:"public_config_id"`
	AutomatorConfigID *int64 `json:"automator_config_id"`
}

// gqlFloat writes a float as gqlgen's Float does (%g).
type gqlFloat float64

func (f gqlFloat) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}
