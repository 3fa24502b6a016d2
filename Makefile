# The two commands a newcomer needs: `make run` and `make test`.
# `make test` installs what the tests need (Debian's mariadb-server, as root)
# when it is missing, checks gofmt, go vet, staticcheck and module tidiness,
# then runs every test against SQLite and a private MariaDB server.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO ?= go
STATICCHECK_VERSION ?= v0.8.2

.PHONY: run build test check deps clean

run:
	$(GO) run .

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o petstore .

test: deps check
	PETSTORE_REQUIRE_MARIADB=1 $(GO) test -count=1 -race ./...

check:
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	CGO_ENABLED=0 $(GO) build -o /dev/null .
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# deps installs the MariaDB server the tests start privately. It needs root
# (or sudo) on Debian or Ubuntu; elsewhere, install MariaDB yourself or point
# PETSTORE_TEST_MYSQL_URL at a server.
deps:
	@if [ -n "$$PETSTORE_TEST_MYSQL_URL" ] || command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then \
		exit 0; \
	fi; \
	echo "Installing mariadb-server for the tests..."; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; else \
		echo "mariadb-server is missing and I am not root: install it (apt-get install mariadb-server) or set PETSTORE_TEST_MYSQL_URL"; exit 1; fi; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends mariadb-server >/dev/null

clean:
	rm -f petstore
