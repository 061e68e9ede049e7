# Failover Lab: the one entry point.
#   make run    build the wasm + static site and serve www/ on http://127.0.0.1:$(PORT)/
#   make test   every test (format, lints, native tests, wasm build, browser tests)
#   make oracle regenerate tests/oracle/ from Apache Kafka 4.4.0's own classes (JVM + Maven)
# Both install what is missing first (scripts/setup.sh): the wasm32 target,
# wasm-bindgen-cli at the version pinned in wasm-pack.toml, Debian chromium +
# chromium-driver, mdbook (the example book), and the npm packages of
# package-lock.json (playwright-core, axe-core, typescript, …).

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
export PATH := $(HOME)/.cargo/bin:$(PATH)

PORT ?= 8080
HOST := 127.0.0.1
CHROMEDRIVER ?= /usr/bin/chromedriver

.PHONY: help setup build wasm run test test-fmt test-clippy test-native \
        test-wasm-browser test-e2e test-types test-size bench fmt clean oracle oracle-check kafka-differential \
        mutants mutants-diff

help:
	@echo "make run     build and serve the app on http://$(HOST):$(PORT)/ (PORT=... to change)"
	@echo "make test    run every test"
	@echo "make build   build the static site into www/ (wasm package in www/pkg, page bundle in www/dist)"
	@echo "make bench   benchmarks: criterion, CLI, failover scaling, headless Chromium (scripts/bench.sh)"
	@echo "make kafka-differential  re-record scenarios on a real Kafka 4.4.0 KRaft cluster (JVMs; root), then compare"
	@echo "make setup   install missing tools (rust target, wasm-bindgen-cli, chromium, npm packages)"
	@echo "make oracle  regenerate the Kafka 4.4.0 test vectors in tests/oracle/ (needs Java 17 + Maven)"
	@echo "make oracle-check  regenerate them to a temporary directory and diff against the committed ones"
	@echo "make mutants  mutation testing of the rule modules (cargo-mutants; MODULE=src/sim/log.rs, SHARD=k/n)"
	@echo "make mutants-diff  the mutants of the lines changed since BASE (default main)"
	@echo "make fmt     format the Rust code"
	@echo "make clean   remove build output"

setup:
	@scripts/setup.sh

# The wasm package only (no setup).
wasm:
	@scripts/build-wasm.sh

# The wasm package, the scenarios, the element package and the page's bundle
# (www/dist/: index.html's JS and CSS, minified; scripts/build-bundle.mjs).
# The example mdBook (examples/book, with the element vendored) is built last.
BUILD_STEPS := scripts/build-wasm.sh && scripts/build-site.sh && scripts/build-element.sh && node scripts/build-bundle.mjs && scripts/build-book.sh

build: setup
	@$(BUILD_STEPS)
	@if [[ ! -f www/index.html ]]; then echo "build: warning: www/index.html does not exist yet"; fi
	@echo "build: static site ready in www/"

run: build
	@echo "Failover Lab: http://$(HOST):$(PORT)/"
	@python3 -m http.server $(PORT) --bind $(HOST) --directory www

# Each step is timed (scripts/timed.sh) and the table of where the time went
# is printed at the end, passed or not (scripts/test-times.sh; issue 61).
TEST_STEPS := test-fmt test-clippy test-native test-wasm-browser test-e2e test-types test-size
TEST_TIMES := target/test-times.tsv
test:
	@mkdir -p target && rm -f $(TEST_TIMES)
	@scripts/timed.sh $(TEST_TIMES) setup scripts/setup.sh || { scripts/test-times.sh $(TEST_TIMES); exit 1; }
	@for step in $(TEST_STEPS); do \
	  scripts/timed.sh $(TEST_TIMES) $$step $(MAKE) --no-print-directory $$step || { scripts/test-times.sh $(TEST_TIMES); exit 1; }; \
	done
	@scripts/test-times.sh $(TEST_TIMES)
	@echo "test: all passed"

