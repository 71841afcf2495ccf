# fleetgraph — one command each. `make help` lists them.
.DEFAULT_GOAL := help
GO ?= go

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

assets: ## fetch GraphiQL from npm (pinned) into graphiql/dist for the binary
	bash graphiql/build.sh

run: assets ## run fleetgraph on its embedded default (local or private PostgreSQL)
	$(GO) run ./cmd/fleetgraph serve

build: assets ## build bin/fleetgraph
	$(GO) build -o bin/fleetgraph ./cmd/fleetgraph

bench-api: ## fleetgraph vs PostGraphile and a hand-written handler (ROUNDS, ROUND, ONLY: see bench/api.sh)
	bash bench/api.sh
.PHONY: bench-api

generate: ## regenerate graph/ from schema/ (gqlgen, pinned as a Go tool)
	$(GO) generate ./...

test: ## vet and run every test with the race detector (needs PostgreSQL binaries or a server)
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

FUZZTIME ?= 15s
fuzz: ## run the search isolation fuzzers briefly (FUZZTIME each)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckDSL$$' -fuzztime $(FUZZTIME)
	$(GO) test ./search -run '^$$' -fuzz '^FuzzCheckESQL$$' -fuzztime $(FUZZTIME)

check: ## CI checks: gofmt, generated code up to date, the tests, then the fuzzers briefly
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) generate ./...
	@git diff --exit-code -- graph resolvers || { echo "generated code is stale: run make generate"; exit 1; }
	$(MAKE) test
	$(MAKE) fuzz

.PHONY: help assets run build generate test fuzz check
