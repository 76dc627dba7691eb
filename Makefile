# hcpops: two commands matter on a fresh machine: `make run` and `make test`.

# go.mod needs Go 1.27; a machine's own Go 1.26 (GOTOOLCHAIN=local in its go.env)
# ignores go.mod's toolchain line, so name the toolchain here: the go command
# fetches it from the module proxy once. `make GOTOOLCHAIN=local` opts out.
export GOTOOLCHAIN = go1.27.3

GO        ?= go
BIN       := bin/hcpopsctl
DIST      := dist/functionapp
OPSCTL    := dist/hcpopsctl
FUNCTIONS := $(notdir $(wildcard functions/*))
TESTFLAGS ?= -count=1 -timeout 10m

.PHONY: build run run-cosmos test test-short vet lint lint-tool cover bench bench-go soak dst package clean

# Three binaries: bin/hcpopsctl is the developer's (the operator's commands
# on the local store, and serve, dev, submit, sink, history, top,
# cs-simulator, bench); dist/functionapp/hcpops is the Function App's, built
# from cmd/hcpops: the custom handler alone; dist/hcpopsctl is the
# operator's CLI, built from cmd/hcpopsctl for this machine: ops, ops
# fail/cancel, status and doc on the app's Cosmos DB. The shipped two link
# no harness and no bbolt (each one's deps_test.go).
build:
	$(GO) build -o $(BIN) ./harness/cmd/hcpopsctl
	rm -rf $(DIST) && mkdir -p $(DIST)
	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(DIST)/hcpops ./cmd/hcpops
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(OPSCTL) ./cmd/hcpopsctl
	cp host.json $(DIST)/
	for f in $(FUNCTIONS); do \
	  if [ -f functions/$$f/function.json ]; then mkdir -p $(DIST)/$$f && cp functions/$$f/function.json $(DIST)/$$f/; fi; \
	done

# RUNFLAGS go to hcpopsctl dev, e.g. RUNFLAGS=-v (logs copied to stderr) or
# RUNFLAGS=-samples=false. The first build compiles every dependency; it
# says so rather than sit silent for minutes.
RUNFLAGS ?=
run:
	@test -x $(BIN) || echo "make run: first build of $(BIN): compiling hcpops and its dependencies, about 3-4 minutes on 2 cores (later builds take seconds)"
	@$(GO) build -o $(BIN) ./harness/cmd/hcpopsctl
	$(BIN) dev $(RUNFLAGS)

# make run on the database instead of the embedded store: starts the
# project's Cosmos-compatible server (tools/cosmos-test-server, installed
# with npm ci on first use; in memory) on loopback over https with its
# local managed identity, and runs hcpopsctl dev against it through
# azidentity, with the same samples and table; bin/run-cosmos.env holds the
# environment for a frontend beside it (docs/beside-a-frontend.md). COSMOS_PORT fixes its port
# (0: a free one), e.g. for a frontend beside it.
COSMOS_PORT ?= 0
run-cosmos:
	@test -x $(BIN) || echo "make run-cosmos: first build of $(BIN): compiling hcpops and its dependencies, about 3-4 minutes on 2 cores (later builds take seconds)"
	@$(GO) build -o $(BIN) ./harness/cmd/hcpopsctl
	COSMOS_ENV_FILE=$(CURDIR)/bin/run-cosmos.env tools/cosmos-test-server/with-server.sh $(COSMOS_PORT) $(BIN) dev $(RUNFLAGS)

# The test target pipes go test's events through harness/cmd/testsummary, so a
# failure anywhere in the pipe fails the target.
SHELL := bash

# Every test, a line per package, and one closing line: tests passed,
# failed and skipped, packages and time. Without node and npm the Cosmos DB
# tests fail unless HCPOPS_SKIP_COSMOS_TESTS=1; either way the closing line
# says so. gofmt, go vet and golangci-lint run first; go test's events are
# kept in bin/test-events.json (e.g. for the slowest tests).
test: vet lint
	@note=""; \
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  if [ "$$HCPOPS_SKIP_COSMOS_TESTS" = 1 ]; then note="node/npm not found: the Cosmos DB tests were SKIPPED (HCPOPS_SKIP_COSMOS_TESTS=1)"; \
	  else note="node/npm not found: the Cosmos DB tests FAILED; install node >= 20 and npm, or set HCPOPS_SKIP_COSMOS_TESTS=1"; fi; \
	fi; \
	if [ -f bin/lint-built.note ]; then note="$${note:+$$note; }$$(cat bin/lint-built.note)"; rm -f bin/lint-built.note; fi; \
	$(GO) build -o bin/testsummary ./harness/cmd/testsummary && \
	set -o pipefail && $(GO) test -json $(TESTFLAGS) ./... | tee bin/test-events.json | bin/testsummary -note "$$note"

# The unit layer alone: no child process, node, tmux or real-time wait
# (docs/testing.md); seconds, not minutes.
test-short:
	$(GO) test -count=1 -short ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

# golangci-lint at a pinned version, built from the module proxy with the
# module's toolchain into bin/ on first use (about 5 minutes on 2 cores;
# later runs reuse it; make test's closing line says when it was built).
# .golangci.yml says which linters run.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

$(GOLANGCI_LINT):
	@echo "make: building golangci-lint $(GOLANGCI_LINT_VERSION) into $(dir $@): first use only, about 5 minutes on 2 cores"
	@start=$$(date +%s) && \
	  GOBIN=$(CURDIR)/$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) && \
	  echo "golangci-lint was built first ($$(( $$(date +%s) - start ))s, once; later runs reuse it)" > bin/lint-built.note

lint-tool: $(GOLANGCI_LINT)
	@$(GOLANGCI_LINT) version

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

# Statement coverage per package, counted over every test of the module
# (a package's statements run by any package's tests count), written to
# bin/cover/coverage.txt; a core package under COVER_MIN% is marked and
# fails the target. The packages that test others (storetest, cosmostest,
# embeddedtest, simtest, testserver) are listed but not held to it: what
# they leave unrun is their benchmarks and the reports of a store breaking
# its contract, which run only when something is wrong. COVERFLAGS go to
# go test, e.g. COVERFLAGS=-short for the unit layer alone.
COVERFLAGS ?= -count=1 -timeout 30m
COVER_MIN ?= 80
cover:
	rm -rf bin/cover && mkdir -p bin/cover/data
	GOCOVERDIR=$(CURDIR)/bin/cover/data $(GO) test $(COVERFLAGS) -cover -coverpkg=./... ./... -args -test.gocoverdir=$(CURDIR)/bin/cover/data > bin/cover/test.log 2>&1 || (tail -50 bin/cover/test.log; exit 1)
	set -o pipefail; $(GO) tool covdata percent -i=bin/cover/data | \
	  awk -v min=$(COVER_MIN) -v mod=$$($(GO) list -m)/ '{ pkg = $$1; sub(mod, "", pkg); pct = $$3; sub("%", "", pct); \
	    harness = (pkg ~ /test(server)?$$/); \
	    mark = (pkg ~ /^core\// && !harness && pct + 0 < min) ? "  below " min "%" : ""; \
	    if (harness) mark = "  (test harness)"; \
	    if (mark ~ /below/) low++; printf "%-45s %6.1f%%%s\n", pkg, pct, mark } \
	    END { if (low) { printf "%d core packages below %d%%\n", low, min; exit 1 } }' | tee bin/cover/coverage.txt

# The table in the issue notes: poll fan-out, dispatch, handler, cold start.
bench:
	mkdir -p bench/results
	$(GO) run ./harness/cmd/hcpopsctl bench -rounds 3 -out bench/results/latest.json

# The deterministic simulation (harness/dst, docs/testing.md): SEEDS runs from
# FROM (make test runs a fixed set), DURATION stops starting new ones after
# that much wall-clock time; SEED=N replays one seed with its whole trace
# (narrowed to the fault windows it needs; DROP=i,j replays it so).
SEEDS    ?= 10000
FROM     ?= 1
DURATION ?= 0
SEED     ?=
DROP     ?=
dst:
	@if [ -n "$(SEED)" ]; then \
	  $(GO) test -count=1 -run 'TestSimulation$$' ./harness/dst -seed $(SEED) -drop '$(DROP)' -v; \
	else \
	  set -o pipefail; $(GO) test -count=1 -timeout 0 -run 'TestSimulation$$' ./harness/dst -seeds $(SEEDS) -from $(FROM) -duration $(DURATION) -v \
	    | grep -v '^=== RUN'; \
	fi

# The long fault-injection soak (a short one runs in make test); SOAKFLAGS
# e.g. "-ops 3000 -duration 5m -seed 7".
SOAKFLAGS ?=
soak:
	$(GO) build -o $(BIN) ./harness/cmd/hcpopsctl
	$(GO) run ./harness/cmd/soak -handler $(BIN) $(SOAKFLAGS)

# Package micro-benchmarks (go test -bench).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

package: build
	cd $(DIST) && rm -f ../functionapp.zip && zip -qr ../functionapp.zip .

clean:
	rm -rf bin dist
