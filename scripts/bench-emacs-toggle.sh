#!/usr/bin/env bash
# What the Emacs package costs per cursor move at a held key's pace, in
# one Emacs process: the package installed as plugins/emacs/README.md says
# (byte-compiled) and loaded, with eglot, and gemini-companion-mode turned
# off and on in alternate blocks of moves typed through tmux. Two Emacs
# processes running the same code differ by more than the package costs at
# that pace (their garbage collections take 30 to 110 ms each, depending on
# what the cache holds), so scripts/bench-editors.sh cannot resolve it
# there; see docs/performance.md, "Emacs at a held key's pace".
#
#   scripts/bench-emacs-toggle.sh                     8 blocks of 1,500 moves, 33 ms apart (about 8 min)
#   scripts/bench-emacs-toggle.sh --blocks 4 --moves 300
#   scripts/bench-emacs-toggle.sh --short            a smoke run for CI: 2 blocks of 20 moves, no eglot,
#                                                    Emacs's start-up compilation not waited for
#   scripts/bench-emacs-toggle.sh --config "(require 'eglot)"   # the default; "" for a bare Emacs
#
# Prints each block (Emacs's CPU per move, collections, collector's time,
# bytes allocated) and the medians with the mode off and on. Needs emacs,
# tmux and go; Linux (it reads the CPU time Emacs reports from /proc).
set -euo pipefail

blocks=8 moves=1500 pace=0.033 config="(require 'eglot)" wait=t
while [[ $# -gt 0 ]]; do
	case "$1" in
	--short) blocks=2 moves=20 config="" wait=nil; shift ;;
	--blocks) blocks="$2"; shift 2 ;;
	--moves) moves="$2"; shift 2 ;;
	--pace) pace="$2"; shift 2 ;;
	--config) config="$2"; shift 2 ;;
	*) echo "usage: $0 [--short] [--blocks N] [--moves N] [--pace SECONDS] [--config ELISP]" >&2; exit 2 ;;
	esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/gic-emacs-toggle.XXXXXX")"