test-fmt:
	@echo "== cargo fmt --check"
	cargo fmt --check

test-clippy:
	@echo "== cargo clippy (native, all targets; wasm32 lib, and with the explorer feature)"
	cargo clippy --all-targets -- -D warnings
	# The `test = false` suites (fuzz, sweep, claims): --all-targets skips them.
	cargo clippy --test fuzz --test sweep --test claims -- -D warnings
	cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings
	cargo clippy --lib --target wasm32-unknown-unknown --features explorer -- -D warnings

# Every native suite, built once in the fast-test profile (dev at opt-level
# 3, debug assertions and overflow checks on; issue 61), and the rule suites
# as one binary: tests/rules_all.rs holds every rule suite of tests/ as a
# module (the fuzz and sweep suites included), so the library's generic code
# is compiled and linked once, not twenty times. The other suites run as
# themselves; tests/toolchain.rs checks that this line names each of them.
# Measured cold on the 2 cores (shared): 191 s of CPU for this build against
# 292 s for one binary per suite (137 s and 397 s of wall time). The same
# build serves the browser suite's CLI (tests/e2e/helpers.mjs `cli`). A
# plain `cargo test` (dev) runs the suites one binary each, without the
# three long ones (fuzz, sweep, claims: `test = false`).
NATIVE_SUITES := --lib --bins --test rules_all --test allocations --test book_reference --test claims --test cli --test determinism --test toolchain --test web
test-native:
	@echo "== cargo test --profile fast-test (unit tests, the rule suites as one binary, the other suites, doc tests)"
	cargo test --profile fast-test $(NATIVE_SUITES)
	cargo test --profile fast-test --doc

# (No separate wasm32 build step: test-wasm-browser builds the core for wasm32
# in the debug profile, and test-e2e's scripts/build-wasm.sh in the page's.)

# wasm-bindgen-test in headless Chromium; webdriver.json adds --no-sandbox etc.
test-wasm-browser:
	@echo "== wasm-bindgen-test in headless Chromium (tests/web.rs)"
	CHROMEDRIVER=$(CHROMEDRIVER) \
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
	cargo test --target wasm32-unknown-unknown --test web

# Browser end-to-end tests (playwright-core + /usr/bin/chromium) against the built site,
# E2E_JOBS test files at a time (each its own server and browser; default: the cores).
E2E_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test-e2e:
	@echo "== browser end-to-end tests (tests/e2e/, $(E2E_JOBS) files at a time)"
	$(BUILD_STEPS)
	node --test --test-concurrency=$(E2E_JOBS) tests/e2e/

# failover-lab.d.ts (the element package's types) checked on its own, then the
# example Playwright script in TypeScript (examples/typescript) checked with
# tsc --noEmit --strict against the package as installed, compiled and run
# (after test-e2e built dist/element and www/).
TSC := node_modules/.bin/tsc
test-types:
	@echo "== TypeScript: tsc --noEmit --strict (failover-lab.d.ts, examples/typescript), then run the example"
	$(TSC) --noEmit --strict --lib es2022,dom --types "" dist/element/failover-lab.d.ts
	mkdir -p examples/typescript/node_modules
	ln -sfn ../../../dist/element examples/typescript/node_modules/failover-lab-element
	$(TSC) -p examples/typescript --noEmit --strict
	rm -rf examples/typescript/build
	$(TSC) -p examples/typescript
	node --test examples/typescript/build/

# The page's wasm + JS + CSS, gzipped, against the 256 KiB budget (after test-e2e built www/pkg and www/dist).
test-size:
	@echo "== size budget (scripts/size-budget.mjs: what index.html loads; scripts/size-first-load.mjs: what a first-time visitor's first frame fetches, in Chromium)"
	node scripts/size-budget.mjs
	node scripts/size-first-load.mjs

