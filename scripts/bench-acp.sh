#!/usr/bin/env bash
# Prints what gemini-a2a-acp adds to each update it forwards: the real A2A
# server's stream (behind a proxy that stamps each event) read through the
# adapter by an ACP client vs read directly by the A2A client, turns
# alternated in one run; then 10 concurrent sessions, checked for lost or
# reordered updates (tests/acp). Target: <= 2 ms added at p50, none lost.
#
#   scripts/bench-acp.sh [turns]     default 20 (of 40 updates each, per path)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# The server as users install it (see npm_global in scripts/test.sh).
if [[ ! -e tests/a2a/npm-global/bin/gemini-cli-a2a-server ]]; then
	NPM_CONFIG_PREFIX="$root/tests/a2a/npm-global" npm install -g --prefer-offline --no-audit --no-fund --loglevel=error @google/gemini-cli-a2a-server@0.25.2
fi
out="$(go test -run '^$' -bench BenchmarkACPOverhead -benchtime "${1:-20}x" ./tests/acp/ 2>&1)" || { echo "$out"; exit 1; }
# The benchmark runs once with one turn to size itself; its last figures are the run's.
echo "$out" | grep -E 'updates over|concurrent sessions' | tail -n 2 | sed 's/^BenchmarkACPOverhead-[0-9]*[[:space:]]*//'
