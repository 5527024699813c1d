#!/usr/bin/env bash
# What the Emacs package costs per cursor move at a held key's pace, in
# one Emacs process: the package installed as plugins/emacs/README.md says
# (byte-compiled) and loaded, with eglot, and gemini-companion-mode turned
# off and on in alternate blocks of moves. Two Emacs processes running the
# same code differ by more than the package costs at that pace (their
# garbage collections take 30 to 110 ms each, depending on what the cache
# holds), so scripts/bench-editors.sh cannot resolve it there; see
# docs/performance.md, "Emacs at a held key's pace".
#
#   scripts/bench-emacs-toggle.sh                     8 blocks of 1,500 moves, 33 ms apart (about 8 min)
#   scripts/bench-emacs-toggle.sh --blocks 4 --moves 300
#   scripts/bench-emacs-toggle.sh --short            a smoke run for CI: 2 blocks of 20 moves, no eglot,
#                                                    Emacs's start-up compilation not waited for
#   scripts/bench-emacs-toggle.sh --config "(require 'eglot)"   # the default; "" for a bare Emacs
#   scripts/bench-emacs-toggle.sh --driver tmux      keys typed through tmux (the default: Emacs
#                                                    queues each key itself from a timer)
#   scripts/bench-emacs-toggle.sh --variants "off on on-no-lighter on-no-hooks"
#   scripts/bench-emacs-toggle.sh --callgrind        Emacs under valgrind's callgrind: the instructions
#                                                    it executes per move, and in which functions
#                                                    (300 moves per block, 0.1 s apart, unless given)
#
# The keys: by default a timer in Emacs puts each key (C-n or C-p) in
# unread-command-events PACE seconds after the last, and Emacs runs it as
# a typed key: the command loop, post-command-hook and redisplay on the
# terminal, as for a key from the keyboard, without the terminal's read.
# Typed through tmux instead (--driver tmux), a shell forks a tmux client
# per key and keys sometimes arrive together, which adds noise of its own.
#
# The variants, in turn, block after block:
#   off                  the mode off (the package loaded, as after M-x gemini-companion-mode)
#   on                   the mode on, the sidecar running
#   on-no-lighter        on, without its text in the mode line
#   on-no-hooks          on, without its hooks: nothing reported (what the sidecar and
#                        the process in Emacs cost by being there)
#   on-no-window-hooks   on, without its window-selection/buffer-change functions
#
# Prints each block (Emacs's CPU per move, collections, collector's time,
# bytes allocated) and the medians per variant. Needs emacs, tmux and go;
# Linux (it reads the CPU time Emacs reports from /proc).
set -euo pipefail

blocks=8 moves="" pace="" config="(require 'eglot)" wait=t driver=emacs variants="off on" callgrind=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--short) blocks=2 moves=20 config="" wait=nil; shift ;;
	--blocks) blocks="$2"; shift 2 ;;
	--moves) moves="$2"; shift 2 ;;
	--pace) pace="$2"; shift 2 ;;
	--config) config="$2"; shift 2 ;;
	--driver) driver="$2"; shift 2 ;;
	--variants) variants="$2"; shift 2 ;;
	--callgrind) callgrind=1; shift ;;
	*) echo "usage: $0 [--short] [--blocks N] [--moves N] [--pace SECONDS] [--config ELISP] [--driver emacs|tmux] [--variants \"off on ...\"] [--callgrind]" >&2; exit 2 ;;
	esac
done
if [[ -n "$callgrind" ]]; then
	: "${moves:=300}" "${pace:=0.1}"
	[[ "$driver" == emacs ]] || { echo "--callgrind needs --driver emacs" >&2; exit 2; }
	command -v valgrind >/dev/null || { echo "--callgrind needs valgrind (apt-get install valgrind)" >&2; exit 2; }
