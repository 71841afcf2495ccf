package resolvers

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
)

// edges is the one declaration of every nested field that reads rows of
// its own (see edges.go): GraphQL type -> field -> edge. A new resource's
// nested field is one entry here and one attached field on its model type.
var edges = edgeTable()

func edgeTable() map[string]map[string]edge {
	return map[string]map[string]edge{
		"Client": {
			"clientGroups": {byID: true, child: "ClientGroup", children: list(func(c *model.Client) []model.ClientGroup { return c.ClientGroups }),
				load: hasMany(always(clientID), store.GroupsByClient, func(g store.ClientGroup) int64 { return g.ClientID },
					groupOf, func(c *model.Client, gs []model.ClientGroup) { c.ClientGroups = gs })},
			"ispContracts": {byID: true, child: "IspContract", children: list(func(c *model.Client) []model.IspContract { return c.IspContracts }),
				load: hasMany(always(clientID), store.ContractsByClient, func(c store.IspContract) int64 { return c.ClientID },
					contractOf, func(c *model.Client, cs []model.IspContract) {
						c.IspContracts, c.CurrentIspContract = cs, currentContract(cs)
					})},
			"currentIspContract": {shares: "ispContracts", child: "IspContract",
				children: single(func(c *model.Client) *model.IspContract { return c.CurrentIspContract })},
			"registrationKey": {byID: true, child: "RegistrationKey", children: single(func(c *model.Client) *model.RegistrationKey { return c.RegistrationKey }),
				load: loadClientKeys},
			"deliveredPublicConfig":    {byID: true, load: loadConfigs},
			"deliveredAutomatorConfig": {shares: "deliveredPublicConfig"},
			"measurements":             {load: loadMeasurementPages, child: "MeasurementConnection", children: measurementConnectionOf},
			"latestSystemStatusRecord": {load: hasOne(always(func(c *model.Client) string { return c.UUID }),
				store.LatestSystemStatusByClients, func(s store.SystemStatus) string { return *s.ClientUUID },
				systemStatusOf, func(c *model.Client, s *model.SystemStatusRecord) { c.LatestSystemStatusRecord = s })},
		},
		"ClientGroup": {
			"clients": {child: "Client", children: list(func(g *model.ClientGroup) []model.Client { return g.Clients }),
				load: hasMany(always(func(g *model.ClientGroup) int64 { return g.ID }), store.ClientsByGroup,
					func(c store.GroupClient) int64 { return c.GroupID },
					func(c store.GroupClient) model.Client { return clientOf(c.Client) },
					func(g *model.ClientGroup, cs []model.Client) { g.Clients = cs })},
		},
		"IspContract": {
			"isp": {child: "Isp", children: single(func(c *model.IspContract) *model.Isp { return c.Isp }),
				load: hasOne(always(contractIspID), store.IspsByIDs, func(i store.Isp) int64 { return i.ID },
					ispOf, func(c *model.IspContract, i *model.Isp) { c.Isp = i })},
			"client": {child: "Client", children: single(func(c *model.IspContract) *model.Client { return c.Client }),
				load: hasOne(always(contractClientID), store.ClientsByIDs, func(c store.Client) int64 { return c.ID },
					clientOf, func(c *model.IspContract, cl *model.Client) { c.Client = cl })},
			"clientUuid":  {shares: "client"},
			"clientLabel": {shares: "client"},
		},
		"Isp": {
			"ispContracts": {byID: true, child: "IspContract", children: list(func(i *model.Isp) []model.IspContract { return i.IspContracts }),
				load: hasMany(always(ispID), store.ContractsByIsp, func(c store.IspContract) int64 { return c.IspID },
					contractOf, func(i *model.Isp, cs []model.IspContract) { i.IspContracts = cs })},
			"ispContractsCount": {load: ispCounts},
			"ispDetailsCount":   {shares: "ispContractsCount"},
		},
		"Capability": {
			"registrationKeys": {child: "RegistrationKey", children: list(func(c *model.Capability) []model.RegistrationKey { return c.RegistrationKeys }),
				load: hasMany(always(capabilityID), store.RegistrationKeysByCapability,
					func(k store.RegistrationKey) int64 { return k.CapabilityID },
					registrationKeyOf, func(c *model.Capability, ks []model.RegistrationKey) { c.RegistrationKeys = ks })},
			"registrationKeysCount": {load: counts(capabilityID, store.CountRegistrationKeys,
				func(c *model.Capability, n int64) { c.RegistrationKeysCount = n })},
		},
		"RegistrationKey": {
			"capability": {child: "Capability", children: single(func(k *model.RegistrationKey) *model.Capability { return k.Capability }),
				load: hasOne(always(keyCapabilityID), store.CapabilitiesByIDs, func(c store.Capability) int64 { return c.ID },
					capabilityOf, func(k *model.RegistrationKey, c *model.Capability) { k.Capability = c })},
			"clientsCount": {load: counts(registrationKeyID, store.CountClientsByRegistrationKey,
				func(k *model.RegistrationKey, n int64) { k.ClientsCount = n })},
		},
		"MeasurementConfig": {
			"revisions": {load: loadConfigVersions},
			"draftVersion": {shares: "revisions", child: "ConfigVersion",
				children: single(func(c *model.MeasurementConfig) *model.ConfigVersion { return c.DraftVersion })},
			"publishedVersion": {shares: "revisions", child: "ConfigVersion",
				children: single(func(c *model.MeasurementConfig) *model.ConfigVersion { return c.PublishedVersion })},
			"deliveredClients": {load: hasMany(always(configID), store.DeliveredClientsByConfig,
				func(c store.ConfigClient) int64 { return c.ConfigID }, configClientOf,
				func(c *model.MeasurementConfig, cs []model.ConfigClient) {
					c.DeliveredClients, c.DeliveredClientCount = cs, int64(len(cs))
				})},
			"deliveredClientCount": {shares: "deliveredClients"},
			"clientGroups": {load: hasMany(always(configID), store.GroupsByConfig,
				func(g store.ConfigGroup) int64 { return g.ConfigID }, configGroupOf,
				func(c *model.MeasurementConfig, gs []model.ConfigClientGroup) { c.ClientGroups = gs })},
			"scheduleConfigs": {load: hasMany(publicConfigID, store.ScheduleConfigsByPublic,
				func(s store.ScheduleConfigRef) int64 { return s.PublicConfigID }, scheduleConfigRefOf,
				func(c *model.MeasurementConfig, ss []model.ScheduleConfigRef) { c.ScheduleConfigs = ss })},
			"warnings": {load: loadConfigWarnings},
		},
		"ConfigVersion": {
			"studies": {load: hasMany(always(configVersionID), store.StudiesByVersion,
				func(s store.VersionStudy) int64 { return s.ConfigVersionID }, configStudyOf,
				func(v *model.ConfigVersion, ss []model.ConfigStudy) { v.Studies = ss })},
		},
		"MeasurementConfigImport": {
			"config": {child: "MeasurementConfig",
				children: single(func(i *gqlmodel.MeasurementConfigImport) *model.MeasurementConfig { return i.Config })},
		},
		"ExportClientPage": {
			"items": {child: "Client", children: list(func(p *gqlmodel.ExportClientPage) []model.Client { return p.Items })},
		},
		"ClientConnection": {
			"edges": {child: "ClientEdge", children: list(func(c *model.ClientConnection) []model.ClientEdge { return c.Edges })},
		},
		"ClientEdge": {
			"node": {child: "Client", children: single(func(e *model.ClientEdge) *model.Client { return e.Node })},
		},
		"ClientGroupConnection": {
			"edges": {child: "ClientGroupEdge", children: list(func(c *model.ClientGroupConnection) []model.ClientGroupEdge { return c.Edges })},
		},
		"ClientGroupEdge": {
			"node": {child: "ClientGroup", children: single(func(e *model.ClientGroupEdge) *model.ClientGroup { return e.Node })},
		},
		"UserConnection": {
			"edges": {child: "UserEdge", children: list(func(c *model.UserConnection) []model.UserEdge { return c.Edges })},
		},
		"UserEdge": {
			"node": {child: "User", children: single(func(e *model.UserEdge) *model.User { return e.Node })},
		},
		"CapabilityConnection": {
			"edges": {child: "CapabilityEdge", children: list(func(c *model.CapabilityConnection) []model.CapabilityEdge { return c.Edges })},
		},
		"CapabilityEdge": {
			"node": {child: "Capability", children: single(func(e *model.CapabilityEdge) *model.Capability { return e.Node })},
		},
		"IspConnection": {
			"edges": {child: "IspEdge", children: list(func(c *model.IspConnection) []model.IspEdge { return c.Edges })},
		},
		"IspEdge": {
			"node": {child: "Isp", children: single(func(e *model.IspEdge) *model.Isp { return e.Node })},
		},
		"ClientAdminApiKeyConnection": {
			"edges": {child: "ClientAdminApiKeyEdge", children: list(func(c *model.ClientAdminAPIKeyConnection) []model.ClientAdminAPIKeyEdge { return c.Edges })},
		},
		"ClientAdminApiKeyEdge": {
			"node": {child: "ClientAdminApiKey", children: single(func(e *model.ClientAdminAPIKeyEdge) *model.ClientAdminAPIKey { return e.Node })},
		},
		"ClientAnalyticsApiKeyConnection": {
			"edges": {child: "ClientAnalyticsApiKeyEdge", children: list(func(c *model.ClientAnalyticsAPIKeyConnection) []model.ClientAnalyticsAPIKeyEdge { return c.Edges })},
		},
		"ClientAnalyticsApiKeyEdge": {
			"node": {child: "ClientAnalyticsApiKey", children: single(func(e *model.ClientAnalyticsAPIKeyEdge) *model.ClientAnalyticsAPIKey { return e.Node })},
		},
		"ExportApiKeyConnection": {
			"edges": {child: "ExportApiKeyEdge", children: list(func(c *model.ExportAPIKeyConnection) []model.ExportAPIKeyEdge { return c.Edges })},
		},
		"ExportApiKeyEdge": {
			"node": {child: "ExportApiKey", children: single(func(e *model.ExportAPIKeyEdge) *model.ExportAPIKey { return e.Node })},
		},
		"MeasurementConfigConnection": {
			"edges": {child: "MeasurementConfigEdge", children: list(func(c *model.MeasurementConfigConnection) []model.MeasurementConfigEdge { return c.Edges })},
		},
		"MeasurementConfigEdge": {
			"node": {child: "MeasurementConfig", children: single(func(e *model.MeasurementConfigEdge) *model.MeasurementConfig { return e.Node })},
		},
		"WebhookConnection": {
			"edges": {child: "WebhookEdge", children: list(func(c *model.WebhookConnection) []model.WebhookEdge { return c.Edges })},
		},
		"WebhookEdge": {
			"node": {child: "Webhook", children: single(func(e *model.WebhookEdge) *model.Webhook { return e.Node })},
		},
		"WebhookDeliveryConnection": {
			"edges": {child: "WebhookDeliveryEdge", children: list(func(c *model.WebhookDeliveryConnection) []model.WebhookDeliveryEdge { return c.Edges })},
		},
		"WebhookDeliveryEdge": {
			"node": {child: "WebhookDelivery", children: single(func(e *model.WebhookDeliveryEdge) *model.WebhookDelivery { return e.Node })},
		},
		"MeasurementConnection": {
			"edges": {child: "MeasurementEdge", children: list(func(c *model.MeasurementConnection) []model.MeasurementEdge { return c.Edges })},
		},
		"MeasurementEdge": {
			"node": {child: "Measurement", children: single(func(e *model.MeasurementEdge) *model.Measurement { return e.Node })},
		},
		"Measurement": {
			"reports":                                 {load: loadReports},
			"p1203ClientReport":                       {shares: "reports"},
			"networkPerformanceReport":                {shares: "reports"},
			"lightweightVideoPlayerPerformanceReport": {shares: "reports"},
			"client": documentClient(func(m *model.Measurement) (*model.JSON, **model.Client) { return &m.Document, &m.Client }),
		},
		"AnomalyEvent": {
			"client": documentClient(func(a *model.AnomalyEvent) (*model.JSON, **model.Client) { return &a.Document, &a.Client }),
		},
	}
}

