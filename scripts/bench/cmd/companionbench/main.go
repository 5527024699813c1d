// Command companionbench measures gemini-ide-companion against a reference
// companion built the way the official VS Code companion's server is (Node,
// express and the MCP TypeScript SDK), side by side in one run.
//
// It plays both the editor (over the editor link on the companion's stdio,
// answering diff/open at once) and any number of Gemini CLI sessions (MCP
// Streamable HTTP clients with the Bearer token from the initialize result).
// Companions run in turn, interleaved round by round, and the report gives
// for each figure the median and spread of both and the ratio
// ours/reference. It asserts nothing about speed: it exits non-zero only when
// something did not work (a notification missing, a tool call failing, a
// companion crashing).
//
// Usage:
//
//	companionbench [--short] [--rounds N] [--only ours|reference]
//	               [--binary PATH] [--reference DIR] [--json FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run())
}

// options are the driver's flags, read.
type options struct {
	cfg       config
	kinds     []kind
	binary    string
	oursArgs  string
	refDir    string
	nodeBin   string
	unbundled bool
	jsonOut   string
	keep      bool
	timeLimit time.Duration
}

func run() int {
	o, code := parseFlags()
	if code >= 0 {
		return code
	}
	specs, err := launchSpecs(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "companionbench: %v\n", err)
		return 2
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, o.timeLimit)
	defer cancelTime()

	runDir, err := os.MkdirTemp("", "companionbench-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "companionbench: %v\n", err)
		return 1
	}
	w, err := prepareWorkload(filepath.Join(runDir, "workspace"), o.cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "companionbench: %v\n", err)
		return 1
	}

	results, failures, peakReset := runRounds(ctx, o, specs, runDir, w)
	if ctx.Err() != nil {
		failures = append(failures, fmt.Sprintf("run stopped: %v", context.Cause(ctx)))
	}

	rows := buildRows(o.cfg, results)
	printReport(os.Stdout, o.cfg, rows, peakReset)
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, o.cfg, rows); err != nil {
			failures = append(failures, err.Error())
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "\ncompanionbench: %d functional failure(s); logs and TMPDIRs kept in %s\n", len(failures), runDir)
		for _, f := range failures {
			fmt.Fprintf(os.Stderr, "  - %s\n", f)
		}
		return 1
	}
	if o.keep {
		fmt.Fprintf(os.Stderr, "run directory kept: %s\n", runDir)
	} else if err := os.RemoveAll(runDir); err != nil {
		fmt.Fprintf(os.Stderr, "companionbench: remove %s: %v\n", runDir, err)
	}
	return 0
}

// parseFlags reads the flags into options; code is the exit code when
// they are wrong (the reason is on stderr), else -1.
func parseFlags() (o options, code int) {
	var (
		short     = flag.Bool("short", false, "one short round of a few seconds (CI): smaller counts and durations")
		rounds    = flag.Int("rounds", 0, "rounds per companion (default 5, or 1 with --short)")
		only      = flag.String("only", "", "measure only `ours` or `reference`")
		binary    = flag.String("binary", "", "path of the gemini-ide-companion binary")
		oursArgs  = flag.String("ours-args", "", "extra arguments for gemini-ide-companion, space-separated")
		refDir    = flag.String("reference", "scripts/bench/reference", "directory of the reference companion (with node_modules)")
		nodeBin   = flag.String("node", "node", "node executable for the reference")
		unbundled = flag.Bool("reference-unbundled", false, "run the reference from server.js and node_modules instead of its esbuild bundle")
		jsonOut   = flag.String("json", "", "also write the figures as JSON to this file")
		keep      = flag.Bool("keep", false, "keep the run directory (logs, TMPDIRs) even on success")
		phases    = flag.String("phases", strings.Join(allPhases, ","), "load phases to run (start-up always runs), for profiling one of them")
		client    = flag.String("client", "lean", "how CLI sessions call openDiff: `lean` (plain HTTP POSTs on the session, little driver CPU) or sdk (the go-sdk client)")
		timeLimit = flag.Duration("timeout", 45*time.Minute, "give up after this long")
		payMiB    = flag.String("payload-mib", "", "more payload sizes to measure, in MiB, comma-separated (e.g. 64)")
		writeEvy  = flag.Duration("storm-write-every", 0, "in the storm, the editor writes the events due this often (default 1ms: two events per write)")
		idleFor   = flag.Duration("idle", 0, "how long the idle phase watches each companion (default 12s, or 2s with --short)")
		edReads   = flag.String("editor-reads", "whole", "how the editor reads a request over 1 MiB: `whole` (decodes it, as a plugin does) or head (only jsonrpc, id and method, so very large proposals measure the companions rather than the driver)")
	)
	flag.Parse()
	o = options{binary: *binary, oursArgs: *oursArgs, refDir: *refDir, nodeBin: *nodeBin, unbundled: *unbundled,
		jsonOut: *jsonOut, keep: *keep, timeLimit: *timeLimit}
	bad := func(format string, args ...any) (options, int) {
		fmt.Fprintf(os.Stderr, "companionbench: "+format+"\n", args...)
		return options{}, 2
	}

	cfg := fullConfig()
	if *short {
		cfg = shortConfig()
	}
	if *rounds > 0 {
		cfg.rounds = *rounds
	}
	if *writeEvy > 0 {
		cfg.stormWriteEvery = *writeEvy
	}
	if *idleFor > 0 {
		cfg.idleDuration = *idleFor
	}
	switch *client {
	case "lean":
	case "sdk":
		cfg.sdkCalls = true
	default:
		return bad("--client must be lean or sdk, not %q", *client)
	}
	switch *edReads {
	case "whole":
	case "head":
		cfg.editorHeadOnly = true
	default:
		return bad("--editor-reads must be whole or head, not %q", *edReads)
	}
	for _, f := range strings.FieldsFunc(*payMiB, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 200 {
			return bad("--payload-mib: %q is not a size from 1 to 200", f)
		}
		cfg.payloadSizes = append(cfg.payloadSizes, n<<20)
	}
	cfg.phases = phaseSet{}
	for _, p := range strings.Split(*phases, ",") {
		if !slices.Contains(allPhases, p) {
			return bad("unknown phase %q (want some of %s)", p, strings.Join(allPhases, ","))
		}
		cfg.phases[p] = true
	}
	o.cfg = cfg

	switch *only {
	case "":
		o.kinds = []kind{kindOurs, kindReference}
	case string(kindOurs), string(kindReference):
		o.kinds = []kind{kind(*only)}
	default:
		return bad("--only must be ours or reference, not %q", *only)
	}
	return o, -1
}

