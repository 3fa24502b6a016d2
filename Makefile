# The two commands a newcomer needs: `make run` and `make test`.
# `make test` installs what the tests need (Debian's mariadb-server and
# chromium, as root) when missing, checks that generated code (templ, the Go
# client of api/openapi.json, the static files' compressed forms) is up to date, gofmt, go vet, staticcheck,
# module tidiness and the OpenAPI document (vacuum's recommended rules, no
# errors), then runs every test: storage, API and console against SQLite and
# a private MariaDB server, and the browser journeys in headless Chromium.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO ?= go
STATICCHECK_VERSION ?= v0.8.2

.PHONY: run build test check generate deps bench loadbench exportbench backupbench fuzz clean

# CGO_ENABLED=0: the pure-Go build, as shipped (and no C compile of the
# SQLite that GORM's dialector links only as a stub without cgo).
run:
	CGO_ENABLED=0 $(GO) run .

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o petstore .

test: deps check
	PETSTORE_REQUIRE_MARIADB=1 PETSTORE_REQUIRE_BROWSER=1 PETSTORE_REQUIRE_GALERA=1 $(GO) test -count=1 -race -timeout=30m ./...
	$(MAKE) fuzz

# fuzz runs each fuzz target briefly (FUZZTIME each); the seed corpora under
# */testdata/fuzz also run as plain tests. A failing input is saved there.
# A count, not a duration: a duration's deadline can end a healthy run with
# "context deadline exceeded" when it falls while a worker is busy (seen in
# CI on a loaded machine), and a count does the same work on any machine.
FUZZTIME ?= 10000x
fuzz:
	@for t in FuzzCreatePetBody FuzzListPetsQuery FuzzBearerToken FuzzAppendJSONString FuzzDecodePetInput FuzzIdempotencyKey; do \
		echo "fuzz $$t ($(FUZZTIME))"; $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) ./api || exit 1; done
	@for t in FuzzPetInputValidate FuzzParsePetQuery FuzzSearchWords; do \
		echo "fuzz $$t ($(FUZZTIME))"; $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) ./models || exit 1; done

# generate rewrites the generated code (committed, never edited by hand): the
# templ components' Go code, the partner Go client from api/openapi.json
# (oapi-codegen, pinned in api/client/generate.go), and the static files'
# zstd and gzip forms under static/compressed (embedded; none is made at run
# time).
generate:
	$(GO) tool templ generate -path templates
	$(GO) generate ./api/client
	$(GO) generate ./static

check:
	@before="$$(cat templates/*_templ.go | sha256sum)"; \
	$(GO) tool templ generate -path templates >/dev/null 2>&1; \
	if [ "$$before" != "$$(cat templates/*_templ.go | sha256sum)" ]; then \
		echo "templates/*_templ.go were stale: regenerated now; review and commit them"; exit 1; fi
	@before="$$(cat api/client/*.gen.go | sha256sum)"; \
	if ! out="$$($(GO) generate ./api/client 2>&1)"; then \
		echo "$$out"; echo "go generate ./api/client failed"; exit 1; fi; \
	if [ "$$before" != "$$(cat api/client/*.gen.go | sha256sum)" ]; then \
		echo "api/client/client.gen.go was stale: regenerated; commit it"; exit 1; fi
	@sum() { (cd static && find compressed -type f | LC_ALL=C sort | xargs -r sha256sum) | sha256sum; }; \
	before="$$(sum)"; \
	if ! out="$$($(GO) generate ./static 2>&1)"; then \
		echo "$$out"; echo "go generate ./static failed"; exit 1; fi; \
	if [ "$$before" != "$$(sum)" ]; then \
		echo "static/compressed was stale: regenerated; review and commit it (git add -A static/compressed)"; exit 1; fi
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) -C api/lint mod tidy -diff
	CGO_ENABLED=0 $(GO) build -o /dev/null .
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) -C api/lint tool vacuum lint --no-update-check -b -q -d ../openapi.json

