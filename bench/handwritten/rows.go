package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
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
	offlineMinutes                                           int64
	offlineDetection                                         bool
	id                                                       int64
	uuid, typ                                                string
	shared, configManaged                                    bool
	label, extraLabel, disabledReason, lastType, lastVersion pgtype.Text
	tags                                                     []string
	createdAt, updatedAt                                     time.Time
	disabledAt, lastMeasurementAt, lastSeenAt                pgtype.Timestamptz
	publicConfigID, automatorConfigID                        pgtype.Int8
	anomaliesMuted, offlineMuted, healthMuted                bool
	pcID, acID                                               pgtype.Int8
	pcName, acName                                           pgtype.Text
	pcDefault, acDefault                                     pgtype.Bool
	keyID, keyLeft, keyDays                                  pgtype.Int8
	keyName, keyComment                                      pgtype.Text
	keyValidFrom, keyValidUntil                              pgtype.Timestamptz
	groupIDs                                                 []int64
	groupNames                                               []string
	ctID, ctIspID, ctUp, ctDown                              pgtype.Int8
	ctPrice                                                  pgtype.Float8
	ctCurrency, ctTariff, ctConnection, ctName, ctIspName    pgtype.Text
	ctValidFrom, ctValidUntil                                pgtype.Timestamptz
}

func (r *clientRow) dest() []any {
	return []any{&r.offlineMinutes, &r.offlineDetection, &r.id, &r.uuid, &r.typ, &r.shared, &r.label, &r.extraLabel, &r.tags,
		&r.createdAt, &r.updatedAt, &r.disabledAt, &r.disabledReason, &r.lastMeasurementAt, &r.lastSeenAt,
		&r.lastType, &r.lastVersion, &r.configManaged, &r.publicConfigID, &r.automatorConfigID,
		&r.anomaliesMuted, &r.offlineMuted, &r.healthMuted,
		&r.pcID, &r.pcName, &r.pcDefault, &r.acID, &r.acName, &r.acDefault,
		&r.keyID, &r.keyName, &r.keyComment, &r.keyValidFrom, &r.keyValidUntil, &r.keyLeft, &r.keyDays,
		&r.groupIDs, &r.groupNames,
		&r.ctID, &r.ctIspID, &r.ctUp, &r.ctDown, &r.ctPrice, &r.ctCurrency,
		&r.ctTariff, &r.ctConnection, &r.ctName, &r.ctValidFrom, &r.ctValidUntil, &r.ctIspName}
}