sock="gic-emacs-toggle-$$"
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/home" "$work/pkg" "$work/ws"
(cd "$root" && go build -o "$work/gemini-ide-companion" ./cmd/gemini-ide-companion)
# Installed as plugins/emacs/README.md says: the .el files, byte-compiled.
cp "$root"/plugins/emacs/*.el "$work/pkg/"
emacs --batch -L "$work/pkg" -f batch-byte-compile "$work"/pkg/*.el 2>/dev/null
for i in $(seq 1 2000); do printf 'line %4d: the quick brown fox jumps over the lazy dog, twice.\n' "$i"; done > "$work/ws/bench.txt"

log="$work/blocks.log"
cat > "$work/init.el" <<EOF
;;; -*- lexical-binding: t -*-
(setq make-backup-files nil auto-save-default nil create-lockfiles nil
      native-comp-async-report-warnings-errors 'silent)
$config
(add-to-list 'load-path "$work/pkg")
(require 'gemini-companion)
(setq gemini-companion-sidecar-program "$work/gemini-ide-companion")
(gemini-companion-mode 1)
(load "$root/scripts/bench/emacs-allocated.el" nil t)
(defun bench-snap (label)
  (let ((a (process-attributes (emacs-pid))))
    (write-region
     (format "%s %s %.4f %d %.4f %d %.3f\n" label (if gemini-companion-mode "on" "off")
             (+ (float-time (alist-get 'utime a)) (float-time (alist-get 'stime a)))
             gcs-done gc-elapsed (bench-allocated) (float-time))
     nil "$log" t 'silent)))
(defun bench-settled ()
  (if (and $wait (fboundp 'comp-async-runnings)
           (or (> (comp-async-runnings) 0) comp-files-queue))
      (run-with-timer 1 nil #'bench-settled)
    (bench-snap "ready")))
(defun bench-when-ready ()
  "Snapshot \"start\" once the mode is in its state: off, or on with the
sidecar up and its first reports sent (a second after it came up)."
  (if (and gemini-companion-mode (not (gemini-companion-link-running-p)))
      (run-with-timer 0.1 nil #'bench-when-ready)
    (run-with-timer (if gemini-companion-mode 1 0) nil #'bench-snap "start")))
(add-hook 'emacs-startup-hook (lambda () (run-with-timer 1 nil #'bench-settled)))
EOF

lines() { [[ -f "$log" ]] && wc -l < "$log" || echo 0; }
wait_lines() { # wait_lines N WHAT: until the log has N lines
	local deadline=$((SECONDS + 900))
	while [[ "$(lines)" -lt "$1" ]]; do
		if [[ $SECONDS -gt $deadline ]]; then
			echo "timed out waiting for $2" >&2
			tmux -L "$sock" capture-pane -p -t bench >&2 || true
			exit 1
		fi
		sleep 0.2
	done
}
type_form() { tmux -L "$sock" send-keys -t bench M-: "$1" Enter; }

tmux -L "$sock" new-session -d -s bench -x 120 -y 40 \
	"cd $work/ws && HOME=$work/home emacs -nw -q --no-splash -l $work/init.el bench.txt"
echo "bench-emacs-toggle: waiting for Emacs's start-up work (native compilation on a first run)" >&2
wait_lines 1 "Emacs to start and finish compiling"
tmux -L "$sock" send-keys -t bench C-x 1
n=1
for ((b = 0; b < blocks; b++)); do
	if ((b % 2 == 0)); then mode=-1; else mode=1; fi
	type_form "(progn (gemini-companion-mode $mode) (bench-when-ready))"
	n=$((n + 1)); wait_lines $n "block $((b + 1)) to start"
	for ((i = 0; i < moves; i++)); do
		if (((i / 19) % 2 == 0)); then key=C-n; else key=C-p; fi
		tmux -L "$sock" send-keys -t bench "$key"
		sleep "$pace"
	done
	# Typed after the moves, so it runs once Emacs has taken them all.
	type_form '(bench-snap "end")'
	n=$((n + 1)); wait_lines $n "block $((b + 1)) to end"
	echo "bench-emacs-toggle: block $((b + 1))/$blocks done" >&2
done

echo
echo "Emacs $(emacs --version | head -1 | awk '{print $3}'), the package byte-compiled, config: ${config:-none}; $moves moves per block, $pace s apart, mode off and on alternated"
echo
awk -v moves="$moves" '
	$1 == "start" { cpu = $3; gcs = $4; gce = $5; al = $6; t = $7; next }
	$1 == "end" {
		k = $2; nb[k]++; i = nb[k]
		c[k, i] = ($3 - cpu) * 1e6 / moves; g[k, i] = $4 - gcs
		ge[k, i] = ($5 - gce) * 1e6 / moves; a[k, i] = ($6 - al) / moves
		printf "| %d | %s | %.0f | %d | %.0f | %.0f | %.0f | %.1f |\n", ++blk, k, c[k, i], g[k, i], ge[k, i], c[k, i] - ge[k, i], a[k, i], $7 - t
	}
	function median(arr, k, n,   i, j, v, tmp) {
		for (i = 1; i <= n; i++) tmp[i] = arr[k, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (tmp[j] < tmp[i]) { v = tmp[i]; tmp[i] = tmp[j]; tmp[j] = v }
		return n % 2 ? tmp[(n + 1) / 2] : (tmp[n / 2] + tmp[n / 2 + 1]) / 2
	}
	BEGIN { print "| block | mode | CPU µs/move | collections | collector µs/move | CPU outside it µs/move | allocated B/move | seconds |"; print "|---|---|---|---|---|---|---|---|" }
	END {
		print ""
		print "| mode | blocks | CPU µs/move | collector µs/move | allocated B/move |"
		print "|---|---|---|---|---|"
		for (m = 0; m < 2; m++) {
			k = m ? "on" : "off"
			printf "| %s | %d | %.0f | %.0f | %.0f |\n", k, nb[k], median(c, k, nb[k]), median(ge, k, nb[k]), median(a, k, nb[k])
		}
		printf "\nadded with the mode on (median on − median off): %.0f µs of CPU per move, %.0f B allocated per move\n", median(c, "on", nb["on"]) - median(c, "off", nb["off"]), median(a, "on", nb["on"]) - median(a, "off", nb["off"])
	}' "$log"