// counts loads a per-parent count (absent keys count 0).
func counts[P any](id func(*P) int64, read readFunc[int64, store.CountByParent], set func(*P, int64)) loadFunc {
	return queued(always(id), read, func(parents []any, rows []store.CountByParent) {
		n := make(map[int64]int64, len(rows))
		for _, r := range rows {
			n[r.ParentID] = r.N
		}
		for _, p := range parents {
			set(p.(*P), n[id(p.(*P))])
		}
	})
}

// ispCounts loads the contract and detail counts of every ISP.
var ispCounts = queued(always(ispID), store.IspChildCounts, func(parents []any, rows []store.IspChildCount) {
	by := make(map[int64]store.IspChildCount, len(rows))
	for _, r := range rows {
		by[r.IspID] = r
	}
	for _, p := range parents {
		i := p.(*model.Isp)
		i.IspContractsCount, i.IspDetailsCount = by[i.ID].Contracts, by[i.ID].Details
	}
})

// loadClientKeys attaches each client's registration key, read by the
// clients' ids (so that it can be read ahead); one object per key, shared
// by the clients registered with it.
var loadClientKeys = queued(always(clientID), store.RegistrationKeysByClients, func(parents []any, rows []store.ClientRegistrationKey) {
	keys := make(map[int64]*model.RegistrationKey, len(rows))
	byClient := make(map[int64]*model.RegistrationKey, len(rows))
	for _, r := range rows {
		k := keys[r.ID]
		if k == nil {
			k = ptr(registrationKeyOf(r.RegistrationKey))
			keys[r.ID] = k
		}
		byClient[r.ClientID] = k
	}
	for _, p := range parents {
		c := p.(*model.Client)
		c.RegistrationKey = byClient[c.ID]
	}
})

