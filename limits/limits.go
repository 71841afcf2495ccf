// Package limits declares every bound a request or a tenant meets, in one
// place: the shape of a GraphQL document and the complexity of an
// operation, the pages of connections, lists, exports and searches, the
// size of request bodies, Query DSL bodies and ES|QL queries, the time
// limits of requests, searches, Elasticsearch and webhook deliveries, the
// answer budget, the rates of keys, data owners and probes, the share of
// the database, the persisted queries and subscriptions kept, the AI
// assistant's monthly tokens. Each bound is a constant (or, for the shape
// of a GraphQL document, the fields of DefaultGraphQL; for the share of the
// database, AdmissionSlots) declared below, and Table lists them all with
// their unit, the range a setting may give them and the setting, where
// there is one. docs_test.go checks the defaults of docs/configuration.md,
// the /graphql limits of docs/decisions.md and the other bounds those
// documents and docs/design.md state against the declarations.
//
// The code that enforces a bound lives with what it bounds and reads its
// numbers from here: limits/admission (the share of the database),
// limits/budget (the answer budget), limits/ratelimit (rates), server (the
// GraphQL document, the prices of fields, persisted queries), engine,
// export, resolvers and webhooks (pages and lists), search, search/esql,
// search/pg and search/es (the size of queries and pages, the time
// limits), eventhub (subscriptions), respond (the Retry-After of a 429),
// cmd/fleetgraph (the settings and their ranges). This package imports
// nothing of fleetgraph's, so that every floor may read it.
package limits

import "time"

// GraphQL bounds what one /graphql request may ask of the parser and the
// validator (package server checks them on the document before gqlgen
// parses and validates it).
type GraphQL struct {
	Tokens          int // lexical tokens in the document (comments included)
	Depth           int // nesting of fields, fragments expanded
	Fields          int // field selections per operation, fragments expanded
	Aliases         int // aliased selections per operation, fragments expanded
	FragmentSpreads int // fragment spreads per operation, expanded
	SameResponseKey int // selections merged into one response key (a path of response names)
	ValueDepth      int // nesting of list and object literals
	Mutations       int // root fields of one mutation operation
	Errors          int // validation errors reported; the rest are dropped
}

// DefaultGraphQL are the limits of /graphql. The introspection query of
// GraphiQL needs depth 13 to 15 (graphql-js versions differ), about 200
// fields and no alias.
var DefaultGraphQL = GraphQL{
	Tokens:          10_000,
	Depth:           20,
	Fields:          500,
	Aliases:         100,
	FragmentSpreads: 200,
	SameResponseKey: 32,
	ValueDepth:      32,
	Mutations:       20,
	Errors:          50,
}

// The page of a Relay connection (engine): PageSize edges when neither
// first nor last is given, at most MaxPageSize.
const (
	PageSize    = 20
	MaxPageSize = 100
)

// Pages of the other lists. An export listing (export) answers page
// (from 1) of perPage documents: ExportPerPage when not given, at most
// MaxExportPerPage. The lists paged by number (webhook deliveries in
// webhooks, system status records in resolvers; docs/design.md "Lists"):
// ListPerPage when not given, at most MaxListPerPage; the system status
// records refuse a page past MaxListPage rather than compute an offset that
// overflows.
const (
	ExportPerPage    = 100
	MaxExportPerPage = 1000
	ListPerPage      = 25
	MaxListPerPage   = 100
	MaxListPage      = 1_000_000
)

// Lists a GraphQL field takes or answers (engine, unless named).
const (
	// MaxNodes bounds the ids of nodes(ids:).
	MaxNodes = 100
	// MaxConnectionClients bounds anomalyEventsConnection's clientIds.
	MaxConnectionClients = 100
	// MaxEventMeasurements caps the measurements AnomalyEvent.measurements
	// answers (the first of the event's).
	MaxEventMeasurements = 100
	// MaxClientSearchLength bounds the characters of clientsConnection's
	// filter.search (resolvers).
	MaxClientSearchLength = 255
	// MaxFilterValues bounds a filter's list of values (a webhook's in
	// webhooks, the anomaly events connection's).
	MaxFilterValues = 50
	// MaxResolveAnomalies bounds the anomaly ids of one resolve request
	// (spec "Limits"; resolvers).
	MaxResolveAnomalies = 500
	// MaxCapabilityListEntries bounds each measurement type and subject
	// list of a capability (resolvers).
	MaxCapabilityListEntries = 500
	// MaxGroupMembers bounds the clientIds given to a client group at
	// once (resolvers).
	MaxGroupMembers = 1000
	// MaxAssignmentIDs bounds the clients and the client groups of one
	// config assignment (resolvers).
	MaxAssignmentIDs = 10000
	// MaxWebhookHeaders bounds a webhook's headers, MaxWebhookMentions its
	// mentions of each kind (webhooks).
	MaxWebhookHeaders  = 20
	MaxWebhookMentions = 20
)

