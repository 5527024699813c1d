#!/usr/bin/env bash
# Measures what the editor plugins cost while the user moves the cursor and
# selects: Neovim, Vim and Emacs, each run on a terminal with the plugin (as
# its README installs it, with the real sidecar behind it) and without it,
# driven by typed keys at a fixed pace. Prints a Markdown table: the
# editor's CPU time per cursor move and per selection change with and
# without the plugin, the messages that crossed the pipe to the sidecar,
# and the time from the last key to the final state on that pipe. It
# asserts nothing about speed; it fails only when something did not work
# (an editor not taking the keys, the final cursor or selection not
# reaching the sidecar). See docs/performance.md, "While you type".
#
#   scripts/bench-editors.sh                 full run: 5 rounds (about 20 min on 2 cores)
#   scripts/bench-editors.sh --short         one short round (CI smoke; a few seconds per editor)
#   scripts/bench-editors.sh --editors vim --rounds 3 --phases moves,repeat
#   scripts/bench-editors.sh --plugins /path/to/other/checkout/plugins   # measure other plugin code
#
# Other flags go to the driver: see `go run ./scripts/bench/cmd/editorbench -h`.
# Linux only (it reads /proc and opens pseudo-terminals); needs nvim, vim
# and emacs for the editors it measures.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

binary=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[i]}" in
	--sidecar | -sidecar) binary="${args[i + 1]:-}" ;;
	--sidecar=* | -sidecar=*) binary="${args[i]#*=}" ;;
	esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gic-bench-editors.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [[ -z "$binary" ]]; then
	# The sidecar as users build it (no race detector).
	go build -o "$work/gemini-ide-companion" ./cmd/gemini-ide-companion
	args+=(--sidecar "$work/gemini-ide-companion")
fi
go build -o "$work/editorbench" ./scripts/bench/cmd/editorbench

"$work/editorbench" --rounds 5 "${args[@]}"