# Speed is reported, never asserted. BENCH_WORKLOADS / BENCH_UNTIL_MS / BENCH_SCALING /
# BENCH_STEPS narrow it (see scripts/bench.sh); the full large workload takes a while.
bench: build
	@scripts/bench.sh

# Kafka as the oracle (the book, "Checked against Kafka 4.4.0"): oracle/ drives
# Kafka 4.4.0's own classes, fetched by Maven into ~/.m2, with a fixed seed and
# writes the vectors that `cargo test --test oracle` replays without a JVM.
ORACLE_SEED ?= 20261201
ORACLE_MVN = mvn -B -q -f oracle/pom.xml compile exec:java -Dexec.args="--seed $(ORACLE_SEED) --out $(1)"

oracle:
	@echo "== Kafka 4.4.0 test vectors -> tests/oracle/ (seed $(ORACLE_SEED))"
	$(call ORACLE_MVN,tests/oracle)

# The committed vectors are what this seed makes, byte for byte.
oracle-check:
	@echo "== Kafka 4.4.0 test vectors regenerated and compared with tests/oracle/"
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(call ORACLE_MVN,$$tmp); \
	for f in "$$tmp"/*.jsonl; do cmp "$$f" "tests/oracle/$$(basename "$$f")" || exit 1; done; \
	echo "oracle-check: tests/oracle/ matches Kafka 4.4.0's output"

# Layer 6, real cluster: plays scenario files on Apache Kafka 4.4.0 (Maven jars, one KRaft
# controller + brokers on 127.0.0.x, one JVM each) and re-records tests/kafka-recorded/;
# then the JVM-free comparison (tests/kafka_recorded.rs, part of `cargo test`) prints the table.
# KAFKA_SCENARIOS="leader-dies.json tour-2-producer-finds-leader.json" narrows it.
KAFKA_SCENARIOS ?=
kafka-differential:
	kafka-differential/run.sh $(KAFKA_SCENARIOS)
	cargo test --test kafka_recorded -- --nocapture

# Mutation testing (the book, "Mutation testing"): cargo-mutants over the rule
# modules listed here; .cargo/mutants.toml names the test targets (the lib and
# tests/rules_all.rs, every rule suite in one binary) and
# the build profile; MUTANTS_MODULES here names the files. JOBS=1 by default (the machine has 2 cores; JOBS=2 when nothing else runs). MODULE narrows it to one
# file, SHARD=k/n (k from 0) to one slice of n; results in $(MUTANTS_OUT)/mutants.out.
MUTANTS_MODULES := src/sim/partition_change.rs src/sim/partition.rs src/sim/log.rs \
        src/sim/controller.rs src/sim/broker/isr.rs src/sim/broker/fetcher.rs \
        src/sim/broker/requests.rs src/sim/client/producer.rs src/sim/availability.rs \
        src/sim/broker/coordinator.rs src/sim/delivery.rs src/sim/client/connection.rs \
        src/sim/client/group.rs src/sim/client/consumer.rs
MODULE ?=
SHARD ?=
BASE ?= main
MUTANTS_OUT ?= mutants.out
JOBS ?= 1
MUTANTS_FLAGS = -j $(JOBS) -o $(MUTANTS_OUT) $(addprefix -f ,$(or $(MODULE),$(MUTANTS_MODULES))) $(if $(SHARD),--shard $(SHARD))

mutants:
	@scripts/setup.sh --mutants
	cargo mutants $(MUTANTS_FLAGS)

# Only the mutants in lines changed since $(BASE) (cargo mutants --in-diff).
mutants-diff:
	@scripts/setup.sh --mutants
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	git diff "$$(git merge-base $(BASE) HEAD)" -- src > "$$tmp"; \
	cargo mutants $(MUTANTS_FLAGS) --in-diff "$$tmp"

fmt:
	cargo fmt

clean:
	cargo clean
	rm -rf www/pkg www/dist test-results dist examples/book/book examples/book/src/failover-lab examples/typescript/build examples/typescript/node_modules