// The complexity of a GraphQL operation (server/complexity.go prices the
// fields).
const (
	// DocumentsKept is how many GraphQL documents each executor (/graphql,
	// REST's stored operations) keeps parsed and validated, and with them
	// what the checks of a document learn once: that its input is within
	// DefaultGraphQL, and its complexity when no variable changes it.
	DocumentsKept = 1000
	// Complexity caps how much one GraphQL operation may ask for.
	Complexity = 1000
	// SearchComplexity is what one search field (a Query DSL search, a
	// scroll page or an ES|QL query) counts against Complexity: each may
	// hold a database connection for up to the search time limit, so one
	// operation runs at most Complexity / SearchComplexity of them
	// (aliases included), not a thousand.
	SearchComplexity = 100
	// PageComplexityUnit is how many edges of a connection (or objects of
	// nodes) cost their selection once: a page of n costs its selection
	// ceil(n / PageComplexityUnit) times, so first: 100 costs ten times
	// first: 10, and a connection inside a connection multiplies.
	PageComplexityUnit = 10
)

// A search's page and scroll (docs/design.md "Lists"; search, search/pg,
// search/es): SearchSize documents when size is not given, size and
// from + size at most MaxSearchSize; a scroll keeps alive at most MaxScroll,
// and a data owner holds at most MaxOpenScrolls unexpired ones at once
// (Elasticsearch's default search.max_open_scroll_context): one more is a
// 429.
const (
	SearchSize     = 10
	MaxSearchSize  = 10000
	MaxScroll      = 5 * time.Minute
	MaxOpenScrolls = 500
)

// Size limits of a Query DSL body, checked by search.CheckDSL before
// anything is compiled. The embedded backend turns each clause, sort key,
// aggregation and query_string group into SQL that PostgreSQL must plan,
// and its planner cannot be interrupted while it does, so what reaches it
// is bounded here; a body over a limit is a 400 naming the limit (by the
// name it has here) and its value.
const (
	// MaxDSLDepth bounds the nesting of a body's values, MaxDSLNodes their
	// number.
	MaxDSLDepth = 64
	MaxDSLNodes = 100000
	// MaxDSLClauses bounds the query clauses of a body (every clause of
	// query, post_filter, bool, filter aggregations, ...; Elasticsearch's
	// indices.query.bool.max_clause_count is of the same order).
	MaxDSLClauses = 1024
	// MaxDSLSortKeys bounds the keys of one sort.
	MaxDSLSortKeys = 64
	// MaxDSLTermsValues bounds the values of one terms or ids query.
	MaxDSLTermsValues = 10000
	// MaxQueryStringLength bounds the text of one query_string query, in
	// bytes; MaxQueryStringDepth its nesting of parentheses.
	MaxQueryStringLength = 10000
	MaxQueryStringDepth  = 32
	// MaxDSLAggs bounds the aggregations of a body at all levels;
	// MaxDSLAggDepth their nesting (a top-level aggregation is level 1).
	MaxDSLAggs     = 100
	MaxDSLAggDepth = 8
	// MaxAggBuckets bounds the buckets of one response, all levels
	// together (Elasticsearch's search.max_buckets default; search/pg).
	MaxAggBuckets = 65536
	// MaxTopHitsSize bounds from + size of one top_hits aggregation,
	// MaxTopHitsDocuments the documents all its buckets return (search/pg).
	MaxTopHitsSize      = 100
	MaxTopHitsDocuments = 10000
	// MaxQueryPatterns bounds what the query of a search compiles to on
	// the embedded backend, priced before it runs: the text conditions
	// (match, match_phrase, prefix, wildcard, regexp, query_string and
	// simple_query_string terms) each PostgreSQL evaluates on every
	// document in scope, one per field named, AllFieldsPatterns for one on
	// every field ("*", query_string's default: each of a document's
	// leaves is matched). Within it, a search costs PostgreSQL about a
	// second per 100 documents at most; the probe's 1,990 OR'ed terms on
	// every field (127,360) held a connection 14 s on 31 documents.
	MaxQueryPatterns = 4096
	// AllFieldsPatterns is the price of one text condition on every field.
	AllFieldsPatterns = 64
)

// MaxWarnings bounds the warnings (Warning headers) one search or ES|QL
// request reports (search).
const MaxWarnings = 20

