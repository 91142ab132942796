#!/usr/bin/env bash
# `make test-repeat`: runs the tests that start real processes and sockets (end-to-end, fan-out,
# WebSocket, workers, CLI, and the Prometheus panel test) REPEAT times in a row, each run a fresh
# `node --test`, and stops at the first run with a failure, printing its failing tests. For
# checking that a fix of a test that failed by chance holds: run it while another `make test`
# loads the machine. REPEAT_TESTS picks other test files (a space-separated list).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeat=${REPEAT:-20}
read -r -a files <<<"${REPEAT_TESTS:-$(find test/e2e test/fanout test/ws test/workers test/cli test/grafana -name '*.test.ts' | sort | tr '\n' ' ')}"
logs=$(mktemp -d)
echo "${#files[@]} test files, $repeat runs; logs in $logs"
passed=0
for run in $(seq 1 "$repeat"); do
  log="$logs/run-$run.tap"
  start=$SECONDS
  status=0
  node --import tsx --test --test-reporter=tap --test-concurrency=1 "${files[@]}" >"$log" 2>&1 || status=$?
  summary=$(grep -E '^# (tests|pass|fail|cancelled) ' "$log" | tr '\n' ' ')
  echo "run $run: exit $status in $((SECONDS - start)) s; $summary"
  if [ "$status" -ne 0 ]; then
    grep -E '^\s*not ok' "$log" | head -20
    echo "$passed passed, 1 failed"
    exit 1
  fi
  passed=$((passed + 1))
done
echo "$passed passed, 0 failed"
