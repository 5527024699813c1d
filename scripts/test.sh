#!/usr/bin/env bash
# Runs every check and test of the project: formatting, vet, staticcheck,
# the Go tests with the race detector (unit, sidecar integration, real
# Gemini CLI end to end, Neovim), the conformance tests against the CLI's own
# IDE client, the Sublime Text package's tests, the Windows build under Wine
# (Go tests and the real Windows Gemini CLI end to end), brief fuzzing, and
# one short benchmark round of the sidecar and of the editor plugins. Ends
# with a summary line.
#
#   scripts/test.sh            everything
#   scripts/test.sh go         only the Go checks and tests (also: node, sublime, jetbrains, windows, fuzz, bench, a2a)
#
# Needs Go, Node 20+, python3, tmux and neovim (Debian: apt-get install
# neovim vim tmux), a JDK 17+ for the Kotlin compiler (JetBrains plugin), and
# Wine with mingw for the Windows step (apt-get install wine wine64
# gcc-mingw-w64-x86-64-win32), and valgrind for the Emacs benchmark's
# count of instructions.
# Node packages, and the Kotlin compiler, are installed here with npm ci.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# A program built with the race detector sleeps a second at exit by default
# (GORACE's atexit_sleep_ms), and every test waits for the race-built
# sidecars it starts to exit: without the sleep, those waits measure the
# sidecar's own shutdown.
export GORACE="atexit_sleep_ms=0${GORACE:+ $GORACE}"
only="${1:-all}"
passed=0
failed=0
failures=()

timings=()

step() {
	local name="$1" start=$SECONDS
	shift
	echo
	echo "==> $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "FAILED: $name"
	fi
	timings+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
}

# Steps that neither time anything nor share state with the Go tests run
# beside them, one after another in a second lane (the machine has two
# cores): each writes to its own log, printed in full with its result and
# time when the lane is joined.
bg_dir="$(mktemp -d "${TMPDIR:-/tmp}/test-steps.XXXXXX")"
bg_names=()
bg_funcs=()

bg_step() {
	bg_names+=("$1")
	bg_funcs+=("$2")
}

bg_start() {
	(
		local n start
		for n in "${!bg_funcs[@]}"; do
			start=$SECONDS
			"${bg_funcs[$n]}" >"$bg_dir/$n.log" 2>&1
			echo "$? $((SECONDS - start))" >"$bg_dir/$n.rc"
		done
	) &
	bg_pid=$!
}

join_bg() {
	wait "$bg_pid"
	local n rc secs
	for n in "${!bg_names[@]}"; do
		echo
		echo "==> ${bg_names[$n]} (beside the Go tests)"
		cat "$bg_dir/$n.log"
		read -r rc secs <"$bg_dir/$n.rc" 2>/dev/null || { rc=1 secs=0; }
		if ((rc == 0)); then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			failures+=("${bg_names[$n]}")
			echo "FAILED: ${bg_names[$n]}"
		fi
		timings+=("$(printf '%5d s  %s (beside the Go tests)' "$secs" "${bg_names[$n]}")")
	done
	bg_names=() bg_funcs=()
}

want() { [[ "$only" == all || "$only" == "$1" ]]; }