// Limits of what one ES|QL query may ask for, checked by esql.Parse before
// anything is compiled: the embedded backend turns every processing command
// and every EVAL column into one level of SQL, and PostgreSQL's planner
// cannot be interrupted while it expands expressions, so the size of what
// reaches it is bounded here (a query over a limit is a syntax-level error
// naming it).
const (
	// MaxCommands bounds the processing commands after FROM.
	MaxCommands = 64
	// MaxEvalColumns bounds the columns all EVAL commands compute together.
	MaxEvalColumns = 64
	// MaxExprDepth bounds the nesting of one expression (operators,
	// function calls and parentheses; a+b+c is two levels).
	MaxExprDepth = 64
	// MaxExprNodes bounds the operators, operands and calls of one
	// expression.
	MaxExprNodes = 1000
	// MaxQueryNodes bounds the expression nodes of the whole query.
	MaxQueryNodes = 5000
	// MaxESQLTokens bounds the lexical tokens of a query, MaxESQLBytes its
	// text (search reads the text for its indices' scope before esql.Parse
	// does).
	MaxESQLTokens = 20000
	MaxESQLBytes  = 64 << 10
	// MaxESQLNesting bounds the nesting the parser follows (expressions,
	// NOT and unary signs) before it stops ("expression nested too
	// deeply"); what it accepts still meets MaxExprDepth.
	MaxESQLNesting = 200
	// ESQLRows is how many rows a query without LIMIT answers on the
	// embedded backend (search/pg), MaxESQLRows the most any LIMIT
	// answers (a larger one is lowered to it, as Elasticsearch's
	// esql.query.result_truncation_max_size does).
	ESQLRows    = 1000
	MaxESQLRows = 10000
)

// Sizes of a request body.
const (
	// MaxBodyBytes caps the body of a REST request and of a /graphql
	// request (however it came: gzip, chunked): a 413.
	MaxBodyBytes = 1 << 20
	// MaxProbeBodyBytes caps the body of a client API request (after gzip
	// decompression): a 413. MaxReportDocuments caps the documents of one
	// report: a 400.
	MaxProbeBodyBytes  = 8 << 20
	MaxReportDocuments = 1000
)

// Time limits of a request.
const (
	// SearchTimeout is the time limit of each search, scroll page and
	// ES|QL query on the embedded backend (--search-timeout), at most
	// MaxSearchTimeout, the HTTP server's write timeout.
	SearchTimeout    = 30 * time.Second
	MaxSearchTimeout = 2 * time.Minute
	// RequestTimeout is the deadline of an API request (--request-timeout)
	// and StatementTimeout the statement_timeout of the server's
	// connections (--statement-timeout), both at most MaxRequestTimeout,
	// the HTTP server's write timeout.
	RequestTimeout    = 60 * time.Second
	StatementTimeout  = 60 * time.Second
	MaxRequestTimeout = 2 * time.Minute
)

// Time limits of the requests fleetgraph makes for a tenant.
const (
	// ESTimeout bounds each request of the Elasticsearch backend
	// (search/es): a cluster that stops answering fails the request
	// instead of holding it until the client gives up.
	ESTimeout = time.Minute
	// WebhookTimeout is the time limit of one webhook delivery attempt
	// (webhooks; --webhook-timeout), at most MaxRequestTimeout.
	WebhookTimeout = 15 * time.Second
)

// The answer budget of one operation (limits/budget; --max-answer-bytes).
const (
	AnswerBytes    = 32 << 20
	MinAnswerBytes = 64 << 10
	MaxAnswerBytes = 1 << 30
)

// Rate is Limit requests (or new clients) per Period
// (limits/ratelimit.Rate).
type Rate struct {
	Limit  int
	Period time.Duration
}

// ByteRate is Bytes answered per Period (limits/ratelimit.ByteRate).
type ByteRate struct {
	Bytes  int64
	Period time.Duration
}

// The rates of keys, data owners and probes (limits/ratelimit), each a
// setting of count/period or off.
var (
	KeyRate       = Rate{Limit: 1200, Period: time.Minute}
	DataOwnerRate = Rate{Limit: 6000, Period: time.Minute}
	ProbeRate     = Rate{Limit: 120, Period: time.Minute}
	// WebClientsRate: a data owner's client analytics keys create at most
	// 1,000 clients (license units) a day.
	WebClientsRate = Rate{Limit: 1000, Period: 24 * time.Hour}
	// AnswerBytesRate is what the heavy work of one data owner may answer;
	// its size is at least AnswerBytes, the budget of one request.
	AnswerBytesRate = ByteRate{Bytes: 1 << 30, Period: time.Minute}
)

// Ranges of a rate setting.
const (
	// MaxRateLimit bounds a rate's count: the emission interval must stay
	// at a microsecond or more, PostgreSQL's clock resolution.
	MaxRateLimit  = 1_000_000
	MinRatePeriod = time.Second
	MaxRatePeriod = 24 * time.Hour
)

