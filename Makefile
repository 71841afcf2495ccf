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

# bin/fleetgraph is built with go build -v, whose package names are counted
# into a progress line every 50 packages: the first build compiles about 680
# packages (go list -deps ./cmd/fleetgraph | wc -l) and is otherwise silent
# for minutes. Go's own messages (downloads, errors) pass through.
FLEETGRAPH_PKGS := 680
compile: $(GRAPHIQL_DIST) dashboard/dist/index.html
	@echo "make: Go modules (downloaded once; go mod download)"
	@$(GO) mod download
	@echo "make: compiling bin/fleetgraph (the first build compiles about $(FLEETGRAPH_PKGS) packages, minutes on 2 cores; later builds seconds)"
	@{ $(GO) build -v -o bin/fleetgraph ./cmd/fleetgraph 2>&1; echo "exit=$$?"; } | awk \
		'/^exit=/ { code = substr($$0, 6); next } \
		/^(go: |#|[^ ]+\.go:|\t)/ { print; next } \
		{ n++; if (n % 50 == 0) printf "make:   %d of about $(FLEETGRAPH_PKGS) packages compiled\n", n } \
		END { if (n >= 50) printf "make:   %d packages compiled\n", n; exit code }'

run: compile ## run fleetgraph on its embedded default (local or private PostgreSQL); SERVE_FLAGS adds serve flags
	./bin/fleetgraph serve $(SERVE_FLAGS)

demo: compile ## run fleetgraph with a demo data owner (12 probes, measurements, health) and print its keys
	./bin/fleetgraph serve --demo $(SERVE_FLAGS)

build: assets compile ## build bin/fleetgraph

bench-api: ## fleetgraph vs PostGraphile and a hand-written handler (ROUNDS, ROUND, ONLY: see bench/api.sh)
	bash bench/api.sh
.PHONY: bench-api

generate: ## regenerate graph/ and the resolver stubs from schema/ (gqlgen, pinned as a Go tool)
	$(GO) generate ./...

# make test runs every test once, and the race detector over RACE_PKGS: the
# packages whose own goroutines share state (caches, hubs, gates, limiters,
# batched writers, the indexer), so a newcomer waits minutes, not half an
# hour. CI (make check) runs every package under the race detector
# (TESTFLAGS=-race RACE_PKGS=); TESTFLAGS are go test's flags for the whole
# run.
RACE_PKGS ?= ./limits/... ./clientapi ./importer ./loaders ./notify ./obs ./rest \
	./detector ./engine ./eventhub ./jobs ./listener ./resolvers ./search/es ./search/pg ./store ./webhooks
TESTFLAGS ?=
test: ## run every test, the race detector over the packages whose goroutines share state (needs PostgreSQL binaries or a server); stops the private PostgreSQL the tests may have started
	@status=0; \
	echo "make test: every package (go test -count=1 $(TESTFLAGS) ./...)"; \
	$(GO) test $(TESTFLAGS) -count=1 ./... || status=$$?; \
	if [ -n "$(strip $(RACE_PKGS))" ]; then \
		echo "make test: the race detector over $(RACE_PKGS)"; \
		$(GO) test -race -count=1 $(RACE_PKGS) || status=$$?; \
	fi; \
	$(GO) run ./store/testdb/stop || status=1; exit $$status

lint: ## go vet and staticcheck (pinned as a Go tool in go.mod)
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

openapi-lint: ## lint the REST APIs' generated OpenAPI documents (Redocly CLI, pinned in tools/openapi)
	bash tools/openapi/lint.sh

# A count of executions, not a duration: with a duration Go 1.26's fuzzing
# coordinator can report its own deadline as a failure at the end
# ("context deadline exceeded", no failing input; go.dev/issue/75804, fixed
# in Go 1.27); it did in a CI run. 500,000 take about 12 s here.
FUZZTIME ?= 500000x
fuzz: ## run the search isolation fuzzers briefly (FUZZTIME each)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckDSL$$' -fuzztime $(FUZZTIME)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckESQL$$' -fuzztime $(FUZZTIME)

# GENERATED are the paths `go generate ./...` writes: gqlgen.yml's exec and
# model under graph/, resolver stubs under resolvers/, and go.mod/go.sum,
# which gqlgen tidies.
GENERATED := graph resolvers go.mod go.sum
check: ## CI checks: gofmt, generated code up to date and committed, lint, the dashboard's type check and lint, the OpenAPI lint, relative links of every Markdown file, the tests, then the fuzzers briefly
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) mod tidy -diff
	$(GO) generate ./...
	@changed="$$(git status --porcelain --untracked-files=all -- $(GENERATED))"; \
	test -z "$$changed" || { echo "$$changed"; echo "generated code is stale or not committed (changed or untracked files above): run make generate (and go mod tidy) and commit"; exit 1; }
	$(MAKE) lint
	$(MAKE) dashboard-check
	$(MAKE) openapi-lint
	sh tools/doclinks.sh $$(git ls-files '*.md')
	$(MAKE) test TESTFLAGS=-race RACE_PKGS=
	$(MAKE) fuzz

.PHONY: help assets compile run demo build generate test lint openapi-lint fuzz check dashboard-check
