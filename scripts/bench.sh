#!/usr/bin/env bash
# Measures gemini-ide-companion against the reference companion (the VS Code
# companion's server shape, scripts/bench/reference) side by side and prints
# a Markdown table: median and spread of each figure for both, and the ratio
# ours/reference. It asserts nothing about speed; it fails only when
# something did not work (a notification missing, a tool call failing, a
# companion crashing).
#
#   scripts/bench.sh                 full run: 5 interleaved rounds (~6 min on 2 cores)
#   scripts/bench.sh --short         one short round (CI); also runs each Go benchmark once
#   scripts/bench.sh --rounds 3 --only ours --binary /path/to/gemini-ide-companion
#
# Other flags go to the driver: see `go run ./scripts/bench/cmd/companionbench -h`.
# Then the editor tools (scripts/bench/cmd/edtoolsbench): what the companion
# and its tools server add to a tool call, and 10,000 diagnostics.
# Go micro-benchmarks of the hot paths:
#   go test -run '^$' -bench . -benchmem ./context ./diffview ./companion/link ./companion
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
ref="scripts/bench/reference"

binary=""
only=""
short=0
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[i]}" in
	--binary | -binary) binary="${args[i + 1]:-}" ;;
	--binary=* | -binary=*) binary="${args[i]#*=}" ;;
	--only | -only) only="${args[i + 1]:-}" ;;
	--only=* | -only=*) only="${args[i]#*=}" ;;
	--short | -short) short=1 ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gic-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [[ "$only" != "ours" ]]; then
	command -v node >/dev/null || {
		echo "bench.sh: node is needed for the reference companion" >&2
		exit 1
	}
	if [[ ! -d "$ref/node_modules" || "$ref/package-lock.json" -nt "$ref/node_modules/.package-lock.json" ]]; then
		echo "bench.sh: installing the reference companion's dependencies (npm ci)" >&2
		(cd "$ref" && npm ci --no-audit --no-fund --loglevel=error >&2)
	fi
	if [[ ! -f "$ref/dist/server.cjs" || "$ref/server.js" -nt "$ref/dist/server.cjs" || "$ref/package-lock.json" -nt "$ref/dist/server.cjs" ]]; then
		(cd "$ref" && npm run --silent build >&2)
	fi
fi

if [[ -z "$binary" && "$only" != "reference" ]]; then
	go build -o "$work/gemini-ide-companion" ./cmd/gemini-ide-companion
	args+=(--binary "$work/gemini-ide-companion")
fi
# The driver plays the CLI (Node's JSON.stringify) and the editor (the C
# JSON decoders of Neovim, Python and Emacs). encoding/json on json/v2
# decodes a 33 MB diff/open line about four times faster than the classic
# one, closer to those, so that the work both companions share weighs less
# in their ratio. The companion is built as users get it, without it.
GOEXPERIMENT=jsonv2 go build -o "$work/companionbench" ./scripts/bench/cmd/companionbench

if [[ "$short" == 1 ]]; then
	# Prove the Go benchmarks still run: one iteration each, no figures kept.
	go test -short -run '^$' -bench . -benchtime 1x ./context ./diffview ./companion/link ./companion >"$work/gobench.txt" 2>&1 || {
		cat "$work/gobench.txt" >&2
		echo "bench.sh: Go benchmarks failed" >&2
		exit 1
	}
	echo "Go benchmarks: $(grep -c '^Benchmark' "$work/gobench.txt") ran once each" >&2
fi

"$work/companionbench" --reference "$ref" "${args[@]}"

# The editor tools: what the companion and `gemini-ide-companion tools` add
# to a tool call over the editor's own answer, and a getDiagnostics of
# 10,000 diagnostics (scripts/bench/cmd/edtoolsbench).
if [[ "$only" != "reference" ]]; then
	calls=400
	[[ "$short" == 1 ]] && calls=100
	go build -o "$work/edtoolsbench" ./scripts/bench/cmd/edtoolsbench
	"$work/edtoolsbench" --binary "${binary:-$work/gemini-ide-companion}" --calls "$calls"
fi