// loadConfigs attaches the configs each client gets (store.deliveredFrom
// is the rule): published versions only; none for shared clients, whose
// configuration belongs to their owner, nor for unmanaged ones.
var loadConfigs = queued(always(clientID), store.DeliveredConfigsByClients, func(parents []any, rows []store.DeliveredConfig) {
	type key struct {
		client int64
		kind   string
	}
	by := make(map[key]*model.ConfigRef, len(rows))
	for _, r := range rows {
		by[key{r.ClientID, r.Kind}] = configRefOf(r)
	}
	for _, p := range parents {
		c := p.(*model.Client)
		c.DeliveredPublicConfig = by[key{c.ID, store.ConfigPublic}]
		c.DeliveredAutomatorConfig = by[key{c.ID, store.ConfigAutomator}]
	}
})

// loadReports attaches every measurement's client reports, and the latest
// of each type the report fields name.
func loadReports(ctx context.Context, q edgeQuery, parents []any) (func() error, error) {
	ids := keysOf(parents, always(func(m *model.Measurement) string { return m.ID }))
	docs, err := q.store.DocumentsByMeasurements(ctx, q.owner, store.KindClientReport, ids)
	if err != nil {
		return nil, err
	}
	by := map[string][]store.Document{}
	for _, d := range docs {
		if d.MeasurementID != nil {
			by[*d.MeasurementID] = append(by[*d.MeasurementID], d)
		}
	}
	for _, p := range parents {
		attachReports(p.(*model.Measurement), by[p.(*model.Measurement).ID])
	}
	return nil, nil
}

