package engine

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fleetgraph/fleetgraph/auth"
	"github.com/fleetgraph/fleetgraph/graph/gqlmodel"
	"github.com/fleetgraph/fleetgraph/loaders"
	"github.com/fleetgraph/fleetgraph/model"
	"github.com/fleetgraph/fleetgraph/store"
	"github.com/fleetgraph/fleetgraph/vocab"
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
					GroupOf, func(c *model.Client, gs []model.ClientGroup) { c.ClientGroups = gs })},
			"ispContracts": {byID: true, child: "IspContract", children: list(func(c *model.Client) []model.IspContract { return c.IspContracts }),
				load: hasMany(always(clientID), store.ContractsByClient, func(c store.IspContract) int64 { return c.ClientID },
					ContractOf, func(c *model.Client, cs []model.IspContract) {
						c.IspContracts, c.CurrentIspContract = cs, currentContract(cs)
					})},
			"currentIspContract": {shares: "ispContracts", child: "IspContract",
				children: single(func(c *model.Client) *model.IspContract { return c.CurrentIspContract })},
			"registrationKey": {byID: true, child: "RegistrationKey", children: single(func(c *model.Client) *model.RegistrationKey { return c.RegistrationKey }),
				load: loadClientKeys},
			"deliveredPublicConfig":    {byID: true, load: loadConfigs},
			"deliveredAutomatorConfig": {shares: "deliveredPublicConfig"},
			"measurements":             {load: loadMeasurementPages, child: "MeasurementConnection", children: measurementConnectionOf},
			"health":                   {byID: true, load: loadHealth},
			"openAnomalyCount":         {load: loadOpenAnomalyCounts},
			"anomalyEvents":            ClientAnomalyEvents.edge(),
			"systemStatusRecords":      ClientSystemStatus.edge(),
			"latestSystemStatusRecord": {load: hasOne(always(func(c *model.Client) string { return c.UUID }),
				store.LatestSystemStatusByClients, func(s store.SystemStatus) string { return *s.ClientUUID },
				SystemStatusOf, func(c *model.Client, s *model.SystemStatusRecord) { c.LatestSystemStatusRecord = s })},
		},
		"ClientGroup": {
			"clients": {child: "Client", children: list(func(g *model.ClientGroup) []model.Client { return g.Clients }),
				load: hasMany(always(func(g *model.ClientGroup) int64 { return g.ID }), store.ClientsByGroup,
					func(c store.GroupClient) int64 { return c.GroupID },
					func(c store.GroupClient) model.Client { return ClientOf(c.Client) },
					func(g *model.ClientGroup, cs []model.Client) { g.Clients = cs })},
			"clientsConnection": GroupClients.edge(),
		},
		"IspContract": {
			"isp": {child: "Isp", children: single(func(c *model.IspContract) *model.Isp { return c.Isp }),
				load: hasOne(always(contractIspID), store.IspsByIDs, func(i store.Isp) int64 { return i.ID },
					IspOf, func(c *model.IspContract, i *model.Isp) { c.Isp = i })},
			"client": {child: "Client", children: single(func(c *model.IspContract) *model.Client { return c.Client }),
				load: hasOne(always(contractClientID), store.ClientsByIDs, func(c store.Client) int64 { return c.ID },
					ClientOf, func(c *model.IspContract, cl *model.Client) { c.Client = cl })},
			"clientUuid":  {shares: "client"},
			"clientLabel": {shares: "client"},
		},
		"Isp": {
			"ispContracts": {byID: true, child: "IspContract", children: list(func(i *model.Isp) []model.IspContract { return i.IspContracts }),
				load: hasMany(always(ispID), store.ContractsByIsp, func(c store.IspContract) int64 { return c.IspID },
					ContractOf, func(i *model.Isp, cs []model.IspContract) { i.IspContracts = cs })},
			"ispContractsCount": {load: ispCounts},
			"ispDetailsCount":   {shares: "ispContractsCount"},
			"clients":           IspClients.edge(),
		},
		"Capability": {
			"registrationKeys": {child: "RegistrationKey", children: list(func(c *model.Capability) []model.RegistrationKey { return c.RegistrationKeys }),
				load: hasMany(always(capabilityID), store.RegistrationKeysByCapability,
					func(k store.RegistrationKey) int64 { return k.CapabilityID },
					RegistrationKeyOf, func(c *model.Capability, ks []model.RegistrationKey) { c.RegistrationKeys = ks })},
			"registrationKeysCount": {load: counts(capabilityID, store.CountRegistrationKeys,
				func(c *model.Capability, n int64) { c.RegistrationKeysCount = n })},
			"clients": CapabilityClients.edge(),
		},
		"RegistrationKey": {
			"capability": {child: "Capability", children: single(func(k *model.RegistrationKey) *model.Capability { return k.Capability }),
				load: hasOne(always(keyCapabilityID), store.CapabilitiesByIDs, func(c store.Capability) int64 { return c.ID },
					CapabilityOf, func(k *model.RegistrationKey, c *model.Capability) { k.Capability = c })},
			"clientsCount": {load: counts(registrationKeyID, store.CountClientsByRegistrationKey,
				func(k *model.RegistrationKey, n int64) { k.ClientsCount = n })},
			"clients": KeyClients.edge(),
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
			"reports":                                 {load: LoadReports},
			"p1203ClientReport":                       {shares: "reports"},
			"networkPerformanceReport":                {shares: "reports"},
			"lightweightVideoPlayerPerformanceReport": {shares: "reports"},
			"client": documentClient(func(m *model.Measurement) (*model.JSON, **model.Client) { return &m.Document, &m.Client }),
		},
		"AnomalyEvent": {
			"client": documentClient(func(a *model.AnomalyEvent) (*model.JSON, **model.Client) { return &a.Document, &a.Client }),
			"measurements": {load: loadEventMeasurements, child: "Measurement",
				children: list(func(a *model.AnomalyEvent) []model.Measurement { return a.Measurements })},
		},
		"AnomalyEventConnection": {
			"edges": {child: "AnomalyEventEdge", children: list(func(c *model.AnomalyEventConnection) []model.AnomalyEventEdge { return c.Edges })},
		},
		"AnomalyEventEdge": {
			"node": {child: "AnomalyEvent", children: single(func(e *model.AnomalyEventEdge) *model.AnomalyEvent { return e.Node })},
		},
		"Webhook": {
			"deliveries": WebhookDeliveries.edge(),
		},
		"User": {
			"apiKeys": {load: loadUserKeys},
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
			k = new(RegistrationKeyOf(r.RegistrationKey))
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
// configuration belongs to their owner, nor for unmanaged ones. One
// object per config, shared by the clients that get it (as keys).
var loadConfigs = queued(always(clientID), store.DeliveredConfigsByClients, func(parents []any, rows []store.DeliveredConfig) {
	type key struct {
		client int64
		kind   string
	}
	refs := map[int64]*model.ConfigRef{}
	by := make(map[key]*model.ConfigRef, len(rows))
	for _, r := range rows {
		ref := refs[r.ID]
		if ref == nil {
			ref = configRefOf(r)
			refs[r.ID] = ref
		}
		by[key{r.ClientID, r.Kind}] = ref
	}
	for _, p := range parents {
		c := p.(*model.Client)
		c.DeliveredPublicConfig = by[key{c.ID, store.ConfigPublic}]
		c.DeliveredAutomatorConfig = by[key{c.ID, store.ConfigAutomator}]
	}
})

// LoadReports attaches every measurement's client reports, and the latest
// of each type the report fields name.
func LoadReports(ctx context.Context, q EdgeQuery, parents []any) (func() error, error) {
	ids := keysOf(parents, always(func(m *model.Measurement) string { return m.ID }))
	docs, err := q.Store.DocumentsByMeasurements(ctx, q.Owner, vocab.KindClientReport, ids)
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
	m.Reports = ConvertAll(ds, clientReportOf)
	m.P1203ClientReport, m.NetworkPerformanceReport, m.LightweightVideoPlayerPerformanceReport = nil, nil, nil
	for _, d := range ds {
		if d.Type == nil {
			continue
		}
		doc := new(documentJSON(d.Doc))
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
		load: hasOne(uuidOf, store.ClientsByUUIDs, func(c store.Client) string { return c.UUID }, ClientOf,
			func(p *P, c *model.Client) { _, dst := fields(p); *dst = c })}
}

// loadMeasurementPages attaches to all clients of the level the page of
// measurements that the field's arguments ask for, read in one statement
// through the page loader (which enforces the operation's measurement
// budget). A failure attaches nothing: the measurements resolver then
// reports it on its field, from the loader's cache.
func loadMeasurementPages(ctx context.Context, q EdgeQuery, parents []any) (func() error, error) {
	page, limit, ok := measurementPageOfArgs(q.args)
	if !ok {
		return nil, nil // the resolver reports the arguments' error
	}
	clients := make([]*model.Client, len(parents))
	for i, p := range parents {
		clients[i] = p.(*model.Client)
	}
	conns, err := MeasurementPages(ctx, clients, page, limit)
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

// MeasurementPages reads each client's page through the page loader.
func MeasurementPages(ctx context.Context, clients []*model.Client, page string, limit int) ([]*model.MeasurementConnection, error) {
	key := func(c *model.Client) (loaders.MeasurementPageKey, bool) {
		return loaders.MeasurementPageKey{ClientUUID: c.UUID, Page: page}, true
	}
	l := loaders.For(ctx).MeasurementPages()
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
func measurementConnectionOf(dst []any, p any, args map[string]any) []any {
	page, _, ok := measurementPageOfArgs(args)
	if !ok {
		return dst
	}
	return single(func(c *model.Client) *model.MeasurementConnection { return c.Pages[page] })(dst, p, args)
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
	page, limit, err := MeasurementPage(filter, first, after)
	return page, limit, err == nil
}

// loadHealth attaches each client's health; shared clients get none.
var loadHealth = hasOne(always(clientID), store.HealthOfClients, func(h store.HealthState) int64 { return h.ClientID },
	HealthStateOf, func(c *model.Client, h *model.ClientHealthState) { c.Health = h })

// loadOpenAnomalyCounts attaches each client's count of open anomaly events.
var loadOpenAnomalyCounts = queued(always(clientUUID), store.OpenAnomalyCounts, func(parents []any, rows []store.CountByUUID) {
	n := make(map[string]int64, len(rows))
	for _, r := range rows {
		n[r.ClientUUID] = r.N
	}
	for _, p := range parents {
		c := p.(*model.Client)
		c.OpenAnomalyCount = n[c.UUID]
	}
})

// loadUserKeys attaches each user's client admin API keys: to admins only
// (FORBIDDEN to others, as the key lists).
func loadUserKeys(ctx context.Context, q EdgeQuery, parents []any) (func() error, error) {
	if _, err := auth.Require(ctx, model.RoleAdmin); err != nil {
		return nil, err
	}
	return hasMany(always(userID), store.AdminKeysByUsers, func(k store.APIKey) int64 { return Deref(k.UserID) },
		AdminKeyOf, func(u *model.User, ks []model.ClientAdminAPIKey) { u.APIKeys = ks })(ctx, q, parents)
}

// loadEventMeasurements attaches the measurements of each anomaly event's
// measurement_ids, in their order, those the data owner has.
func loadEventMeasurements(_ context.Context, q EdgeQuery, parents []any) (func() error, error) {
	var ids []string
	seen := map[string]bool{}
	for _, p := range parents {
		for _, id := range p.(*model.AnomalyEvent).MeasurementIDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var docs []store.Document
	var err error
	if len(ids) > 0 {
		store.Queue(q.batch, store.DocumentsByIDs(q.Owner, vocab.KindMeasurement, ids), func(ds []store.Document, e error) { docs, err = ds, e })
	}
	return func() error {
		by := make(map[string]store.Document, len(docs))
		for _, d := range docs {
			by[d.DocID] = d
		}
		for _, p := range parents {
			a := p.(*model.AnomalyEvent)
			a.Measurements = []model.Measurement{}
			for _, id := range a.MeasurementIDs {
				if d, ok := by[id]; ok {
					a.Measurements = append(a.Measurements, MeasurementOf(d))
				}
			}
		}
		return err
	}, nil
}

// The connections below a parent that take arguments (paged.go).

// AnomalyArgs are the arguments of Client.anomalyEvents.
type AnomalyArgs struct {
	PageArgs
	Filter *gqlmodel.AnomalyEventFilter `json:"filter,omitempty"`
}

// anomalyList names the anomaly event connections' cursors.
const anomalyList = "AnomalyEventConnection"

// page reads the window, page and filter of an anomaly event connection.
func (a AnomalyArgs) page() (PageWindow, store.ParentPage, store.AnomalyFilter, error) {
	w, page, err := parentPage(anomalyList, a.PageArgs)
	if err != nil {
		return w, page, store.AnomalyFilter{}, err
	}
	f, err := anomalyFilterOf(a.Filter)
	return w, page, f, err
}

var ClientAnomalyEvents = pagedEdge[model.Client, AnomalyArgs, model.AnomalyEventConnection]{
	field: "anomalyEvents", child: "AnomalyEventConnection", conns: func(c *model.Client) *model.Connections { return &c.Connections },
	queue: func(ctx context.Context, q EdgeQuery, cs []*model.Client, a AnomalyArgs) (func() (func(*model.Client) *model.AnomalyEventConnection, error), error) {
		w, page, f, err := a.page()
		if err != nil {
			return nil, err
		}
		uuids := distinct(cs, clientUUID)
		rows := queueRows(q.batch, store.AnomalyEventsByClients(q.Owner, uuids, f, page), func(d store.Document) string { return Deref(d.ClientUUID) })
		counts := queueCounts(q.batch, q.selects(ctx, "AnomalyEventConnection", "totalCount"),
			func() store.Read[store.CountByUUID] { return store.CountAnomalyEventsByClients(q.Owner, uuids, f) },
			func(c store.CountByUUID) (string, int64) { return c.ClientUUID, c.N })
		return func() (func(*model.Client) *model.AnomalyEventConnection, error) {
			by, err := rows()
			if err != nil {
				return nil, err
			}
			n, err := counts()
			return func(c *model.Client) *model.AnomalyEventConnection {
				return anomalyConnection(by[c.UUID], w, n[c.UUID])
			}, err
		}, nil
	}}

// StatusArgs are the arguments of Client.systemStatusRecords.
type StatusArgs struct {
	PageArgs
	Filter *gqlmodel.SystemStatusRecordFilter `json:"filter,omitempty"`
}

var ClientSystemStatus = pagedEdge[model.Client, StatusArgs, model.SystemStatusRecordConnection]{
	field: "systemStatusRecords", child: "SystemStatusRecordConnection", conns: func(c *model.Client) *model.Connections { return &c.Connections },
	queue: func(ctx context.Context, q EdgeQuery, cs []*model.Client, a StatusArgs) (func() (func(*model.Client) *model.SystemStatusRecordConnection, error), error) {
		const list = "SystemStatusRecordConnection"
		w, page, err := parentPage(list, a.PageArgs)
		if err != nil {
			return nil, err
		}
		var f store.StatusFilter
		if a.Filter != nil {
			f = store.StatusFilter{Since: a.Filter.Since, Until: a.Filter.Until}
		}
		if err := timeRange(f.Since, f.Until); err != nil {
			return nil, err
		}
		uuids := distinct(cs, clientUUID)
		rows := queueRows(q.batch, store.SystemStatusByClients(q.Owner, uuids, f, page), func(s store.SystemStatus) string { return Deref(s.ClientUUID) })
		counts := queueCounts(q.batch, q.selects(ctx, list, "totalCount"),
			func() store.Read[store.CountByUUID] { return store.CountSystemStatusByClients(q.Owner, uuids, f) },
			func(c store.CountByUUID) (string, int64) { return c.ClientUUID, c.N })
		return func() (func(*model.Client) *model.SystemStatusRecordConnection, error) {
			by, err := rows()
			if err != nil {
				return nil, err
			}
			n, err := counts()
			return func(c *model.Client) *model.SystemStatusRecordConnection {
				edges, info := pageEdges(list, by[c.UUID], w, func(s store.SystemStatus) store.PageKey { return store.PageKey{Time: s.CreatedAt, ID: s.ID} },
					func(cur string, s store.SystemStatus) model.SystemStatusRecordEdge {
						return model.SystemStatusRecordEdge{Cursor: cur, Node: new(SystemStatusOf(s))}
					})
				return &model.SystemStatusRecordConnection{Edges: edges, PageInfo: info, TotalCount: n[c.UUID]}
			}, err
		}, nil
	}}

var WebhookDeliveries = pagedEdge[model.Webhook, PageArgs, model.WebhookDeliveryConnection]{
	field: "deliveries", child: "WebhookDeliveryConnection", conns: func(w *model.Webhook) *model.Connections { return &w.Connections },
	queue: func(ctx context.Context, q EdgeQuery, ws []*model.Webhook, a PageArgs) (func() (func(*model.Webhook) *model.WebhookDeliveryConnection, error), error) {
		const list = "WebhookDeliveryConnection" // as webhookDeliveriesConnection's: one order
		w, page, err := parentPage(list, a)
		if err != nil {
			return nil, err
		}
		ids := distinct(ws, webhookID)
		rows := queueRows(q.batch, store.DeliveriesByWebhooks(q.Owner, ids, page), func(d store.WebhookDelivery) int64 { return d.WebhookEndpointID })
		counts := queueCounts(q.batch, q.selects(ctx, list, "totalCount"),
			func() store.Read[store.CountByParent] { return store.CountDeliveriesByWebhooks(q.Owner, ids) },
			func(c store.CountByParent) (int64, int64) { return c.ParentID, c.N })
		return func() (func(*model.Webhook) *model.WebhookDeliveryConnection, error) {
			by, err := rows()
			if err != nil {
				return nil, err
			}
			n, err := counts()
			return func(h *model.Webhook) *model.WebhookDeliveryConnection {
				edges, info := pageEdges(list, by[h.ID], w, func(d store.WebhookDelivery) store.PageKey { return store.PageKey{ID: d.ID} },
					func(cur string, d store.WebhookDelivery) model.WebhookDeliveryEdge {
						return model.WebhookDeliveryEdge{Cursor: cur, Node: new(DeliveryOf(d))}
					})
				return &model.WebhookDeliveryConnection{Edges: edges, PageInfo: info, TotalCount: n[h.ID]}
			}, err
		}, nil
	}}

// The clients of a registration key, capability, ISP or group, a page each.
var (
	KeyClients = clientsOf("clients", store.KeyClients, registrationKeyID,
		func(k *model.RegistrationKey) *model.Connections { return &k.Connections })
	CapabilityClients = clientsOf("clients", store.CapabilityClients, capabilityID,
		func(c *model.Capability) *model.Connections { return &c.Connections })
	IspClients   = clientsOf("clients", store.IspClients, ispID, func(i *model.Isp) *model.Connections { return &i.Connections })
	GroupClients = clientsOf("clientsConnection", store.GroupClients, groupID,
		func(g *model.ClientGroup) *model.Connections { return &g.Connections })
)

// clientsOf declares a page of the clients of parents of type P, by id
// (cursors of clientsConnection's default order).
func clientsOf[P any](field string, m store.ClientMembership, id func(*P) int64, conns func(*P) *model.Connections) pagedEdge[P, PageArgs, model.ClientConnection] {
	return pagedEdge[P, PageArgs, model.ClientConnection]{field: field, child: "ClientConnection", conns: conns,
		queue: func(ctx context.Context, q EdgeQuery, ps []*P, a PageArgs) (func() (func(*P) *model.ClientConnection, error), error) {
			list := string(store.ClientOrderID)
			w, page, err := parentPage(list, a)
			if err != nil {
				return nil, err
			}
			ids := distinct(ps, id)
			rows := queueRows(q.batch, store.ClientsByParents(m, q.Owner, ids, page), func(c store.ParentClient) int64 { return c.ParentID })
			counts := queueCounts(q.batch, q.selects(ctx, "ClientConnection", "totalCount"),
				func() store.Read[store.CountByParent] { return store.CountClientsByParents(m, q.Owner, ids) },
				func(c store.CountByParent) (int64, int64) { return c.ParentID, c.N })
			return func() (func(*P) *model.ClientConnection, error) {
				by, err := rows()
				if err != nil {
					return nil, err
				}
				n, err := counts()
				return func(p *P) *model.ClientConnection {
					edges, info := pageEdges(list, by[id(p)], w, func(c store.ParentClient) store.PageKey { return store.PageKey{ID: c.ID} },
						func(cur string, c store.ParentClient) model.ClientEdge {
							return model.ClientEdge{Cursor: cur, Node: new(ClientOf(c.Client))}
						})
					return &model.ClientConnection{Edges: edges, PageInfo: info, TotalCount: n[id(p)]}
				}, err
			}, nil
		}}
}

// distinct collects the parents' keys, each once.
func distinct[P any, K comparable](ps []*P, key func(*P) K) []K {
	out := make([]K, 0, len(ps))
	seen := make(map[K]bool, len(ps))
	for _, p := range ps {
		if k := key(p); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
