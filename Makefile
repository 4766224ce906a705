GO      ?= go
# ./service, not bin/service: the README's commands run it as ./service.
BIN     ?= ./service
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X service/cmd.Version=$(VERSION)

.PHONY: build run test race bench load soak lint cover fuzz clean sdk-test test-postgres test-postgres-schema load-postgres load-replicas

build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) .

run:
	$(GO) run . serve --db data.db

# The whole suite, then the whole suite again under the race detector,
# which needs a C compiler (cgo); without one the race run is skipped, loudly.
# The race detector slows SQLite (modernc) many times over, and a loaded
# machine more again: a package that takes seconds can near go test's
# default 10-minute limit, so the limit is raised rather than risked.
TEST_TIMEOUT ?= 30m

# The race run leaves out cmd's end-to-end tests: they drive the service as
# a binary of its own, built without the detector, which sees nothing of it.
# cmd's in-process tests (RACE_CMD) do run under it. The longest packages
# come first, so that the short ones fill the other core behind them rather
# than a long one starting last.
RACE_FIRST = ./store ./handlers ./dashboard ./webhooks
RACE_PACKAGES = $(RACE_FIRST) $$($(GO) list ./... | grep -vE '^service/(cmd|store|handlers|dashboard|webhooks)$$')
RACE_CMD = -run '^(TestLogBuffer|TestInvokedAs|TestShellQuote)$$' ./cmd

# The suite on SQLite and the PostgreSQL run go side by side: both spend
# most of their time waiting (on the binaries, servers and browsers their
# end-to-end tests start, on their timers), about one core of two between
# them, and neither touches the other's databases. The PostgreSQL run's
# output is held back until the SQLite run ends, so that the two do not
# interleave. The race run, which keeps both cores busy, comes after.
# The dashboard's browser tests need Chromium; without it they are skipped, loudly.
test: lint
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$CHROMIUM" ]; then \
	  echo "make test: dashboard browser tests run in headless Chromium; screenshots in $${DASHBOARD_SCREENSHOTS:-$${TMPDIR:-/tmp}/service-dashboard-screenshots}"; \
	else echo "!!! make test: chromium not found: the dashboard browser tests will be SKIPPED (apt-get install chromium) !!!"; fi
	@pglog=$$(mktemp); trap 'rm -f "$$pglog"' EXIT; \
	echo "make test: the PostgreSQL run (make test-postgres) goes beside the SQLite run; its output follows it"; \
	$(MAKE) --no-print-directory test-postgres >"$$pglog" 2>&1 & pg=$$!; \
	echo "$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./..."; \
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...; rc=$$?; \
	wait $$pg; pgrc=$$?; \
	echo "--- make test-postgres (beside the SQLite run):"; cat "$$pglog"; \
	[ $$pgrc -eq 0 ] || echo "make test: the PostgreSQL run FAILED (exit $$pgrc)"; \
	[ $$rc -eq 0 ] && [ $$pgrc -eq 0 ]
	@if command -v gcc >/dev/null 2>&1; then \
	  echo "CGO_ENABLED=1 $(GO) test -count=1 -race ./... (cmd: its in-process tests only)"; \
	  CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) $(RACE_PACKAGES) && \
	  CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) $(RACE_CMD); \
	else echo "make test: no gcc, race detector run skipped"; fi
	@$(MAKE) --no-print-directory sdk-test

# The PostgreSQL run: the suites that touch the database again, on
# PostgreSQL (but for cmd's real-Chromium tests of the dashboard's pages,
# whose queries the dashboard package's own tests run on PostgreSQL),
# through scripts/with-postgres.sh, which starts a throwaway server (from Debian's postgresql package, or PG_BINDIR) and stops it at
# the end, or uses SERVICE_TEST_POSTGRES_URL's server when that is set.
# Without PostgreSQL's server binaries the run is skipped, loudly.
# cmd, the longest, comes first (see RACE_FIRST).
PG_PACKAGES ?= ./cmd ./store ./handlers ./dashboard ./scheduler ./webhooks ./metrics
test-postgres:
	@./scripts/with-postgres.sh env SERVICE_TEST_STORE=postgres $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -skip 'InBrowser$$' $(PG_PACKAGES); rc=$$?; \
	if [ $$rc -eq 3 ]; then \
	  echo "****************************************************************************"; \
	  echo "*** make test: no PostgreSQL server binaries: the PostgreSQL run was SKIPPED ***"; \
	  echo "*** (apt-get install postgresql, or set PG_BINDIR or SERVICE_TEST_POSTGRES_URL) ***"; \
	  echo "****************************************************************************"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

# Rewrites migrations/postgres/schema.sql from the PostgreSQL migrations.
test-postgres-schema:
	./scripts/with-postgres.sh env SERVICE_TEST_STORE=postgres $(GO) test -count=1 ./store -run '^TestSchema$$' -update

# The JavaScript SDK (sdk/js): types (with the DOM lib and without), unit
# tests, integration and exit tests against a binary built once here, the
# npm pack install test (a CommonJS and an ES module project), and the
# headless Chromium test of the example page (which skips itself without
# Chromium).
# Then the tests that drive the service's storage through the SDK (local
# evaluation end to end, GrowthBook's comparison, the integration tests)
# again on PostgreSQL, each service on a database of its own on the server
# scripts/with-postgres.sh starts: after the SQLite run, so that it costs
# that run nothing. Skipped, loudly, without PostgreSQL's server binaries.
SDK_PG_TESTS ?= test/local-e2e.test.js test/growthbook.test.js test/integration.test.js
sdk-test:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "*****************************************************************"; \
	  echo "*** make test: node/npm not found: JavaScript SDK tests SKIPPED ***"; \
	  echo "*****************************************************************"; \
	  exit 0; fi; \
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	CGO_ENABLED=0 $(GO) build -o "$$tmp/service" .; \
	cd sdk/js; npm ci --no-audit --no-fund; \
	npx tsc --noEmit -p tsconfig.json; \
	npx tsc --noEmit -p tsconfig.node.json; \
	SERVICE_TEST_STORE=sqlite SERVICE_BIN="$$tmp/service" node --test test/*.test.js; \
	rc=0; ../../scripts/with-postgres.sh env SERVICE_TEST_STORE=postgres SERVICE_BIN="$$tmp/service" node --test $(SDK_PG_TESTS) || rc=$$?; \
	if [ $$rc -eq 3 ]; then \
	  echo "*******************************************************************************"; \
	  echo "*** make test: no PostgreSQL server binaries: the SDK's PostgreSQL run SKIPPED ***"; \
	  echo "*** (apt-get install postgresql, or set PG_BINDIR or SERVICE_TEST_POSTGRES_URL) ***"; \
	  echo "*******************************************************************************"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

race:
	CGO_ENABLED=1 $(GO) test -count=1 -race -timeout $(TEST_TIMEOUT) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

load: build
	BIN=$(BIN) ./scripts/load.sh

soak: build
	BIN=$(BIN) ./scripts/load.sh soak

# make load on PostgreSQL (see scripts/load.sh).
load-postgres: build
	STORE=postgres BIN=$(BIN) ./scripts/load.sh

# Two replicas on two cores against one on one core, on PostgreSQL.
load-replicas: build
	BIN=$(BIN) ./scripts/load.sh scale

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

cover:
	$(GO) test -count=1 -coverprofile=cover.out ./...
	$(GO) tool cover -func=cover.out | tail -1

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./handlers

clean:
	rm -rf bin ./service cover.out