// launchSpecs says how to start each companion measured.
func launchSpecs(o options) (map[kind]launchSpec, error) {
	specs := map[kind]launchSpec{}
	for _, k := range o.kinds {
		switch k {
		case kindOurs:
			if o.binary == "" {
				return nil, errors.New("--binary is required to measure ours")
			}
			argv := append([]string{o.binary, "--stdio"}, strings.Fields(o.oursArgs)...)
			specs[k] = launchSpec{kind: k, argv: argv}
		case kindReference:
			// Like the VS Code companion, which ships one esbuild bundle
			// (dist/extension.cjs), the reference runs from its bundle.
			entry := filepath.Join("dist", "server.cjs")
			if o.unbundled {
				entry = "server.js"
			}
			script, err := filepath.Abs(filepath.Join(o.refDir, entry))
			if err == nil {
				_, err = os.Stat(script)
			}
			if err == nil {
				_, err = os.Stat(filepath.Join(o.refDir, "node_modules"))
			}
			if err != nil {
				return nil, fmt.Errorf("reference companion not ready in %s (run npm ci && npm run build there): %w", o.refDir, err)
			}
			// The shipped body limit is 10mb; raised so 16 MiB diffs can be compared.
			specs[k] = launchSpec{kind: k, argv: []string{o.nodeBin, script}, env: []string{"REFERENCE_JSON_LIMIT=256mb"}}
		}
	}
	return specs, nil
}

// runRounds runs the rounds, alternating the companions, and returns their
// results, what failed, and whether every round could reset its peak RSS.
func runRounds(ctx context.Context, o options, specs map[kind]launchSpec, runDir string, w *workload) (results map[kind][]roundResult, failures []string, peakReset bool) {
	results = map[kind][]roundResult{}
	seq := 0
	peakReset = true
	for r := range o.cfg.rounds {
		for _, k := range o.kinds {
			if ctx.Err() != nil {
				break
			}
			t0 := time.Now()
			fmt.Fprintf(os.Stderr, "round %d/%d: %s ...", r+1, o.cfg.rounds, k)
			rr, err := runRound(ctx, specs[k], o.cfg, runDir, w, &seq)
			if err != nil {
				fmt.Fprintf(os.Stderr, " FAILED after %v\n", time.Since(t0).Round(time.Millisecond))
				failures = append(failures, fmt.Sprintf("round %d, %s: %v", r+1, k, err))
				continue
			}
			fmt.Fprintf(os.Stderr, " %v\n", time.Since(t0).Round(time.Millisecond))
			peakReset = peakReset && rr.peakReset
			results[k] = append(results[k], rr)
		}
	}
	return results, failures, peakReset
}