# deps installs what the tests need: the MariaDB server the tests start
# privately, Chromium for the browser journeys, gcc for the race detector,
# and Galera, mariabackup, socat and HAProxy for TestGalera's cluster. It needs root (or sudo)
# on Debian or Ubuntu; elsewhere install them yourself (or point
# PETSTORE_TEST_MYSQL_URL at a MariaDB server).
deps:
	@missing=""; \
	if [ -z "$$PETSTORE_TEST_MYSQL_URL" ] && ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then missing="mariadb-server"; fi; \
	if ! command -v chromium >/dev/null 2>&1; then missing="$$missing chromium"; fi; \
	if ! command -v gcc >/dev/null 2>&1; then missing="$$missing gcc libc6-dev"; fi; \
	if [ ! -e /usr/lib/galera/libgalera_smm.so ]; then missing="$$missing galera-4"; fi; \
	if ! command -v mariabackup >/dev/null 2>&1; then missing="$$missing mariadb-backup"; fi; \
	if ! command -v socat >/dev/null 2>&1; then missing="$$missing socat"; fi; \
	if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then missing="$$missing haproxy"; fi; \
	[ -z "$$missing" ] && exit 0; \
	echo "Installing for the tests:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; else \
		echo "missing:$$missing, and I am not root: install them (apt-get install$$missing)"; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# bench pages through a million pets on SQLite and MariaDB and writes the
# figures to testdata/bench.txt (the tail check keeps a failure from hiding
# behind tee), then runs loadbench.
bench: deps
	@mkdir -p testdata
	PETSTORE_REQUIRE_MARIADB=1 $(GO) test -run '^$$' -bench . -benchtime 500x ./models | tee testdata/bench.txt; \
		tail -n 1 testdata/bench.txt | grep -q '^ok'
	$(MAKE) loadbench
	$(MAKE) backupbench

# loadbench is the HTTP load benchmark (TestLoadBench in e2e/loadbench_test.go),
# the API's latency during a console change of 100,000 pets
# (TestBulkChangeLoad) and a CSV import of 100,000 rows (TestImportLoad),
# figures in testdata/figures.jsonl:
# the built binary on a fresh SQLite and MariaDB database each, seeded with
# LOADBENCH_ROWS pets, under LOADBENCH_CONNS keep-alive clients for
# LOADBENCH_DURATION per case. It writes req/s, p50, p99 and peak RSS to
# testdata/loadbench.txt and testdata/loadbench.json.
LOADBENCH_ROWS ?= 100000
LOADBENCH_CONNS ?= 16
LOADBENCH_DURATION ?= 5s
loadbench: deps
	PETSTORE_REQUIRE_MARIADB=1 PETSTORE_LOADBENCH=1 LOADBENCH_ROWS=$(LOADBENCH_ROWS) LOADBENCH_CONNS=$(LOADBENCH_CONNS) \
		LOADBENCH_DURATION=$(LOADBENCH_DURATION) $(GO) test -count=1 -v -timeout 60m -run '^(TestLoadBench|TestBulkChangeLoad|TestImportLoad)$$' ./e2e

# exportbench exports a million pets as CSV through the built binary on
# SQLite and MariaDB (TestExportBench in e2e/exportbench_test.go) and writes
# rows, seconds and peak RSS to testdata/exportbench.txt.
exportbench: deps
	PETSTORE_REQUIRE_MARIADB=1 PETSTORE_EXPORTBENCH=1 $(GO) test -count=1 -v -timeout 60m -run '^TestExportBench$$' ./e2e

# backupbench backs up and restores BACKUPBENCH_PETS pets through the built
# binary on SQLite and MariaDB (TestBackupBench in e2e/backup_bench_test.go),
# with each command's peak RSS and GET /v1/pets p99 idle and during the
# backup, and writes the figures to testdata/backupbench.txt.
BACKUPBENCH_PETS ?= 1000000
backupbench: deps
	PETSTORE_REQUIRE_MARIADB=1 PETSTORE_BACKUP_BENCH=1 BACKUPBENCH_PETS=$(BACKUPBENCH_PETS) \
		$(GO) test -count=1 -v -timeout 60m -run '^TestBackupBench$$' ./e2e

clean:
	rm -f petstore
