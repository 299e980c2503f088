# mcp-hub — build, run, test, lint, bench. Needs Go, gcc (cgo, for SQLite)
# and node + npm (interop and conformance tests).

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.buildVersion=$(VERSION) -X main.buildCommit=$(COMMIT)
export CGO_ENABLED := 1

.PHONY: build run test test-notice test-team test-traces test-image image conformance deps lint bench eval-search clean release npm release-check

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/mcp-hub ./cmd/mcp-hub

# Runs the hub as a stdio MCP server (what a client such as Claude Desktop
# launches). Pass flags with ARGS="--config hub.yaml".
run: build
	./bin/mcp-hub $(ARGS)

# Installs the pinned npm packages the interop tests run against, and
# Debian's Chromium for the web console's browser test.
deps:
	$(GO) mod download
	./scripts/npm-deps.sh
	./scripts/chromium.sh

# Every test, with the race detector. The fixture has its own tests (testdata
# is outside ./...). The store's tests run on SQLite and on a throwaway
# PostgreSQL server (scripts/pg.sh run starts it, sets MCPHUB_TEST_POSTGRES
# and removes it after; scripts/team-deps.sh installs postgresql if missing).
# MCPHUB_TEST_BROWSER=required: the console's browser test fails rather than
# skips without Chromium. test-notice says first what gets installed.
test: test-notice deps
	./scripts/team-deps.sh postgres
	MCPHUB_TEST_BROWSER=required ./scripts/pg.sh run $(GO) test -race -count=1 -timeout 15m ./... ./testdata/fixture/

# What make test installs (apt-get as root included), before it does.
test-notice:
	@./scripts/test-notice.sh

# The team setup of deploy/README.md end to end: 3 mcp-hub replicas, HAProxy
# with deploy/haproxy.cfg and PostgreSQL, all on this machine (failover,
# propagation, a store outage, throughput through 1 and 3 replicas). About
# 90 s on a quiet 2-core machine, 3 to 4 minutes on a busy one; CI runs it
# after make test.
test-team:
	./scripts/team-deps.sh
	MCPHUB_TEST_TEAM=1 $(GO) test -race -count=1 -timeout 10m -v -run 'TestTeam' ./deploy/

# Traces end to end (deploy/traces_test.go): a client's trace through the
# hub to a stdio and an HTTP upstream, exported to Jaeger all-in-one v1.76.0
# on loopback ports and read back from its query API. Jaeger is a Go tool of
# its own module (tools/jaeger), so the hub's module graph stays small; the
# first build takes several minutes, later ones seconds. CI runs it after
# make test.
test-traces:
	$(GO) -C tools/jaeger build -o $(CURDIR)/.cache/bin/jaeger github.com/jaegertracing/jaeger/cmd/jaeger
	MCPHUB_JAEGER=$(CURDIR)/.cache/bin/jaeger $(GO) test -race -count=1 -timeout 10m -v -run 'TestTraces' ./deploy/

# The container image (Containerfile) for this machine's architecture,
# with podman (scripts/podman.sh installs Debian's, storage driver vfs):
# mcp-hub:VERSION. IMAGEFLAGS="-t TAG amd64 arm64" builds both as a
# manifest list. See scripts/image.sh.
image:
	./scripts/image.sh $(IMAGEFLAGS)

# Builds the image and checks it (deploy/image_test.go): non-root user,
# entrypoint, volume, labels; the binary exported from it answers --version
# and a stdio session. Then runs it (deploy/image_run_test.go) with the
# flags scripts/podman.sh run-flags finds this host needs: --version, stdio
# through podman run -i, HTTP with a token on a loopback port, the user,
# the /data volume across containers and a restart, podman stop. CI runs it
# after make test.
test-image:
	MCPHUB_TEST_IMAGE=1 $(GO) test -race -count=1 -timeout 15m -v -run 'TestImage' ./deploy/

# Only the official MCP conformance suite (server scenarios against the
# hub over HTTP, client scenarios through it); make test runs it too.
conformance: deps
	$(GO) test -race -count=1 -run 'TestConformance' -v ./cmd/mcp-hub/

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./... ./testdata/fixture/ ./testdata/conformance-client/
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./... ./testdata/fixture/ ./testdata/conformance-client/
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

# Measures the hub against direct connections to the same upstream; see
# docs/BENCHMARKS.md. Also installs the pinned npm peers of the peers suite
# (make bench BENCHFLAGS="-suite peers"), which make test never needs.
bench: deps
	./scripts/npm-deps.sh bench
	$(GO) run ./bench $(BENCHFLAGS)

# The tool search measured offline (docs/BENCHMARKS.md, "Tool search"):
# recall@1/3/5/10, MRR and nDCG@10 on mcpproxy-go's golden set beside its
# baseline, ToolE hit@1/5 (all 20,614 single-tool queries) and multi-tool
# recall@5, a 5,000-tool synthetic catalog (build, rebuild, memory, search
# p50/p99), tools/list sizes in each catalog.expose mode and a search
# against a hub-answered call. Reads ../shared/data/tool-retrieval (or
# $$MCPHUB_SEARCH_DATA); make test holds the quality floors.
eval-search:
	MCPHUB_EVAL_SEARCH=1 $(GO) test -count=1 -v -run 'TestRetrievalQuality|TestRealServers|TestSyntheticCatalog' ./toolsearch/
	MCPHUB_EVAL_SEARCH=1 $(GO) test -count=1 -v -run 'TestSearchModeListSize|TestSearchCostVsHubCall' ./hub/

# Release archives of every target this machine builds (Linux: linux-x64,
# linux-arm64, windows-x64; macOS: darwin-x64, darwin-arm64) and SHA256SUMS,
# in dist/; the version is the git tag (git describe). Installs Debian's
# cross compilers when missing. See scripts/release.sh.
release:
	./scripts/release.sh -o dist

# The npm packages (@mcp-hub/cli and one per platform) from the archives in
# dist/, packed into dist/npm/*.tgz. See scripts/npm.sh.
npm:
	./scripts/npm.sh -i dist

# Builds every archive this machine can and checks each: format and
# architecture, --version, a stdio initialize (linux-arm64 under qemu), the
# npm packages. CI runs it after make test. See scripts/release-check.sh.
release-check:
	./scripts/release-check.sh

clean:
	rm -rf bin .cache dist
