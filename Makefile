# The two set-up commands are `make run` and `make test`; see README.md.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

GO        ?= go
GOBIN     := $(shell $(GO) env GOPATH)/bin
STATICCHECK_VERSION ?= v0.8.2

.PHONY: build binary run run-mysql test bench lint fmt fuzz chaos cluster multinode

# What `make build` stamps into the binary for `retention version` and --version: the tag
# at HEAD, or else a pseudo-version in go build's own form (v0.0.0-TIME-COMMIT, +dirty with
# uncommitted changes), the commit, its time and whether the tree was modified. Stamped
# with -ldflags because go build's own VCS stamping is left out by go run, -buildvcs=false
# and a tree without .git; outside a git checkout nothing is stamped. BIN moves the binary.
BIN           ?= bin/retention
BUILDINFO     := github.com/retentionkit/retention/node/buildinfo
GIT_REVISION   = $(shell git rev-parse HEAD 2>/dev/null)
GIT_TIME       = $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
GIT_MODIFIED   = $(if $(shell git status --porcelain 2>/dev/null),true,false)
GIT_PSEUDO     = v0.0.0-$(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S 2>/dev/null)-$(shell git rev-parse --short=12 HEAD 2>/dev/null)
VERSION       ?= $(or $(shell git describe --tags --exact-match 2>/dev/null),$(GIT_PSEUDO))$(if $(filter true,$(GIT_MODIFIED)),+dirty)
LDFLAGS        = $(if $(GIT_REVISION),-X $(BUILDINFO).linkedVersion=$(VERSION) -X $(BUILDINFO).linkedRevision=$(GIT_REVISION) -X $(BUILDINFO).linkedTime=$(GIT_TIME) -X $(BUILDINFO).linkedModified=$(GIT_MODIFIED))

build: binary
	$(GO) build ./...

# The stamped node binary alone (part of build): what cmd/node's version test builds,
# since compiling every other package is build's, not the stamp's.
binary:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/node

# The main job on the embedded default: the node on the demo config, over a SQLite
# database seeded afresh on every run (examples/demo), so each run shows the whole story;
# the seeder prints a guide to it first. RETENTION_DEMO_DB and RETENTION_DEMO_ADMIN move
# the database and the admin endpoint. Ctrl-C stops it gracefully.
run: export RETENTION_DEMO_DB ?= examples/demo/demo.db
run: export RETENTION_DEMO_ADMIN ?= 127.0.0.1:9464
run:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/retention ./cmd/node
	$(GO) run ./examples/demo/seed -db "$$RETENTION_DEMO_DB" -admin "$$RETENTION_DEMO_ADMIN"
	./bin/retention run --config examples/demo/retention.yaml

# The same story on MySQL or MariaDB (examples/demo/retention-mysql.yaml): the seeder
# drops and creates the database RETENTION_DEMO_MYSQL_DSN names (by default root over
# the local server's socket, database retention_demo; one that is not a demo is
# refused), then the node sweeps it. Ctrl-C stops it gracefully.
run-mysql: export RETENTION_DEMO_MYSQL_DSN ?= root@unix(/run/mysqld/mysqld.sock)/retention_demo
run-mysql: export RETENTION_DEMO_ADMIN ?= 127.0.0.1:9464
run-mysql:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/retention ./cmd/node
	$(GO) run ./examples/demo/seed -driver mysql -db "$$RETENTION_DEMO_MYSQL_DSN" -admin "$$RETENTION_DEMO_ADMIN" -config examples/demo/retention-mysql.yaml
	./bin/retention run --config examples/demo/retention-mysql.yaml

# Every test, with the race detector, against SQLite and a real PostgreSQL
# (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test). Verbose output is
# filtered down to failures, skips (so a skipped database shows) and package results.
# Four test binaries at once (-p 4, not one per core): most packages spend their time
# waiting on a database, a browser or a child process, so two at a time left the cores
# idle; tests that share nothing call t.Parallel for the same reason.
test:
	$(GO) test -race -count=1 -p 4 -v ./... 2>&1 | grep -Ev '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' 

# The fault suite (docs/reliability.md): a PostgreSQL cluster of its own on a free port,
# the node binary under faults. Needs root and PostgreSQL's server packages, as in CI.
chaos:
	$(GO) test -race -tags chaos -count=1 -v -timeout 20m ./chaos/

# The cluster suite (docs/cluster.md, "Tested failures"): a private etcd and three or more
# `retention run` processes in cluster mode against TEST_DATABASE_URL, under SIGKILL,
# SIGSTOP, SIGTERM and etcd outages. No -race: protoactor's cluster races inside itself
# at the pinned version, so the race detector would fail every run for the library's sake.
multinode:
	$(GO) test -tags multinode -count=1 -v -timeout 25m ./multinode/

# The in-process cluster suite (node/cluster, and node.Open in cluster mode), build tag
# cluster: members on protoactor's in-memory provider in one process. No -race:
# protoactor's cluster races inside itself at the pinned version.
cluster:
	$(GO) test -count=1 -tags cluster -timeout 5m ./node/cluster/... ./node/

# Every fuzz target for a while each (FUZZTIME, default 30000 inputs): no input may panic,
# leak a secret or break a round trip. A failing input lands in the package's
# testdata/fuzz/ and then runs with every `go test`. Add a target as "package:FuzzName".
# The budget is a count of inputs, not a duration: Go 1.26's fuzzer can end a
# duration-bounded run with a bare "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27), which a busy 2-core CI machine hit.
FUZZTIME    ?= 30000x
FUZZ_TARGETS = ./node/config:FuzzParseDuration ./node/config:FuzzParseConfig \
               ./passes/driver/postgres:FuzzPostgresDSN ./passes/driver/postgres:FuzzDSNPassword \
               ./passes:FuzzCheckWhere ./passes:FuzzIdentifier ./passes:FuzzFilter
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

# Benchmarks (no timed assertions anywhere else); results go to docs/benchmarks.md.
bench:
	bash bench/run.sh

lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	@# The suites behind build tags too: a helper moved out of a tagged file once left
	@# imports behind that only `make cluster` found, ten minutes into CI.
	$(GO) vet -tags cluster ./node/...
	$(GO) vet -tags chaos ./chaos/
	$(GO) vet -tags multinode ./multinode/...
	@command -v staticcheck >/dev/null 2>&1 || test -x $(GOBIN)/staticcheck || \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$(GOBIN):$$PATH" staticcheck ./...

fmt:
	gofmt -w .

# The static binary deploy/Dockerfile ships (CGO_ENABLED=0, same script and flags), checked
# static and run (`retention version`): CI's stand-in for a Docker build.
.PHONY: static deploy-check
static:
	bash deploy/check.sh static

# Every deployment check: promtool on the alert rules, the static build, systemd-analyze
# on the unit. Installs promtool/systemd-analyze from Debian when root with CI=true.
deploy-check:
	bash deploy/check.sh
