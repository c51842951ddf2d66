# clearing: build, test, demo, bench, lint.
#
# make test needs Go and PostgreSQL's server binaries (initdb, pg_ctl, postgres).
# It uses CLEARING_TEST_DATABASE_URL when set; otherwise it starts a throw-away
# cluster for the run and stops it afterwards.

GO          ?= go
BIN         := bin/clearing
# make install follows the GNU conventions: PREFIX, and DESTDIR for staging.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s

# Tests read the shared corpus of third-party files from here when it exists.
CLEARING_CORPUS ?= $(wildcard $(abspath ../shared/corpus))
export CLEARING_CORPUS

.PHONY: build man install test test-double test-citus demo bench bench-check bench-scale lint fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/clearing

# One page per command, from the command tree; commit man/ after a change
# (a test fails while man/ differs from the tree).
man: build
	./$(BIN) man man

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/clearing
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1

test:
	$(GO) run ./cmd/pgtestcluster -- $(GO) test -count=1 -timeout 30m ./...

# The integration suite again, with every ingest, statement import and
# approval applied twice: what it asserts about the ledger must still hold.
test-double:
	$(GO) run ./cmd/pgtestcluster -- env CLEARING_TEST_DOUBLE_APPLY=1 $(GO) test -count=1 -timeout 30m ./cmd/clearing

# The integration suite on a throw-away Citus cluster (a coordinator and two
# workers on local ports), every test database distributed by tenant.
# CITUS_PACKAGES runs a part of it; CITUS_SKIP, a regular expression for go
# test -skip, leaves out tests that do not pass there yet (.ci/run names
# them). The extension is installed from ../shared/citus when it is missing
# and this is root; without it the target says so and passes, except under
# CI=true.
CITUS_INSTALL  ?= $(wildcard $(abspath ../shared/citus/install.sh))
CITUS_PACKAGES ?= ./...
CITUS_SKIP     ?=
test-citus:
	@if [ -n "$(CITUS_INSTALL)" ] && [ "$$(id -u)" = 0 ]; then bash "$(CITUS_INSTALL)" || echo "test-citus: could not install Citus" >&2; fi
	$(GO) run ./cmd/pgtestcluster -citus -- $(GO) test -count=1 -timeout 30m $(if $(CITUS_SKIP),-skip '$(CITUS_SKIP)') $(CITUS_PACKAGES)

demo: build
	./scripts/demo.sh $(BIN)

# Benchmarks (docs/BENCHMARKS.md says what each measures). BENCH_FLAGS adds
# flags (-records N, -runs N, -database-url URL); BENCH_OUT= writes no file.
BENCH_FLAGS ?=
BENCH_OUT   ?= docs/BENCHMARKS.md

# Every figure at 1,000,000 records, three times over.
bench: build
	$(GO) run ./cmd/bench -clearing $(BIN) -out '$(BENCH_OUT)' $(BENCH_FLAGS)

# The independent check at 200,000 ACH entries; prints its table.
bench-check: build
	$(GO) run ./cmd/bench -check -clearing $(BIN) $(BENCH_FLAGS)

# 9,980,000 ACH entries, the most one ACH file holds, against 998,000 (not in CI: 23 to 35 minutes here and
# about 25 GiB of disk).
bench-scale: build
	$(GO) run ./cmd/bench -scale -clearing $(BIN) -out docs/BENCHMARKS-scale.md $(BENCH_FLAGS)

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# A short coverage-guided run of every fuzz target.
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