// appendJSON writes the row's client in the REST shape
// (rest/ops/fragments.graphql, ClientFields, field for field in the same
// order) as fleetgraph does at now: offline only while the data owner's
// offline detection is on; a shared client shows no config_managed; the
// single-client route adds the configuration (withConfiguration).
func (r *clientRow) appendJSON(b []byte, now time.Time, withConfiguration bool) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.id, 10)
	b = append(b, `,"uuid":`...)
	b = appendString(b, r.uuid)
	b = append(b, `,"type":`...)
	b = appendString(b, r.typ)
	if r.shared {
		b = append(b, `,"access_level":"shared"`...)
	} else {
		b = append(b, `,"access_level":"owner"`...)
	}
	b = append(b, `,"label":`...)
	b = appendText(b, r.label)
	b = append(b, `,"extra_label":`...)
	b = appendText(b, r.extraLabel)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, r.tags)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, r.createdAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, r.updatedAt)
	b = append(b, `,"disabled_at":`...)
	b = appendTimestamptz(b, r.disabledAt)
	b = append(b, `,"disabled_reason":`...)
	b = appendText(b, r.disabledReason)
	b = append(b, `,"last_measurement_at":`...)
	b = appendTimestamptz(b, r.lastMeasurementAt)
	b = append(b, `,"last_seen_at":`...)
	b = appendTimestamptz(b, r.lastSeenAt)
	b = append(b, `,"last_client_type":`...)
	b = appendText(b, r.lastType)
	b = append(b, `,"last_client_version":`...)
	b = appendText(b, r.lastVersion)
	b = append(b, `,"config_managed":`...)
	b = appendBool(b, pgtype.Bool{Bool: r.configManaged, Valid: !r.shared})
	b = append(b, `,"delivered_public_config":`...)
	b = appendConfigRef(b, r.pcID, r.pcName, r.pcDefault)
	b = append(b, `,"delivered_automator_config":`...)
	b = appendConfigRef(b, r.acID, r.acName, r.acDefault)
	b = append(b, `,"offline":`...)
	if r.lastSeenAt.Valid && r.offlineDetection {
		b = strconv.AppendBool(b, now.Sub(r.lastSeenAt.Time) > time.Duration(r.offlineMinutes)*time.Minute)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"anomalies_muted":`...)
	b = strconv.AppendBool(b, r.anomaliesMuted)
	b = append(b, `,"offline_notifications_muted":`...)
	b = strconv.AppendBool(b, r.offlineMuted)
	b = append(b, `,"system_health_notifications_muted":`...)
	b = strconv.AppendBool(b, r.healthMuted)
	b = append(b, `,"registration_key":`...)
	if r.keyID.Valid {
		b = append(b, `{"id":`...)
		b = appendInt8(b, r.keyID)
		b = append(b, `,"registration_key":`...)
		b = appendText(b, r.keyName)
		b = append(b, `,"comment":`...)
		b = appendText(b, r.keyComment)
		b = append(b, `,"valid_from":`...)
		b = appendTimestamptz(b, r.keyValidFrom)
		b = append(b, `,"valid_until":`...)
		b = appendTimestamptz(b, r.keyValidUntil)
		b = append(b, `,"num_registrations_left":`...)
		b = appendInt8(b, r.keyLeft)
		b = append(b, `,"usage_limit_days":`...)
		b = appendInt8(b, r.keyDays)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"client_groups":`...)
	b = appendGroups(b, r.groupIDs, r.groupNames)
	b = append(b, `,"current_isp_contract":`...)
	if r.ctID.Valid {
		b = append(b, `{"id":`...)
		b = appendInt8(b, r.ctID)
		b = append(b, `,"isp_id":`...)
		b = appendInt8(b, r.ctIspID)
		b = append(b, `,"client_id":`...)
		b = strconv.AppendInt(b, r.id, 10)
		b = append(b, `,"upload_speed":`...)
		b = appendInt8(b, r.ctUp)
		b = append(b, `,"download_speed":`...)
		b = appendInt8(b, r.ctDown)
		b = append(b, `,"monthly_price":`...)
		b = appendFloat8(b, r.ctPrice)
		b = append(b, `,"currency":`...)
		b = appendText(b, r.ctCurrency)
		b = append(b, `,"assumed_tariff":`...)
		b = appendText(b, r.ctTariff)
		b = append(b, `,"connection_type":`...)
		b = appendText(b, r.ctConnection)
		b = append(b, `,"name":`...)
		b = appendText(b, r.ctName)
		b = append(b, `,"valid_from":`...)
		b = appendTimestamptz(b, r.ctValidFrom)
		b = append(b, `,"valid_until":`...)
		b = appendTimestamptz(b, r.ctValidUntil)
		b = append(b, `,"isp_name":`...)
		b = appendText(b, r.ctIspName)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	if withConfiguration {
		b = append(b, `,"configuration":{"managed":`...)
		b = strconv.AppendBool(b, r.configManaged)
		b = append(b, `,"public_config_id":`...)
		if r.shared {
			b = append(b, `null,"automator_config_id":null}`...)
		} else {
			b = appendInt8(b, r.publicConfigID)
			b = append(b, `,"automator_config_id":`...)
			b = appendInt8(b, r.automatorConfigID)
			b = append(b, '}')
		}
	}
	return append(b, '}')
}

func appendConfigRef(b []byte, id pgtype.Int8, name pgtype.Text, isDefault pgtype.Bool) []byte {
	if !id.Valid {
		return append(b, "null"...)
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id.Int64, 10)
	b = append(b, `,"name":`...)
	b = appendText(b, name)
	b = append(b, `,"is_default":`...)
	b = appendBool(b, isDefault)
	return append(b, '}')
}
