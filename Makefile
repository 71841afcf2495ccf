# fleetgraph — one command each. `make help` lists them.
.DEFAULT_GOAL := help
GO ?= go

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

assets: ## fetch GraphiQL from npm (pinned) into graphiql/dist and build the dashboard into dashboard/dist, for the binary
	bash graphiql/build.sh
	bash dashboard/build.sh

# GRAPHIQL_DIST are the files graphiql/build.sh writes; run rebuilds them
# (and so needs Node.js) only when one is missing or older than what they
# are built from.
GRAPHIQL_DIST := $(addprefix graphiql/dist/,react.production.min.js react-dom.production.min.js graphiql.min.js graphiql.min.css)
$(GRAPHIQL_DIST) &: graphiql/package.json graphiql/package-lock.json graphiql/build.sh
	bash graphiql/build.sh

# The dashboard's build (dashboard/build.sh: npm ci when stale, vite build),
# again when its sources are newer than the built page.
DASHBOARD_SRC := $(filter-out dashboard/src/graphql-env.d.ts,$(wildcard dashboard/src/*.ts dashboard/src/*.tsx dashboard/src/*.css dashboard/src/*/*.tsx))
dashboard/dist/index.html: dashboard/package.json dashboard/package-lock.json dashboard/build.sh dashboard/index.html dashboard/vite.config.ts $(DASHBOARD_SRC)
	bash dashboard/build.sh

dashboard-check: ## the dashboard's GraphQL documents type-checked against server/testdata/schema.graphql (gql.tada), tsc --noEmit, eslint
	bash dashboard/build.sh --install-only
	cd dashboard && npm run --silent check

run: $(GRAPHIQL_DIST) dashboard/dist/index.html ## run fleetgraph on its embedded default (local or private PostgreSQL)
	@echo "make run: compiling fleetgraph (the first build takes about 3 minutes on 2 cores; later ones seconds), then starting it"
	$(GO) run ./cmd/fleetgraph serve

build: assets ## build bin/fleetgraph
	$(GO) build -o bin/fleetgraph ./cmd/fleetgraph

bench-api: ## fleetgraph vs PostGraphile and a hand-written handler (ROUNDS, ROUND, ONLY: see bench/api.sh)
	bash bench/api.sh
.PHONY: bench-api

generate: ## regenerate graph/ and the resolver stubs from schema/ (gqlgen, pinned as a Go tool)
	$(GO) generate ./...

# TESTFLAGS are go test's flags of make test: CI's second run, without a
# PostgreSQL server, leaves out the race detector the first one had.
TESTFLAGS ?= -race
test: ## run every test with the race detector (needs PostgreSQL binaries or a server); stops the private PostgreSQL the tests may have started
	@status=0; $(GO) test $(TESTFLAGS) -count=1 ./... || status=$$?; $(GO) run ./store/testdb/stop || status=1; exit $$status

lint: ## go vet and staticcheck (pinned as a Go tool in go.mod)
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

openapi-lint: ## lint the REST APIs' generated OpenAPI documents (Redocly CLI, pinned in tools/openapi)
	bash tools/openapi/lint.sh

FUZZTIME ?= 15s
fuzz: ## run the search isolation fuzzers briefly (FUZZTIME each)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckDSL$$' -fuzztime $(FUZZTIME)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckESQL$$' -fuzztime $(FUZZTIME)

# GENERATED are the paths `go generate ./...` writes: gqlgen.yml's exec and
# model under graph/, resolver stubs under resolvers/, and go.mod/go.sum,
# which gqlgen tidies.
GENERATED := graph resolvers go.mod go.sum
check: ## CI checks: gofmt, generated code up to date and committed, lint, the OpenAPI lint, relative links of every Markdown file, the tests, then the fuzzers briefly
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) mod tidy -diff
	$(GO) generate ./...
	@changed="$$(git status --porcelain --untracked-files=all -- $(GENERATED))"; \
	test -z "$$changed" || { echo "$$changed"; echo "generated code is stale or not committed (changed or untracked files above): run make generate (and go mod tidy) and commit"; exit 1; }
	$(MAKE) lint
	$(MAKE) openapi-lint
	sh tools/doclinks.sh $$(git ls-files '*.md')
	$(MAKE) test
	$(MAKE) fuzz

.PHONY: help assets run build generate test lint openapi-lint fuzz check dashboard-check