// attachReports sets a measurement's reports (oldest first) and, per
// report type, the latest of that type.
func attachReports(m *model.Measurement, ds []store.Document) {
	m.Reports = convertAll(ds, clientReportOf)
	m.P1203ClientReport, m.NetworkPerformanceReport, m.LightweightVideoPlayerPerformanceReport = nil, nil, nil
	for _, d := range ds {
		if d.Type == nil {
			continue
		}
		doc := ptr(documentJSON(d.Doc))
		switch gqlmodel.MeasurementReportType(*d.Type) {
		case gqlmodel.MeasurementReportTypeP1203ClientReport:
			m.P1203ClientReport = doc
		case gqlmodel.MeasurementReportTypePerformanceClientReport:
			m.NetworkPerformanceReport = doc
		case gqlmodel.MeasurementReportTypeLightweightVideoPlayerPerformanceReport:
			m.LightweightVideoPlayerPerformanceReport = doc
		}
	}
}

// documentClient declares the client a document names by its client_uuid
// (null when absent or not visible to the caller).
func documentClient[P any](fields func(*P) (*model.JSON, **model.Client)) edge {
	uuidOf := func(p *P) (string, bool) {
		doc, _ := fields(p)
		return documentClientUUID(*doc)
	}
	return edge{child: "Client",
		children: single(func(p *P) *model.Client { _, c := fields(p); return *c }),
		load: hasOne(uuidOf, store.ClientsByUUIDs, func(c store.Client) string { return c.UUID }, clientOf,
			func(p *P, c *model.Client) { _, dst := fields(p); *dst = c })}
}