npm_deps() {
	# npm ci when the lock changed since the last install (or none yet).
	local dir="$1"
	if [[ ! -d "$dir/node_modules" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
	fi
}

npm_global() {
	# Installs an npm package the way its users do, npm install -g, into a
	# private prefix (the tests put its bin/ on PATH), unless that version is
	# there already. --prefer-offline takes what npm ci put into npm's cache.
	local prefix="$root/$1" pkg="$2" version="$3" have
	have="$(node -p "require(process.argv[1]).version" "$prefix/lib/node_modules/$pkg/package.json" 2>/dev/null)"
	[[ "$have" == "$version" ]] && return 0
	rm -rf "$prefix"
	NPM_CONFIG_PREFIX="$prefix" npm install -g --prefer-offline --no-audit --no-fund --loglevel=error "$pkg@$version"
}

gofmt_clean() {
	local out
	out="$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'))"
	[[ -z "$out" ]] || { echo "gofmt would change:"; echo "$out"; return 1; }
}

staticcheck() { go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...; }

cross_vet() {
	# Every OS the CLI runs on: build the commands for linux, darwin and
	# windows on amd64 and arm64, and vet everything (vet type-checks the
	# tests too) once per OS: no file of ours is specific to an
	# architecture, so arm64 adds nothing for vet to read.
	local goos goarch
	for goos in linux darwin windows; do
		for goarch in amd64 arm64; do
			echo "$goos/$goarch"
			GOOS=$goos GOARCH=$goarch go build -o /dev/null ./cmd/... || return 1
		done
		GOOS=$goos GOARCH=amd64 go vet ./... || return 1
	done
	# Should a file ever name an architecture, vet must read it there too.
	if git ls-files '*.go' | grep -qE '_(arm64|amd64)(_test)?\.go$'; then
		for goos in linux darwin windows; do GOOS=$goos GOARCH=arm64 go vet ./... || return 1; done
	fi
}

build_binary() {
	mkdir -p bin && go build -race -o bin/gemini-ide-companion-test-race ./cmd/gemini-ide-companion
}

go_tests() {
	# The sidecar is built once, with the race detector, for every package.
	# No package takes two minutes here; one that runs for six has hung,
	# and the timeout's goroutine dump says where.
	GIC_BINARY="$root/bin/gemini-ide-companion-test-race" go test -race -count=1 -timeout 6m ./... 2>&1 | tee "$go_log"
	local rc=${PIPESTATUS[0]}
	((rc == 0)) || go_failures "$go_log" >"$go_log.failed"
	return "$rc"
}

go_failures() {
	# What failed in a long go test log, for the end of the run, where a
	# reader of only its last lines finds it: each failed test with its
	# output, each data race, each failed package, and for a timeout the
	# tests still running and the stacks of the goroutines in our tests.
	echo "go test -race, what failed:"
	awk '
		/^FAIL\t/ { if (keep && stacks < 6) print block; block = ""; timeout = 0; print; next }
		/^ *--- FAIL: / { show = 40; print; next }
		/^WARNING: DATA RACE/ { race = 1 }
		race { print; if (/^==================/) race = 0; next }
		/^panic: test timed out/ { timeout = 1; stacks = 0; print; next }
		timeout && /^\trunning tests:/ { running = 1; print; next }
		running { if (/^\t\t/) { print; next } running = 0 }
		timeout && /^goroutine [0-9]+ / { block = $0; keep = 0; next }
		timeout && block != "" {
			if ($0 == "") { if (keep && stacks < 6) { print block; stacks++ } block = ""; next }
			block = block "\n" $0
			if (/_test\.go:[0-9]+/ && !/\/testing\//) keep = 1
			next
		}
		/^panic: / { print; next }
		show > 0 { if (/^    / || /^\t/) { print; show--; next } show = 0 }
	' "$1" | head -n 400
}

no_orphan_servers() {
	# Every A2A server the tests started, from this checkout's npm prefix
	# or from one a test installed into its own temporary folder (the
	# README's install lines), has ended with the program that started it.
	# One whose starter was killed ends at once, or after 30 s for the agent
	# panel's (the time a restarted sidecar has to adopt it): wait that long
	# before calling one an orphan.
	local left i tmp="${TMPDIR:-/tmp}"
	for ((i = 0; i < 45; i++)); do
		left="$(pgrep -af 'a2a-server\.mjs' | grep -F -e "$root/" -e "${tmp%/}/Test")" || return 0
		sleep 1
	done
	echo "A2A servers left running:"
	echo "$left"
	return 1
}

node_tests() {
	(cd tests/node && GIC_BINARY="$root/bin/gemini-ide-companion-test-race" npm test)
}

jetbrains_tests() {
	# Compiles the plugin's core, tests and IDE layer (against compile-only
	# platform stubs) with kotlinc from npm, then runs the core's tests.
	GIC_BINARY="$root/bin/gemini-ide-companion-test-race" plugins/jetbrains/scripts/check.sh
}

sublime_tests() {
	# Includes the editor-link transcript replay (tests/test_transcripts.py),
	# on Sublime Text's plugin host Python (3.8) when it is installed.
	local py=python3
	(cd plugins/sublime && python3.8 -c '') 2>/dev/null && py=python3.8
	(cd plugins/sublime && GIC_BINARY="$root/bin/gemini-ide-companion-test-race" "$py" tests/run.py)
}

fuzz_log="$(mktemp "${TMPDIR:-/tmp}/fuzz-log.XXXXXX")"
go_log="$(mktemp "${TMPDIR:-/tmp}/go-test-log.XXXXXX")"
fuzz_cache="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-cache.XXXXXX")"
trap 'rm -rf "$go_log" "$go_log.failed" "$fuzz_log" "$fuzz_log.failed" "$fuzz_cache" "$bg_dir"' EXIT

fuzz_briefly() {
	local list=scripts/fuzz-targets.txt
	[[ -f "$list" ]] || return 0
	local pkg target
	while read -r pkg target; do
		[[ -z "$pkg" || "$pkg" == \#* ]] && continue
		echo "fuzz $pkg $target"
		# No minimizing in a 10 s run: the engine can lose a worker that the
		# deadline interrupts mid-minimization and report that as a failure
		# (golang/go#52569); a crasher is kept as found, which reproduces too.
		# A fresh corpus cache each run: the one in GOCACHE grows with every
		# run on a machine, and once replaying it takes the whole 10 s the
		# engine fails with "context deadline exceeded". The seed corpora in
		# testdata/ are still run first.
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime 10s -fuzzminimizetime 0 "$pkg" \
			-args -test.fuzzcachedir="$fuzz_cache/$pkg/$target" 2>&1 | tee "$fuzz_log"; then
			# Go 1.26's fuzzing coordinator can report its own -fuzztime
			# deadline as a failure, "context deadline exceeded" with no
			# failing input (golang/go#75804, fixed in Go 1.27). A real
			# failure always writes its input under testdata/fuzz.
			if grep -qxF '    context deadline exceeded' "$fuzz_log" &&
				[[ -z "$(git status --porcelain --untracked-files=all -- "$pkg/testdata/fuzz/$target")" ]]; then
				echo "fuzz $pkg $target: the deadline race of Go's fuzzing coordinator (golang/go#75804), no failing input; not a failure"
				continue
			fi
			# Keep what failed, and the input, for the summary at the end.
			{
				echo "fuzz $pkg $target failed:"
				grep -v '^fuzz: elapsed' "$fuzz_log" | tail -n 40
				for f in $(git status --porcelain --untracked-files=all -- "$pkg/testdata/fuzz/$target" | awk '{print $2}'); do
					echo "input $f:"
					head -c 4000 "$f"
					echo
				done
			} >"$fuzz_log.failed"
			return 1
		fi
	done <"$list"
}

schema_current() {
	# The editor link's JSON Schema and its Go dispatch and client
	# (link/protocol/rpc) are generated from the Go types and the
	# method table of link/protocol (go generate); a stale checked-in
	# copy fails.
	go run ./link/protocol/internal/schemagen -check -src link/protocol -out link/protocol/editor-link.schema.json &&
		go run ./link/protocol/internal/rpcgen -check -out link/protocol/rpc/methods_gen.go
}

install_line() {
	# The README's install line, run as documented from this clone into a
	# clean GOPATH (sharing the module cache) and a clean GOBIN; the
	# installed binary must run.
	grep -q '^go install ./cmd/gemini-ide-companion ' README.md || { echo "README lost its install line"; return 1; }
	local gopath gobin cache rc
	cache="$(go env GOMODCACHE)"
	gopath="$(mktemp -d)" gobin="$(mktemp -d)"
	GOPATH="$gopath" GOMODCACHE="$cache" GOBIN= go install ./cmd/gemini-ide-companion &&
		"$gopath/bin/gemini-ide-companion" help >/dev/null &&
		GOBIN="$gobin" go install ./cmd/gemini-ide-companion &&
		"$gobin/gemini-ide-companion" --version
	rc=$?
	chmod -R u+w "$gopath" 2>/dev/null
	rm -rf "$gopath" "$gobin"
	return $rc
}

if want go || want node || want sublime || want jetbrains || want bench || want a2a; then
	step "npm ci (tests/node)" npm_deps tests/node
	step "build sidecar" build_binary
fi
if want go || want a2a; then
	# Gemini CLI's A2A server, for the A2A bridge's tests (tests/a2a).
	step "npm ci (tests/a2a)" npm_deps tests/a2a
	# Claude Code, as a second real MCP client of the bridge.
	step "npm ci (tests/a2a/claude)" npm_deps tests/a2a/claude
	# The ACP clients of gemini-a2a-acp's tests: the official SDK, acpx and
	# the Node 22 acpx needs.
	step "npm ci (tests/acp)" npm_deps tests/acp
	# The A2A server as a user installs it (npm install -g), for the bridge's
	# and the agent panel's end-to-end tests: they find it on PATH.
	step "npm install -g (tests/a2a/npm-global)" npm_global tests/a2a/npm-global @google/gemini-cli-a2a-server 0.25.2
fi
if want go; then
	step "gofmt" gofmt_clean
	step "go vet" go vet ./...
	step "editor link schema and dispatch are current" schema_current
	step "install line (README)" install_line
fi
if want go; then
	bg_step "staticcheck" staticcheck
	bg_step "cross-compile and vet (linux, darwin, windows × amd64, arm64)" cross_vet
	want sublime && bg_step "Sublime Text package" sublime_tests
	want jetbrains && bg_step "JetBrains plugin (kotlinc)" jetbrains_tests
	bg_start
	step "go test -race" go_tests
	join_bg
	step "no A2A server left running" no_orphan_servers
fi
# (in a full run the A2A tests are part of "go test -race" above)
[[ "$only" == a2a ]] && step "A2A bridge, agent panel and ACP agent tests (tests/a2a, tests/agentpanel, tests/acp)" go test -race -count=1 -timeout 10m ./a2a/... ./tests/a2a/ ./companion/agentpanel/ ./tests/agentpanel/ ./tests/acp/
[[ "$only" == a2a ]] && step "no A2A server left running" no_orphan_servers
{ want bench || [[ "$only" == a2a ]]; } && step "A2A bridge benchmark" scripts/bench-a2a.sh 200
{ want bench || [[ "$only" == a2a ]]; } && step "ACP agent benchmark" scripts/bench-acp.sh
want node && step "conformance (Gemini CLI's IdeClient)" node_tests
[[ "$only" == sublime ]] && step "Sublime Text package" sublime_tests
[[ "$only" == jetbrains ]] && step "JetBrains plugin (kotlinc)" jetbrains_tests
want windows && step "Windows under Wine (scripts/windows.sh)" scripts/windows.sh
want fuzz && step "fuzz (10 s per target)" fuzz_briefly
want bench && step "benchmark, one short round" scripts/bench.sh --short
want bench && step "editor plugins benchmark, one short round (Neovim, Vim, Emacs)" scripts/bench-editors.sh --short
want bench && step "Emacs at a held key's pace, one short run (keys typed through tmux)" scripts/bench-emacs-toggle.sh --short --driver tmux
want bench && step "Emacs at a held key's pace, instructions counted, one short run" scripts/bench-emacs-toggle.sh --short --callgrind

echo
echo "time per step:"
printf '  %s\n' "${timings[@]}"
echo "  total: $SECONDS s"
echo
[[ -s "$go_log.failed" ]] && cat "$go_log.failed"
[[ -s "$fuzz_log.failed" ]] && cat "$fuzz_log.failed"
if ((failed > 0)); then
	echo "failed: ${failures[*]}"
fi
echo "checks: $passed passed, $failed failed"
((failed == 0))
