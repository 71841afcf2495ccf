package limits

// A Limit is one row of Table: a bound, its default and, when a setting of
// fleetgraph serve changes it, the setting and the range it accepts.
type Limit struct {
	// Name is the bound's name in this package (DefaultGraphQL's fields as
	// GraphQL.Field).
	Name string
	// Unit is what Default counts: "bytes", "duration", "requests/period",
	// "tokens", ...
	Unit string
	// Default is the bound when nothing sets it: an int, an int64, a
	// time.Duration, a Rate or a ByteRate; nil when it is derived from a
	// size the deployment chooses (AdmissionSlots, from the pool's size).
	Default any
	// Min and Max are the range a setting accepts (a Rate's count and
	// period each within theirs); nil, or a zero field of a Rate or
	// ByteRate: no setting, or any positive value on that side.
	Min, Max any
	// Env and Flag are the setting that changes the bound (empty: none).
	Env, Flag string
	// Off tells that the setting also accepts "off" (no bound).
	Off bool
	// In is the package that enforces the bound.
	In string
}

// Table is every bound a request or a tenant meets.
var Table = []Limit{
	// A /graphql document, before it is parsed and validated.
	{Name: "GraphQL.Tokens", Unit: "tokens", Default: DefaultGraphQL.Tokens, In: "server"},
	{Name: "GraphQL.Depth", Unit: "levels of fields", Default: DefaultGraphQL.Depth, In: "server"},
	{Name: "GraphQL.Fields", Unit: "fields per operation", Default: DefaultGraphQL.Fields, In: "server"},
	{Name: "GraphQL.Aliases", Unit: "aliases per operation", Default: DefaultGraphQL.Aliases, In: "server"},
	{Name: "GraphQL.FragmentSpreads", Unit: "fragment spreads per operation", Default: DefaultGraphQL.FragmentSpreads, In: "server"},
	{Name: "GraphQL.SameResponseKey", Unit: "fields per response key", Default: DefaultGraphQL.SameResponseKey, In: "server"},
	{Name: "GraphQL.ValueDepth", Unit: "levels of literals", Default: DefaultGraphQL.ValueDepth, In: "server"},
	{Name: "GraphQL.Mutations", Unit: "mutation fields per operation", Default: DefaultGraphQL.Mutations, In: "server"},
	{Name: "GraphQL.Errors", Unit: "validation errors reported", Default: DefaultGraphQL.Errors, In: "server"},
	// A page of a connection.
	{Name: "PageSize", Unit: "edges when first and last are not given", Default: PageSize, In: "engine"},
	{Name: "MaxPageSize", Unit: "edges of first or last", Default: MaxPageSize, In: "engine"},
	// A page of the other lists.
	{Name: "ExportPerPage", Unit: "documents when perPage is not given", Default: ExportPerPage, In: "export"},
	{Name: "MaxExportPerPage", Unit: "documents of perPage", Default: MaxExportPerPage, In: "export"},
	{Name: "ListPerPage", Unit: "items when perPage is not given", Default: ListPerPage, In: "resolvers, webhooks"},
	{Name: "MaxListPerPage", Unit: "items of perPage", Default: MaxListPerPage, In: "resolvers, webhooks"},
	{Name: "MaxListPage", Unit: "pages", Default: MaxListPage, In: "resolvers"},
	// Lists a GraphQL field takes or answers.
	{Name: "MaxNodes", Unit: "ids of nodes", Default: MaxNodes, In: "engine"},
	{Name: "MaxConnectionClients", Unit: "clientIds of anomalyEventsConnection", Default: MaxConnectionClients, In: "engine"},
	{Name: "MaxEventMeasurements", Unit: "measurements of an anomaly event", Default: MaxEventMeasurements, In: "engine"},
	{Name: "MaxClientSearchLength", Unit: "characters of a client search", Default: MaxClientSearchLength, In: "resolvers"},
	{Name: "MaxFilterValues", Unit: "values of one filter", Default: MaxFilterValues, In: "webhooks, engine"},
	{Name: "MaxResolveAnomalies", Unit: "anomaly ids of one resolve", Default: MaxResolveAnomalies, In: "resolvers"},
	{Name: "MaxCapabilityListEntries", Unit: "entries of a capability's list", Default: MaxCapabilityListEntries, In: "resolvers"},
	{Name: "MaxGroupMembers", Unit: "clientIds of one group change", Default: MaxGroupMembers, In: "resolvers"},
	{Name: "MaxAssignmentIDs", Unit: "clients and groups of one assignment", Default: MaxAssignmentIDs, In: "resolvers"},
	{Name: "MaxWebhookHeaders", Unit: "headers of a webhook", Default: MaxWebhookHeaders, In: "webhooks"},
	{Name: "MaxWebhookMentions", Unit: "mentions of each kind of a webhook", Default: MaxWebhookMentions, In: "webhooks"},
	// The complexity of a GraphQL operation.
	{Name: "Complexity", Unit: "complexity per operation", Default: Complexity, In: "server"},
	{Name: "SearchComplexity", Unit: "complexity per search field", Default: SearchComplexity, In: "server"},
	{Name: "PageComplexityUnit", Unit: "edges priced as one selection", Default: PageComplexityUnit, In: "server"},
	// A request body.
	{Name: "MaxBodyBytes", Unit: "bytes", Default: MaxBodyBytes, In: "rest"},
	{Name: "MaxProbeBodyBytes", Unit: "bytes", Default: MaxProbeBodyBytes, In: "clientapi"},
	{Name: "MaxReportDocuments", Unit: "documents of one report", Default: MaxReportDocuments, In: "clientapi"},
	// A search's page and scroll.
	{Name: "SearchSize", Unit: "documents when size is not given", Default: SearchSize, In: "search"},
	{Name: "MaxSearchSize", Unit: "documents of size and of from + size", Default: MaxSearchSize, In: "search"},
	{Name: "MaxScroll", Unit: "duration", Default: MaxScroll, In: "search"},
	{Name: "MaxOpenScrolls", Unit: "open scrolls per data owner", Default: MaxOpenScrolls, In: "search/pg"},
	{Name: "MaxWarnings", Unit: "warnings of one request", Default: MaxWarnings, In: "search"},
	// A Query DSL body.
	{Name: "MaxDSLDepth", Unit: "levels of values", Default: MaxDSLDepth, In: "search"},
	{Name: "MaxDSLNodes", Unit: "values", Default: MaxDSLNodes, In: "search"},
	{Name: "MaxDSLClauses", Unit: "query clauses", Default: MaxDSLClauses, In: "search"},
	{Name: "MaxDSLSortKeys", Unit: "keys of one sort", Default: MaxDSLSortKeys, In: "search"},
	{Name: "MaxDSLTermsValues", Unit: "values of one terms query", Default: MaxDSLTermsValues, In: "search"},
	{Name: "MaxQueryStringLength", Unit: "bytes of one query_string", Default: MaxQueryStringLength, In: "search"},
	{Name: "MaxQueryStringDepth", Unit: "levels of parentheses", Default: MaxQueryStringDepth, In: "search"},
	{Name: "MaxDSLAggs", Unit: "aggregations", Default: MaxDSLAggs, In: "search"},
	{Name: "MaxDSLAggDepth", Unit: "levels of aggregations", Default: MaxDSLAggDepth, In: "search"},
	{Name: "MaxAggBuckets", Unit: "buckets of a response", Default: MaxAggBuckets, In: "search/pg"},
	{Name: "MaxTopHitsSize", Unit: "from + size of one top_hits", Default: MaxTopHitsSize, In: "search/pg"},
	{Name: "MaxTopHitsDocuments", Unit: "documents of one top_hits", Default: MaxTopHitsDocuments, In: "search/pg"},
	{Name: "MaxQueryPatterns", Unit: "text matches per document", Default: MaxQueryPatterns, In: "search/pg"},
	{Name: "AllFieldsPatterns", Unit: "text matches of one condition on every field", Default: AllFieldsPatterns, In: "search/pg"},
	// An ES|QL query.
	{Name: "MaxCommands", Unit: "processing commands", Default: MaxCommands, In: "search/esql"},
	{Name: "MaxEvalColumns", Unit: "EVAL columns", Default: MaxEvalColumns, In: "search/esql"},
	{Name: "MaxExprDepth", Unit: "levels of one expression", Default: MaxExprDepth, In: "search/esql"},
	{Name: "MaxExprNodes", Unit: "nodes of one expression", Default: MaxExprNodes, In: "search/esql"},
	{Name: "MaxQueryNodes", Unit: "expression nodes of the query", Default: MaxQueryNodes, In: "search/esql"},
	{Name: "MaxESQLTokens", Unit: "tokens", Default: MaxESQLTokens, In: "search/esql"},
	{Name: "MaxESQLBytes", Unit: "bytes", Default: MaxESQLBytes, In: "search"},
	{Name: "MaxESQLNesting", Unit: "levels the parser follows", Default: MaxESQLNesting, In: "search/esql"},
	{Name: "ESQLRows", Unit: "rows without LIMIT", Default: ESQLRows, In: "search/pg"},
	{Name: "MaxESQLRows", Unit: "rows of LIMIT", Default: MaxESQLRows, In: "search/pg"},
	// Time.
	{Name: "SearchTimeout", Unit: "duration", Default: SearchTimeout, Max: MaxSearchTimeout,
		Env: "FLEETGRAPH_SEARCH_TIMEOUT", Flag: "search-timeout", In: "search/pg"},
	// The request deadline is at least the search time limit (the setting).
	{Name: "RequestTimeout", Unit: "duration", Default: RequestTimeout, Max: MaxRequestTimeout,
		Env: "FLEETGRAPH_REQUEST_TIMEOUT", Flag: "request-timeout", In: "server"},
	{Name: "StatementTimeout", Unit: "duration", Default: StatementTimeout, Max: MaxRequestTimeout,
		Env: "FLEETGRAPH_STATEMENT_TIMEOUT", Flag: "statement-timeout", In: "store"},
	{Name: "AdmissionSlots", Unit: "heavy operations at once: the pool less a quarter (at least 2), half of that per data owner",
		In: "limits/admission"},
	{Name: "AdmissionWait", Unit: "duration", Default: AdmissionWait, In: "limits/admission"},
	{Name: "BusyRetryAfterSeconds", Unit: "seconds", Default: BusyRetryAfterSeconds, In: "respond"},
	{Name: "ESTimeout", Unit: "duration", Default: ESTimeout, In: "search/es"},
	{Name: "WebhookTimeout", Unit: "duration", Default: WebhookTimeout, Max: MaxRequestTimeout,
		Env: "FLEETGRAPH_WEBHOOK_TIMEOUT", Flag: "webhook-timeout", In: "webhooks"},
	// Bytes.
	{Name: "AnswerBytes", Unit: "bytes", Default: int64(AnswerBytes), Min: int64(MinAnswerBytes), Max: int64(MaxAnswerBytes),
		Env: "FLEETGRAPH_MAX_ANSWER_BYTES", Flag: "max-answer-bytes", In: "limits/budget"},
	// Rates.
	{Name: "KeyRate", Unit: "requests/period", Default: KeyRate, Min: minRate, Max: maxRate,
		Env: "FLEETGRAPH_RATE_LIMIT_KEY", Flag: "rate-limit-key", Off: true, In: "limits/ratelimit"},
	{Name: "DataOwnerRate", Unit: "requests/period", Default: DataOwnerRate, Min: minRate, Max: maxRate,
		Env: "FLEETGRAPH_RATE_LIMIT_DATA_OWNER", Flag: "rate-limit-data-owner", Off: true, In: "limits/ratelimit"},
	{Name: "ProbeRate", Unit: "requests/period", Default: ProbeRate, Min: minRate, Max: maxRate,
		Env: "FLEETGRAPH_RATE_LIMIT_PROBE", Flag: "rate-limit-probe", Off: true, In: "limits/ratelimit"},
	{Name: "WebClientsRate", Unit: "new clients/period", Default: WebClientsRate, Min: minRate, Max: maxRate,
		Env: "FLEETGRAPH_ANALYTICS_NEW_CLIENTS", Flag: "analytics-new-clients", Off: true, In: "limits/ratelimit"},
	{Name: "AnswerBytesRate", Unit: "bytes/period", Default: AnswerBytesRate,
		Min: ByteRate{Bytes: AnswerBytes, Period: MinRatePeriod}, Max: ByteRate{Period: MaxRatePeriod},
		Env: "FLEETGRAPH_RATE_LIMIT_ANSWER_BYTES", Flag: "rate-limit-answer-bytes", Off: true, In: "limits/ratelimit"},
	{Name: "RepeatHold", Unit: "duration", Default: RepeatHold, Max: MaxRepeatHold,
		Env: "FLEETGRAPH_RATE_LIMIT_REPEAT_HOLD", Flag: "rate-limit-repeat-hold", Off: true, In: "limits/ratelimit"},
	{Name: "MaxHeld", Unit: "requests held", Default: MaxHeld, In: "limits/ratelimit"},
	// Persisted queries of /graphql.
	{Name: "PersistedQueriesPerOwner", Unit: "queries kept per data owner", Default: PersistedQueriesPerOwner, In: "server"},
	{Name: "PersistedQueryOwnerBytes", Unit: "bytes kept per data owner", Default: PersistedQueryOwnerBytes, In: "server"},
	{Name: "PersistedQueryOwners", Unit: "data owners kept", Default: PersistedQueryOwners, In: "server"},
	{Name: "PersistedQueryMaxBytes", Unit: "bytes of a query kept", Default: PersistedQueryMaxBytes, In: "server"},
	// GraphQL subscriptions.
	{Name: "SubscriptionsPerKey", Unit: "subscriptions per API key", Default: SubscriptionsPerKey, In: "eventhub"},
	{Name: "SubscriptionsPerConnection", Unit: "subscriptions per WebSocket connection", Default: SubscriptionsPerConnection, In: "eventhub"},
	{Name: "SubscriberLag", Unit: "events a subscriber lags behind", Default: SubscriberLag, In: "eventhub"},
	{Name: "SubscriptionCatchUp", Unit: "events a resync reads per data owner", Default: SubscriptionCatchUp, In: "eventhub"},
	// The AI assistant.
	{Name: "AIMonthlyTokens", Unit: "tokens a month", Default: int64(AIMonthlyTokens), Min: int64(1),
		Env: "FLEETGRAPH_AI_MONTHLY_TOKENS", Flag: "ai-monthly-tokens", In: "assistant/chat"},
	{Name: "MaxAISteps", Unit: "model calls of one turn", Default: MaxAISteps, In: "assistant"},
	{Name: "MaxAIToolCalls", Unit: "tool calls of one turn", Default: MaxAIToolCalls, In: "assistant"},
	{Name: "MaxAIToolResultBytes", Unit: "bytes of one tool result", Default: MaxAIToolResultBytes, In: "assistant"},
	{Name: "AICallTimeout", Unit: "duration", Default: AICallTimeout, In: "assistant"},
	{Name: "AIOutputTokens", Unit: "output tokens of a model call", Default: AIOutputTokens, In: "assistant"},
	{Name: "AITitleTokens", Unit: "output tokens of a title", Default: AITitleTokens, In: "assistant/chat"},
	{Name: "MaxAIContextMessages", Unit: "earlier messages sent", Default: MaxAIContextMessages, In: "assistant"},
	{Name: "MaxAIContextChars", Unit: "characters of the messages sent", Default: MaxAIContextChars, In: "assistant"},
	{Name: "MaxAIToolHits", Unit: "documents of one search tool", Default: MaxAIToolHits, In: "assistant/chat"},
	{Name: "MaxAIToolPartChars", Unit: "characters of an earlier tool result", Default: MaxAIToolPartChars, In: "assistant"},
	{Name: "MaxAIDataPartChars", Unit: "characters of an earlier data part", Default: MaxAIDataPartChars, In: "assistant"},
	{Name: "MaxAIConversationMessages", Unit: "messages of a conversation", Default: MaxAIConversationMessages, In: "assistant/chat"},
}

// The range of a request rate setting.
var (
	minRate = Rate{Limit: 1, Period: MinRatePeriod}
	maxRate = Rate{Limit: MaxRateLimit, Period: MaxRatePeriod}
)