fi
: "${moves:=1500}" "${pace:=0.033}"
case "$driver" in emacs | tmux) ;; *) echo "--driver: emacs or tmux, not $driver" >&2; exit 2 ;; esac
read -r -a variant <<<"$variants"
for v in "${variant[@]}"; do
	case "$v" in off | on | on-no-lighter | on-no-hooks | on-no-window-hooks) ;;
	*) echo "unknown variant $v (off, on, on-no-lighter, on-no-hooks, on-no-window-hooks)" >&2; exit 2 ;;
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
(defvar bench-variant "off")
(defvar bench-callgrind $([[ -n "$callgrind" ]] && echo t || echo nil)
  "Non-nil: under callgrind. No collection during a block (one before it),
and Emacs wakes every 50 ms, so that vgdb's commands reach it.")
(when bench-callgrind (run-with-timer 0.05 0.05 #'ignore))
(defvar bench-lighter (cadr (assq 'gemini-companion-mode minor-mode-alist)))
(defun bench-snap (label)
  (let ((a (process-attributes (emacs-pid))))
    (write-region
     (format "%s %s %.4f %d %.4f %d %.3f\n" label bench-variant
             (+ (float-time (alist-get 'utime a)) (float-time (alist-get 'stime a)))
             gcs-done gc-elapsed (bench-allocated) (float-time))
     nil "$log" t 'silent)))
(defun bench-settled ()
  (if (and $wait (fboundp 'comp-async-runnings)
           (or (> (comp-async-runnings) 0) comp-files-queue))
      (run-with-timer 1 nil #'bench-settled)
    (bench-snap "ready")))
(defvar bench-left 0)
(defvar bench-count 0)
(defvar bench-timer nil)
(defvar bench-pace 0.033)
(defun bench-key ()
  "Queue the next key as if typed, or end the block after the last one ran.
The next key is due bench-pace seconds after this one was queued: a slow Emacs
gets no two keys at once (they would share a redisplay)."
  (if (> bench-left 0)
      (progn
        (setq bench-left (1- bench-left) bench-count (1+ bench-count))
        ;; 19 down, 19 up, as the tmux driver types them.
        (push (if (= 0 (% (/ (1- bench-count) 19) 2)) ?\C-n ?\C-p) unread-command-events)
        (setq bench-timer (run-with-timer bench-pace nil #'bench-key)))
    (setq bench-timer nil)
    (bench-snap "end")))
(defun bench-go (moves pace)
  "Queue MOVES keys PACE seconds apart."
  (setq bench-left moves bench-count 0 bench-pace pace
        bench-timer (run-with-timer pace nil #'bench-key)))
(defun bench-start (moves pace)
  "Snapshot \"start\", then, with MOVES > 0, queue MOVES keys PACE seconds apart."
  (when bench-callgrind (setq gc-cons-threshold most-positive-fixnum))
  (bench-snap "start")
  (when (> moves 0) (bench-go moves pace)))
(defun bench-block (variant moves pace)
  "Put the package in VARIANT; once it is there, start a block with bench-start.
On: the sidecar up and its first reports sent (a second after it came up)."
  (setq bench-variant variant)
  (when bench-callgrind
    (setq gc-cons-threshold 800000)
    (garbage-collect))
  (gemini-companion-mode -1)
  (setcar (cdr (assq 'gemini-companion-mode minor-mode-alist))
          (if (equal variant "on-no-lighter") "" bench-lighter))
  (unless (equal variant "off")
    (gemini-companion-mode 1)
    (pcase variant
      ("on-no-hooks" (gemini-companion-context-enable nil))
      ("on-no-window-hooks"
       (remove-hook 'window-selection-change-functions #'gemini-companion-context-schedule)
       (remove-hook 'window-buffer-change-functions #'gemini-companion-context-schedule))))
  (bench-when-ready moves pace))
(defun bench-when-ready (moves pace)
  (if (and gemini-companion-mode (not (gemini-companion-link-running-p)))
      (run-with-timer 0.1 nil #'bench-when-ready moves pace)
    (run-with-timer (if gemini-companion-mode 1 0) nil #'bench-start moves pace)))
(write-region (format "%d" (emacs-pid)) nil "$work/emacs.pid" nil 'silent)
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

under=""
if [[ -n "$callgrind" ]]; then
	under="valgrind -q --tool=callgrind --callgrind-out-file=$work/cg.out --dump-instr=no --combine-dumps=no"
fi
tmux -L "$sock" new-session -d -s bench -x 120 -y 40 \
	"cd $work/ws && HOME=$work/home $under emacs -nw -q --no-splash -l $work/init.el bench.txt"
echo "bench-emacs-toggle: waiting for Emacs's start-up work (native compilation on a first run)" >&2
wait_lines 1 "Emacs to start and finish compiling"
tmux -L "$sock" send-keys -t bench C-x 1
n=1
if [[ "$driver" == emacs && -z "$callgrind" ]]; then emacs_moves=$moves; else emacs_moves=0; fi
# Callgrind's monitor commands, through vgdb. --max-invoke-ms=0: vgdb never
# interrupts Emacs's select with ptrace (it can come back as "Failed select:
# Bad address"); it waits for Emacs to wake, at most 50 ms (bench-callgrind's timer).
cg() { vgdb --max-invoke-ms=0 --pid="$(cat "$work/emacs.pid")" "$@" >/dev/null 2>&1; }
for ((b = 0; b < blocks; b++)); do
	v="${variant[b % ${#variant[@]}]}"
	type_form "(bench-block \"$v\" $emacs_moves $pace)"
	n=$((n + 1)); wait_lines $n "block $((b + 1)) to start"
	if [[ -n "$callgrind" ]]; then
		# Counted from here to the block's end: the keys, and what Emacs does between them.
		cg zero
		type_form "(bench-go $moves $pace)"
	elif [[ "$driver" == tmux ]]; then
		for ((i = 0; i < moves; i++)); do
			if (((i / 19) % 2 == 0)); then key=C-n; else key=C-p; fi
			tmux -L "$sock" send-keys -t bench "$key"
			sleep "$pace"
		done
		# Typed after the moves, so it runs once Emacs has taken them all.
		type_form '(bench-snap "end")'
	fi
	n=$((n + 1)); wait_lines $n "block $((b + 1)) to end"
	[[ -z "$callgrind" ]] || cg dump "block $((b + 1)) $v"
	echo "bench-emacs-toggle: block $((b + 1))/$blocks ($v) done" >&2
done

# The median of ARR[K, 1..N], for the reports below.
median_awk='function median(arr, k, n,   i, j, v, tmp) {
	for (i = 1; i <= n; i++) tmp[i] = arr[k, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (tmp[j] < tmp[i]) { v = tmp[i]; tmp[i] = tmp[j]; tmp[j] = v }
	return n % 2 ? tmp[(n + 1) / 2] : (tmp[n / 2] + tmp[n / 2 + 1]) / 2
}'
echo
echo "Emacs $(emacs --version | head -1 | awk '{print $3}'), the package byte-compiled, config: ${config:-none}; $moves moves per block, $pace s apart, keys from $driver; variants in turn: ${variant[*]}"
echo
awk -v moves="$moves" -v variants="${variant[*]}" "$median_awk"'
	BEGIN {
		nv = split(variants, vs, " ")
		print "| block | variant | CPU µs/move | collections | collector µs/move | CPU outside it µs/move | allocated B/move | seconds |"
		print "|---|---|---|---|---|---|---|---|"
	}
	$1 == "start" { cpu = $3; gcs = $4; gce = $5; al = $6; t = $7; next }
	$1 == "end" {
		k = $2; nb[k]++; i = nb[k]
		c[k, i] = ($3 - cpu) * 1e6 / moves; g[k, i] = $4 - gcs
		ge[k, i] = ($5 - gce) * 1e6 / moves; o[k, i] = c[k, i] - ge[k, i]; a[k, i] = ($6 - al) / moves
		printf "| %d | %s | %.0f | %d | %.0f | %.0f | %.0f | %.1f |\n", ++blk, k, c[k, i], g[k, i], ge[k, i], o[k, i], a[k, i], $7 - t
	}
	# The median over the turns of VARIANT minus "off" in the same turn.
	function paired(arr, k,   n, i, d) {
		n = nb[k] < nb["off"] ? nb[k] : nb["off"]
		for (i = 1; i <= n; i++) d["x", i] = arr[k, i] - arr["off", i]
		return n ? sprintf("%.0f", median(d, "x", n)) : "-"
	}
	END {
		print ""
		print "| variant | blocks | CPU µs/move | collector µs/move | CPU outside it µs/move | allocated B/move | added CPU µs/move: medians | added: paired, median | added outside the collector: paired, median |"
		print "|---|---|---|---|---|---|---|---|---|"
		for (m = 1; m <= nv; m++) {
			k = vs[m]
			if (!nb[k] || seen[k]++) continue
			if (k == "off" || !nb["off"]) { added = "-"; pc = "-"; po = "-" }
			else { added = sprintf("%.0f", median(c, k, nb[k]) - median(c, "off", nb["off"])); pc = paired(c, k); po = paired(o, k) }
			printf "| %s | %d | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |\n", k, nb[k], median(c, k, nb[k]), median(ge, k, nb[k]), median(o, k, nb[k]), median(a, k, nb[k]), added, pc, po
		}
	}' "$log"

[[ -n "$callgrind" ]] || exit 0
# The instructions: per block from its callgrind dump (the sum of its
# functions' own costs), then by where they ran, then the functions whose
# cost changed most against "off" (Emacs's own are addresses: Debian's
# binary is stripped; native-compiled Lisp has its names).
: >"$work/self.tsv"
: >"$work/incl.tsv"
for f in "$work"/cg.out.*; do
	[[ -e "$f" ]] || continue
	blk="$(sed -n 's/^desc: Trigger: dump block \([0-9]*\) \(.*\)$/\1 \2/p' "$f")"
	awk -f "$root/scripts/bench/callgrind-self.awk" "$f" | sed "s|^|$blk\t|" >>"$work/self.tsv"
	# The package's functions with what they call (native-compiled, so named).
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$f" 2>/dev/null |
		sed -n "s/^ *\([0-9,]*\) .*:F[0-9a-f]*_\(gemini_companion[a-z_]*\)_[0-9]* .*/$blk\t\2\t\1/p" | tr -d , >>"$work/incl.tsv"
done
[[ -s "$work/self.tsv" ]] || { echo "bench-emacs-toggle: callgrind wrote no block's counts" >&2; exit 1; }
echo
echo "Instructions (callgrind, no collection during the blocks) per move:"
echo
awk -F'\t' -v moves="$moves" -v variants="${variant[*]}" "$median_awk"'
	function where(ob) {
		if (ob ~ /gemini-companion/) return "the package (native-compiled)"
		if (ob ~ /\.eln$/) return "other Lisp, native-compiled"
		if (ob ~ /emacs/) return "Emacs (C: redisplay, the Lisp interpreter, the collector)"
		if (ob ~ /libc\.so/) return "libc"
		return "other libraries"
	}
	{
		split($1, bv, " "); b = bv[1]; v = bv[2]
		if (!(b in bvar)) { bvar[b] = v; nb[v]++; idx[b] = nb[v] }
		tot[b] += $4; w = where($2); wsum[b, w] += $4; ws[w] = 1
		fsum[v, $2 "\t" $3] += $4; fs[$2 "\t" $3] = 1
	}
	END {
		nv = split(variants, vs, " ")
		for (m = 1; m <= nv; m++) if (!(vs[m] in shown)) { shown[vs[m]] = 1; cols[++nc] = vs[m] }
		for (b in bvar) { v = bvar[b]; t[v, idx[b]] = tot[b] / moves; for (w in ws) wt[w, v, idx[b]] = wsum[b, w] / moves }
		printf "| variant | blocks | instructions per move | added against off |\n|---|---|---|---|\n"
		for (i = 1; i <= nc; i++) {
			v = cols[i]; if (!nb[v]) continue
			med[v] = median(t, v, nb[v])
			printf "| %s | %d | %.0f | %s |\n", v, nb[v], med[v], (v == "off" || !nb["off"]) ? "-" : sprintf("%+.0f", med[v] - med["off"])
		}
		printf "\n| where |"; for (i = 1; i <= nc; i++) printf " %s |", cols[i]
		printf "\n|---|"; for (i = 1; i <= nc; i++) printf "---|"; print ""
		for (w in ws) {
			printf "| %s |", w
			for (i = 1; i <= nc; i++) {
				v = cols[i]; delete y
				for (j = 1; j <= nb[v]; j++) y[v, j] = wt[w, v, j]
				printf " %.0f |", median(y, v, nb[v])
			}
			print ""
		}
		if (!nb["off"]) exit
		for (i = 1; i <= nc; i++) {
			v = cols[i]; if (v == "off" || !nb[v]) continue
			printf "\nThe functions whose own instructions per move changed most, %s against off:\n\n| function | object | off | %s | added |\n|---|---|---|---|---|\n", v, v
			delete d
			for (f in fs) { d[f] = fsum[v, f] / nb[v] / moves - fsum["off", f] / nb["off"] / moves }
			for (k = 0; k < 12; k++) {
				best = ""; for (f in d) if (best == "" || (d[f] < 0 ? -d[f] : d[f]) > (d[best] < 0 ? -d[best] : d[best])) best = f
				if (best == "") break
				split(best, p, "\t"); ob = p[1]; sub(/.*\//, "", ob)
				printf "| %s | %s | %.0f | %.0f | %+.0f |\n", p[2], ob, fsum["off", best] / nb["off"] / moves, fsum[v, best] / nb[v] / moves, d[best]
				delete d[best]
			}
		}
	}' "$work/self.tsv"
echo
echo "The package's functions, with all they call (a report made after a command is inside the command's), per move:"
echo
if [[ ! -s "$work/incl.tsv" ]]; then
	echo "(none by name: the package was not native-compiled yet; --short does not wait for it)"
	exit 0
fi
awk -F'\t' -v moves="$moves" -v variants="${variant[*]}" '
	{ split($1, bv, " "); v = bv[2]; if (!((v, bv[1]) in seenb)) { seenb[v, bv[1]] = 1; nb[v]++ }; c[v, $2] += $3; fn[$2] = 1 }
	END {
		nv = split(variants, vs, " ")
		for (m = 1; m <= nv; m++) if (!(vs[m] in shown)) { shown[vs[m]] = 1; cols[++nc] = vs[m] }
		printf "| function |"; for (i = 1; i <= nc; i++) printf " %s |", cols[i]; print ""
		printf "|---|"; for (i = 1; i <= nc; i++) printf "---|"; print ""
		for (f in fn) {
			printf "| %s |", f
			for (i = 1; i <= nc; i++) printf " %.0f |", nb[cols[i]] ? c[cols[i], f] / nb[cols[i]] / moves : 0
			print ""
		}
	}' "$work/incl.tsv" | { read -r h; read -r r; echo "$h"; echo "$r"; sort -t'|' -k"$((${#variant[@]} > 1 ? 4 : 3))" -n -r | head -8; }