// Refusals held (limits/ratelimit/hold.go).
const (
	// RepeatHold is how long a key refused again before its Retry-After
	// waits for its 429; at most MaxRepeatHold (a held request keeps its
	// connection).
	RepeatHold    = time.Second
	MaxRepeatHold = 10 * time.Second
	// MaxHeld bounds the refusals a server holds at a time (a held request
	// costs a goroutine and a connection); past it, refusals are answered
	// at once.
	MaxHeld = 1024
)

// AdmissionWait is how long heavy work over its share of the database
// waits for a place (limits/admission) before its 429, and
// BusyRetryAfterSeconds the Retry-After of that 429 (respond): about as
// long as the refused request waited.
const (
	AdmissionWait         = 2 * time.Second
	BusyRetryAfterSeconds = 2
)

// AdmissionSlots is the share of the database heavy work (searches,
// exports) may take, from the pool's size: a quarter of the pool (at least
// 2 connections) is kept for short requests, the rest (at least 1) may run
// heavy work, half of that (at least 1) for one data owner
// (limits/admission enforces it).
func AdmissionSlots(poolSize int) (slots, perOwner int) {
	reserved := max(2, poolSize/4)
	slots = max(1, poolSize-reserved)
	return slots, max(1, slots/2)
}

// Automatic persisted queries of /graphql (server/persisted.go), kept per
// data owner.
const (
	// PersistedQueriesPerOwner is how many registered queries /graphql
	// keeps for each data owner, its least recently used out first: one
	// data owner's registrations evict only its own.
	PersistedQueriesPerOwner = 200
	// PersistedQueryOwnerBytes bounds the queries kept for one data owner
	// (their lengths' sum): least recently used out first.
	PersistedQueryOwnerBytes = 512 << 10
	// PersistedQueryOwners is how many data owners' registrations are
	// kept, the least recently active out first: only as many other data
	// owners, each active since, evict one's registrations. With the byte
	// bound it bounds the cache's memory at 32 MiB.
	PersistedQueryOwners = 64
	// PersistedQueryMaxBytes is the longest query that is registered (a
	// longer one runs, but must always be sent whole).
	PersistedQueryMaxBytes = 32 << 10
)

// GraphQL subscriptions (eventhub).
const (
	// SubscriptionsPerKey is how many subscriptions one API key may hold
	// in one process, over every connection.
	SubscriptionsPerKey = 20
	// SubscriptionsPerConnection is how many one WebSocket connection may
	// hold.
	SubscriptionsPerConnection = 10
	// SubscriberLag is how many events a subscriber may lag behind; one
	// that lags more is ended (the client resubscribes) rather than let
	// the process's memory grow.
	SubscriberLag = 256
	// SubscriptionCatchUp is how many events a resync reads per data
	// owner.
	SubscriptionCatchUp = 500
)

// The AI assistant (assistant, assistant/chat; docs/admin-api.md "AI
// assistant").
const (
	// AIMonthlyTokens is the default monthly token limit (prompt and
	// completion) of a data owner's AI assistant (--ai-monthly-tokens).
	AIMonthlyTokens = 1_000_000
	// MaxAISteps is the most model calls of one turn: after MaxAISteps-1
	// calls that asked for tools, the last one is offered no tools.
	MaxAISteps = 6
	// MaxAIToolCalls is the most tool calls of one turn; calls past it are
	// answered "not run" and the next model call gets no tools.
	MaxAIToolCalls = 8
	// MaxAIToolResultBytes bounds what one tool result gives the model
	// (and the stream): a longer one is cut and marked truncated.
	MaxAIToolResultBytes = 16 << 10
	// AICallTimeout bounds each model call.
	AICallTimeout = 60 * time.Second
	// AIOutputTokens is the output limit of a model call (the Messages API
	// requires one; chat completions get the same), AITitleTokens that of
	// the call that titles a conversation: each call reserves it from the
	// month's tokens before it starts.
	AIOutputTokens = 2048
	AITitleTokens  = 32
	// MaxAIContextMessages is the most earlier messages sent to the model;
	// older ones are left out (the system prompt says how many).
	MaxAIContextMessages = 20
	// MaxAIContextChars bounds the text of the messages sent, newest kept.
	MaxAIContextChars = 32_000
	// MaxAIToolHits bounds the documents one search tool reads.
	MaxAIToolHits = 20
	// MaxAIToolPartChars bounds one tool result of an earlier message,
	// MaxAIDataPartChars one data part (the context of an explanation).
	MaxAIToolPartChars = 2_000
	MaxAIDataPartChars = 12_000
	// MaxAIConversationMessages bounds the messages of one conversation.
	MaxAIConversationMessages = 500
)
