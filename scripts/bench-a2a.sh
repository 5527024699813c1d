#!/usr/bin/env bash
# Prints what gemini-a2a-mcp adds to a call: A2A tasks/get straight from the
# agent client vs through the bridge's get_task (stdio MCP), alternated in
# one run against the real A2A server (tests/a2a). Target: <= 2 ms at p50.
#
#   scripts/bench-a2a.sh [calls]     default 300
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [[ ! -d tests/a2a/node_modules ]]; then
	(cd tests/a2a && npm ci --no-audit --no-fund --loglevel=error)
fi
# The server as users install it (see npm_global in scripts/test.sh).
if [[ ! -e tests/a2a/npm-global/bin/gemini-cli-a2a-server ]]; then
	NPM_CONFIG_PREFIX="$root/tests/a2a/npm-global" npm install -g --prefer-offline --no-audit --no-fund --loglevel=error @google/gemini-cli-a2a-server@0.25.2
fi
go test -run '^$' -bench BenchmarkBridgeOverhead -benchtime "${1:-300}x" ./tests/a2a/ | grep -E 'tasks/get|added-ms'
