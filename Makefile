# Set-up and everyday commands. `make run` and `make test` install what they need first.
SHELL := /bin/bash
NPM ?= npm
ARGS ?=

.PHONY: install build run test test-unit test-repeat lint typecheck depcheck bench clean sample-dar bench-readme soak image

# node_modules is brought up to date whenever package.json or the lock file changes. The lock is
# committed as npm writes it, with every platform's optional packages (biome's and esbuild's
# binaries): one without them (npm/cli#4828) is rewritten by `npm install` and refused by
# `npm ci`. `npm install` follows this one and leaves it as it is, with this machine's npm
# settings or none; .ci/run fails when it did not. `npm install` rather than `npm ci`, which
# deletes node_modules first and with it node_modules/.cache.
node_modules/.installed: package.json package-lock.json
	$(NPM) install --no-audit --no-fund --loglevel=error
	touch $@

install: node_modules/.installed

build: install
	$(NPM) run --silent build

run: build
	node dist/src/cli.js $(ARGS)

typecheck: install
	$(NPM) run --silent typecheck

# biome (format, lint); knip (knip.jsonc: unused files, exports, types and dependencies);
# the type check of scripts/ (hand-run tools, not built into dist/).
lint: install
	$(NPM) run --silent lint

# The import rules of docs/architecture.md (.dependency-cruiser.cjs): no cycles, sibling
# transports, the sandbox apart.
depcheck: install
	$(NPM) run --silent depcheck

# `build` type-checks as `typecheck` does and leaves dist/ (incremental) for the tests that run it.
# Two test files at a time: most of a file's time is waiting on sockets and processes.
test: install build lint depcheck
	$(NPM) run --silent test

# The tests that start no process or worker thread and open no socket, picked by what they do
# (every test file's processes, workers, listens and connects recorded under `make test`): the
# folders whose tests all start nothing, with any test added to them, and single files of the
# other folders (a new one gets in by its path here). test/cli/unit-test-guard.ts fails any of
# them that starts something, naming it, so the list cannot drift into slow tests.
UNIT_TESTS := test/codec test/config test/endpoints test/errors test/lf test/protos test/streams \
  test/tracing test/fanout/shared-stream.test.ts test/fanout/replay-history.test.ts test/fanout/authorization-model.test.ts test/fuzz/judge.test.ts \
  test/docs/markdown-links.test.ts test/docs/guides.test.ts \
  test/grafana/dashboard.test.ts test/http/body-budget.test.ts test/http/json-array-bytes.test.ts test/http/path-matcher.test.ts \
  test/ledger/grpc-message-reader.test.ts test/ledger/request-bounds.test.ts \
  test/metrics/exposition.test.ts test/metrics/worker-metrics.test.ts \
  test/readme/sample-dar.test.ts test/sandbox/update-mask.test.ts \
  test/sandbox/auth/rights-authorizer.test.ts test/sandbox/interactive/prepared-transaction-hash.test.ts \
  test/sandbox/interactive/signing-keys.test.ts test/ws/socket-sink.test.ts test/auth/charged-stream-slots.test.ts \
  test/fanout/question-peers.test.ts

# A path of UNIT_TESTS that is gone (a renamed test) fails here rather than drop out unseen.
test-unit: install
	files=$$(find $(UNIT_TESTS) -name '*.test.ts' | sort; exit $${PIPESTATUS[0]}) && \
	  node --import tsx --import ./test/cli/unit-test-guard.ts --test --test-concurrency=2 $$files

# The tests that start real processes and sockets (end-to-end, fan-out, WebSocket, workers, CLI,
# Prometheus panels) REPEAT times in a row (default 20), stopping at the first failing run: for
# checking that a fix of a test that failed by chance holds. REPEAT_TESTS="a.test.ts b.test.ts"
# picks other files.
test-repeat: install
	bash test/support/repeat-tests.sh

# The long fuzz and fault run (test/fuzz/soak.ts; `make test` runs a bounded one): 20k seeded
# cases, then the ledger frozen and killed. Prints the figures and writes
# bench/results/fuzz-soak-<date>-<commit>.json. FUZZ_SEED, FUZZ_REQUESTS, FUZZ_CONCURRENCY and
# FUZZ_FAULT_SECONDS set it (e.g. make soak FUZZ_SEED=7).
soak: install
	node --import tsx test/fuzz/soak.ts

# The gateway against direct gRPC, the load tool's `local` scenarios on processes it starts (make
# bench ARGS="--scenario fanout"; node dist/bench/load.js local --help lists them). Writes a new
# bench/results/gateway-<date>-<commit>.json per run (with the machine and commit), its HTML
# report and charts beside it.
bench: build
	node dist/bench/load.js local $(ARGS)

# docs/performance.md's bench tables, from the newest committed bench/results/gateway-*.json.
bench-readme: install
	node --import tsx bench/rig/readme-table.ts

# The sandbox's sample package as a file (docs/samples/), for docs/packages.md's examples.
# test/readme/sample-dar.test.ts fails when the committed file is not what the sandbox builds.
sample-dar: install
	node --import tsx test/readme/sample-dar.ts

# The container image of deploy/container/Dockerfile as ledger-json-gateway:<package version>:
# the npm package with its production dependencies laid out in dist/image, then built by DOCKER
# (make image DOCKER=podman). IMAGE tags it otherwise; SOURCE is the repository's URL for the
# image's org.opencontainers.image.source label (none unless given). docs/operations.md.
VERSION = $(shell node -p 'require("./package.json").version')
IMAGE ?= ledger-json-gateway:$(VERSION)
DOCKER ?= docker
SOURCE ?=
image: install
	bash deploy/container/prepare-context.sh dist/image
	$(DOCKER) build -f deploy/container/Dockerfile --build-arg VERSION=$(VERSION) \
	  --build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null) --build-arg SOURCE=$(SOURCE) -t $(IMAGE) dist/image

clean:
	rm -rf dist node_modules
