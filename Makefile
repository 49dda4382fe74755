# skillhost — see README.md. Every target installs what it needs through
# scripts/setup.sh, which does nothing when everything is there.

GO       ?= go
BIN      := bin/skillhost
PKGS     := ./...
# Guest code, also checked as it is built: for wasip1.
GUESTS   := ./guests/go/... ./packs/bundled/modules/...
BENCH    ?= .
BENCHTIME ?= 1s

.PHONY: all build run test test-short rust-test guide bench check eval fuzz mutate guests tinygo setup clean

all: build

# Retrieval quality of tool_search on the bundled evaluation set.
EVAL_CATALOGS := $(foreach f,$(sort $(wildcard testdata/eval/tools-*.jsonl)),--catalog $(f))
EVAL_QUERIES  := $(foreach f,$(sort $(wildcard testdata/eval/queries-*.jsonl)),--queries $(f))
eval: build
	./$(BIN) eval $(EVAL_CATALOGS) $(EVAL_QUERIES)

setup:
	@bash scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/skillhost

# The main job on the bundled defaults: serve the bundled pack over MCP
# (streamable HTTP at http://127.0.0.1:8787/mcp) until interrupted.
run: build
	./$(BIN) serve

# What CI runs (.ci/run): every test under the race detector, then every
# benchmark once so they keep compiling and running (with -short, which
# leaves out the largest catalogues' fills). TestEveryModuleLoads first
# compiles the guests into the tests' shared cache without the race
# detector, which would make compiling them take minutes. The race run has
# SKILLHOST_REQUIRE_TOOLCHAINS set, so that a test needing what setup
# installs (the MCP TypeScript SDK's client, with node) fails rather than
# skips when it is missing.
test: setup rust-test
	$(GO) test -count=1 -run TestEveryModuleLoads ./internal/testenv
	SKILLHOST_REQUIRE_TOOLCHAINS=1 $(GO) test -race -count=1 -timeout 20m $(PKGS)
	$(MAKE) guide
	$(GO) test -short -run '^$$' -bench . -benchtime=1x -count=1 $(PKGS)
	$(MAKE) fuzz FUZZTIME=30s

# The differential fuzz target of the host's loader: no module wazero
# refuses is run, and a module runs the same rewritten as original.
# Then the server's reading of a request against the MCP SDK's: every
# call the SDK runs is one the admission read (FuzzOneReading), and the
# repeated-key scan finds what encoding/json's tokens find. Then the
# installer's archive reader: nothing is written outside its folder and
# nothing but plain files and folders inside it.
FUZZTIME ?= 5m
SERVER_FUZZTIME ?= 15s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoadRunsOnlyValidModules$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./host
	$(GO) test -run '^$$' -fuzz '^FuzzOneReading$$' -fuzztime $(SERVER_FUZZTIME) -fuzzminimizetime 5s ./server
	$(GO) test -run '^$$' -fuzz '^FuzzCheckKeys$$' -fuzztime $(SERVER_FUZZTIME) -fuzzminimizetime 5s ./server
	$(GO) test -run '^$$' -fuzz '^FuzzUnpack$$' -fuzztime $(SERVER_FUZZTIME) -fuzzminimizetime 5s ./install

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Mutation testing of the security-critical code (not part of make test):
# internal/mutate changes one guard, bound or returned error at a time in
# the files internal/mutate/targets.go lists, runs the tests that hold
# them, and fails on each change no test noticed and
# internal/mutate/survivors.txt does not explain. MUTATE_TARGETS picks
# targets (egress,sandboxfs,rewrite,host,registry,server,install,sign,tenancy,packs); the
# working tree is never written (go test -overlay).
MUTATE_TARGETS ?=
MUTATE_JOBS ?= 2
mutate:
	$(GO) run ./internal/mutate -j $(MUTATE_JOBS) $(if $(MUTATE_TARGETS),-target $(MUTATE_TARGETS))

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime=$(BENCHTIME) -benchmem -count=1 $(PKGS)

check: setup
	@test -z "$$(gofmt -l . | grep -v '^testdata/' | tee /dev/stderr)" || (echo "gofmt: files above need formatting" && exit 1)
	$(GO) vet $(PKGS)
	GOOS=wasip1 GOARCH=wasm $(GO) vet $(GUESTS)
	"$$($(GO) env GOPATH)/bin/staticcheck" $(PKGS)
	GOOS=wasip1 GOARCH=wasm "$$($(GO) env GOPATH)/bin/staticcheck" $(GUESTS)
	$(GO) mod tidy -diff
	@test -z "$$(git status --porcelain | tee /dev/stderr)" || (echo "check: the tree is not clean" && exit 1)

# The guest guide, guests/README.md: every command of it, in a fresh
# folder (skillhost init and make test in Go, TinyGo and Rust). Its TinyGo
# and Rust steps fail rather than skip when the toolchain is missing
# (setup installs both).
guide: setup
	SKILLHOST_RUN_GUIDE=1 SKILLHOST_REQUIRE_TOOLCHAINS=1 $(GO) test -count=1 -timeout 30m -run '^TestGuide$$' ./cmd/skillhost

# The Rust guest crates' own tests, natively: the SDK (its typed layer's
# derive and describe golden file included) and the bundled Rust module.
# Both build into one target folder in the user's cache, as Go's builds go
# to its build cache: their dependencies (serde's derive, syn) are compiled
# once, not again in every clone. CARGO_TARGET_DIR set overrides it.
RUST_TEST_TARGET ?= $(or $(CARGO_TARGET_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/skillhost/rust-test-target)
rust-test: setup
	cd guests/rust && eval "$$(sh ../../scripts/rust-target.sh)" && \
		CARGO_TARGET_DIR="$(RUST_TEST_TARGET)" RUSTC="$$RUSTC" RUSTDOC="$$RUSTDOC" "$$CARGO" test --offline --locked --features typed
	cd packs/bundled/modules/textconv && eval "$$(sh ../../../../scripts/rust-target.sh)" && \
		CARGO_TARGET_DIR="$(RUST_TEST_TARGET)" RUSTC="$$RUSTC" RUSTDOC="$$RUSTDOC" "$$CARGO" test --offline --locked

# Rebuild every guest module from its source (the .wasm files are committed).
guests: setup
	bash scripts/build-guests.sh

tinygo:
	bash scripts/install-tinygo.sh

clean:
	rm -rf bin .skillhost