// loadMeasurementPages attaches to all clients of the level the page of
// measurements that the field's arguments ask for, read in one statement
// through the page loader (which enforces the operation's measurement
// budget). A failure attaches nothing: the measurements resolver then
// reports it on its field, from the loader's cache.
func loadMeasurementPages(ctx context.Context, q edgeQuery, parents []any) (func() error, error) {
	page, limit, ok := measurementPageOfArgs(q.args)
	if !ok {
		return nil, nil // the resolver reports the arguments' error
	}
	clients := make([]*model.Client, len(parents))
	for i, p := range parents {
		clients[i] = p.(*model.Client)
	}
	conns, err := measurementPages(ctx, clients, page, limit)
	if err != nil {
		return nil, nil
	}
	for i, c := range clients {
		if c.Pages == nil {
			c.Pages = map[string]*model.MeasurementConnection{}
		}
		c.Pages[page] = conns[i]
	}
	return nil, nil
}

// measurementPages reads each client's page through the page loader.
func measurementPages(ctx context.Context, clients []*model.Client, page string, limit int) ([]*model.MeasurementConnection, error) {
	key := func(c *model.Client) (loaders.MeasurementPageKey, bool) {
		return loaders.MeasurementPageKey{ClientUUID: c.UUID, Page: page}, true
	}
	l := loaders.For(ctx).MeasurementPages
	keys := make([]loaders.MeasurementPageKey, 0, len(clients))
	for _, c := range clients {
		if c != nil { // an _entities representation that found nothing
			k, _ := key(c)
			keys = append(keys, k)
		}
	}
	l.Fetch(ctx, keys) // one statement now, not after the loader's timer
	return loadAll(ctx, clients, l, key,
		func(rows []store.MeasurementPage) *model.MeasurementConnection {
			return measurementConnection(rows, limit)
		})
}

// measurementConnectionOf is the page attached for the field's arguments.
func measurementConnectionOf(p any, args map[string]any) []any {
	page, _, ok := measurementPageOfArgs(args)
	if !ok {
		return nil
	}
	return single(func(c *model.Client) *model.MeasurementConnection { return c.Pages[page] })(p, args)
}

// measurementPageOfArgs reads Client.measurements' arguments from a field's
// argument map as gqlgen's generated code does, and answers the loader page
// and page size they make; ok is false when they do not parse.
func measurementPageOfArgs(args map[string]any) (page string, limit int, ok bool) {
	var (
		filter *gqlmodel.MeasurementFilter
		first  *int64
		after  *string
	)
	if v := args["first"]; v != nil {
		n, err := graphql.UnmarshalInt64(v)
		if err != nil {
			return "", 0, false
		}
		first = &n
	}
	if v := args["after"]; v != nil {
		s, err := graphql.UnmarshalString(v)
		if err != nil {
			return "", 0, false
		}
		after = &s
	}
	if v := args["filter"]; v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			return "", 0, false
		}
		filter = &gqlmodel.MeasurementFilter{}
		for name, dst := range map[string]**string{"type": &filter.Type, "subject": &filter.Subject} {
			if v := m[name]; v != nil {
				s, err := graphql.UnmarshalString(v)
				if err != nil {
					return "", 0, false
				}
				*dst = &s
			}
		}
		for name, dst := range map[string]**time.Time{"since": &filter.Since, "until": &filter.Until} {
			if v := m[name]; v != nil {
				t, err := graphql.UnmarshalTime(v)
				if err != nil {
					return "", 0, false
				}
				*dst = &t
			}
		}
	}
	page, limit, err := measurementPage(filter, first, after)
	return page, limit, err == nil
}
