// Command gemini-ide-companion gives an editor Gemini CLI's IDE mode. Editor
// plugins run it with --stdio; without arguments it serves the current
// folder on its own and reviews proposed diffs in its terminal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/agentpanel"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/review"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/doctor"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// version is the release; builds may set it with -ldflags "-X main.version=…".
var version = "0.1.0"

const usage = `gemini-ide-companion gives your editor Gemini CLI's IDE mode.

Usage:
  gemini-ide-companion [serve] [--workspace DIR]   serve DIR (default: the current folder)
                                                   and review proposed diffs in this terminal
  gemini-ide-companion env [--workspace DIR] [--port N | --pid N]
                                                   print the export lines that point this
                                                   terminal's gemini at a running companion
  gemini-ide-companion list                        every running companion: editor, workspace,
                                                   PID, port and age
  gemini-ide-companion doctor [--workspace DIR] [--json]
                                                   explain whether a gemini started here would
                                                   connect, and what to do if not
  gemini-ide-companion --stdio [--framing=lsp]     speak the editor link on stdin/stdout
                                                   (how editor plugins run it); lsp framing
                                                   suits editors' built-in JSON-RPC clients
  gemini-ide-companion help | --help | --version

In standalone mode, answer each proposed diff with one key:
  a  accept    r  reject    e  edit the proposal in $VISUAL/$EDITOR, then accept

Flags:
`

type config struct {
	stdio     bool
	workspace string
	logLevel  string
	logFile   string
	version   bool
	port      int
	pid       int
	json      bool
	framing   string
}

func main() {
	tuneRuntime()
	// An editor that dies takes the read ends of our stdout and stderr with
	// it; the next write must fail, not kill the process before it has
	// removed its discovery file.
	osproc.SurviveBrokenPipe()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, &quietWriter{w: os.Stderr}))
}

// quietWriter passes writes on until the first one fails, then drops them
// all and reports success: logs to a closed stderr are lost, harmlessly,
// instead of failing (and re-reporting) every later log line.
type quietWriter struct {
	w      io.Writer
	broken atomic.Bool
}

func (q *quietWriter) Write(p []byte) (int, error) {
	if q.broken.Load() {
		return len(p), nil
	}
	if _, err := q.w.Write(p); err != nil {
		q.broken.Store(true)
	}
	return len(p), nil
}

// Fd lets terminal detection see the real stderr.
func (q *quietWriter) Fd() uintptr {
	if f, ok := q.w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// tuneRuntime trades a little memory for CPU: the MCP SDK allocates a few hundred
// KB per request over a live heap of a few MiB, so the default collector
// runs every few requests. A higher GOGC with a soft memory limit keeps the
// idle footprint small and large diffs bounded. GOGC and GOMEMLIMIT in the
// environment win. Nothing reads heap profiles in the sidecar, so the
// runtime does not keep their samples (about 1.4 MiB once large proposals
// have passed through).
//
// It also runs Go code on one processor (GOMAXPROCS=1; the environment's
// GOMAXPROCS wins). The sidecar relays messages: each step of a tool call
// hands it from one goroutine to the next (HTTP, the MCP session, the tool,
// the editor link), and with several processors each hand-off may wake
// another OS thread that spins for work and sleeps again. On one processor
// a small call costs about a third less CPU, and throughput and tail
// latency improve; large proposals are no slower, since decoding, diffing
// and writing one is sequential work anyway (docs/performance.md,
// "One processor").
func tuneRuntime() {
	runtime.MemProfileRate = 0
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(96 << 20)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("gemini-ide-companion", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cfg.stdio, "stdio", false, "speak the editor link on stdin/stdout")
	fs.StringVar(&cfg.workspace, "workspace", "", "workspace folder (default: current folder)")
	fs.StringVar(&cfg.logLevel, "log-level", "", "debug, info, warn or error (default: info with --stdio, warn otherwise)")
	fs.StringVar(&cfg.logFile, "log-file", "", "append logs to this file instead of stderr")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.IntVar(&cfg.port, "port", 0, "env: pick the companion listening on this port")
	fs.IntVar(&cfg.pid, "pid", 0, "env: pick the companion with this process ID (or IDE PID)")
	fs.BoolVar(&cfg.json, "json", false, "doctor: print the findings as JSON")
	fs.StringVar(&cfg.framing, "framing", "ndjson", "--stdio: ndjson (a message per line) or lsp (Content-Length headers)")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	// parse reports a bad flag with the usage on stderr (exit 2) and a help
	// request with the usage on stdout (exit 0); -1 means go on.
	parse := func(a []string) int {
		err := fs.Parse(a)
		switch {
		case err == nil:
			return -1
		case errors.Is(err, flag.ErrHelp):
			printUsage(stdout)
			return 0
		default:
			fmt.Fprintf(stderr, "gemini-ide-companion: %v\n\n", err)
			printUsage(stderr)
			return 2
		}
	}
	if code := parse(args); code >= 0 {
		return code
	}
	cmd := "serve"
	if fs.NArg() > 0 {
		cmd = fs.Arg(0)
		if code := parse(fs.Args()[1:]); code >= 0 {
			return code
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "gemini-ide-companion: unexpected argument %q\n\n", fs.Arg(0))
			printUsage(stderr)
			return 2
		}
	}
	if cfg.version {
		fmt.Fprintf(stdout, "gemini-ide-companion %s\n", version)
		return 0
	}
	if cfg.stdio {
		cmd = "stdio"
	}
	switch cmd {
	case "serve", "stdio", "env", "list", "doctor", "version", "help":
	default:
		fmt.Fprintf(stderr, "gemini-ide-companion: unknown command %q\n\n", cmd)
		printUsage(stderr)
		return 2
	}
	switch cmd {
	case "help":
		printUsage(stdout)
		return 0
	case "version":
		fmt.Fprintf(stdout, "gemini-ide-companion %s\n", version)
		return 0
	case "env":
		return printEnv(cfg, stdout, stderr)
	case "list":
		return printList(stdout, stderr)
	case "doctor":
		return runDoctor(cfg, stdout, stderr)
	}

	framing, err := link.ParseFraming(cfg.framing)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: --framing: %v\n\n", err)
		printUsage(stderr)
		return 2
	}
	logger, closeLog, err := newLogger(cfg, cmd == "stdio", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 2
	}
	defer closeLog()

	ctx, stop := signal.NotifyContext(context.Background(), osproc.StopSignals()...)
	defer stop()
	opts := companion.Options{Version: version, Logger: logger}
	if cmd == "stdio" {
		logger.Info().Str("version", version).Int("pid", os.Getpid()).Stringer("framing", framing).Msg("editor link starting")
		if err := editorlink.Serve(ctx, pollable(stdin), stdout, editorlink.Config{
			Options:    opts,
			Framing:    framing,
			Extensions: []editorlink.Extension{agentpanel.Extension(logger)},
		}); err != nil {
			logger.Error().Err(err).Msg("editor link failed")
			return 1
		}
		return 0
	}
	if err := serveStandalone(ctx, cfg, opts, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	return 0
}

func newLogger(cfg config, stdio bool, stderr io.Writer) (zerolog.Logger, func(), error) {
	level := cfg.logLevel
	if level == "" {
		level = "warn"
		if stdio {
			level = "info"
		}
	}
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Logger{}, nil, fmt.Errorf("invalid --log-level %q (use debug, info, warn or error)", level)
	}
	var w io.Writer = stderr
	closeFn := func() {}
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return zerolog.Logger{}, nil, fmt.Errorf("open log file: %w", err)
		}
		w = f
		closeFn = func() { f.Close() }
	} else if !stdio {
		if f, ok := stderr.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
			w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05"}
		}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), closeFn, nil
}

func workspaceDir(cfg config) (string, error) {
	dir := cfg.workspace
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("current folder: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace %s is not a folder", abs)
	}
	return abs, nil
}

func serveStandalone(ctx context.Context, cfg config, opts companion.Options, stdin io.Reader, stdout io.Writer) error {
	ws, err := workspaceDir(cfg)
	if err != nil {
		return err
	}
	color := os.Getenv("NO_COLOR") == ""
	if f, ok := stdout.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		color = false
	}
	ropts := review.Options{In: stdin, Out: stdout, Color: color}
	if f, ok := stdin.(*os.File); ok {
		if restore, ok := review.KeyMode(f); ok {
			defer restore()
			ropts.Keys = true
			ropts.Cooked = func() func() {
				restore()
				return func() { review.KeyMode(f) }
			}
		}
	}
	rv := review.New(ropts)
	s := companion.New(opts)
	s.SetEditor(rv)
	info, err := s.Start(ctx, companion.Identity{
		IDE:       discovery.IDEInfo{Name: "gemini-ide-companion", DisplayName: "Gemini IDE Companion"},
		Workspace: []string{ws},
		IDEPID:    discovery.TerminalIDEPID(),
	})
	if err != nil {
		return err
	}
	defer s.Close()

	fmt.Fprintf(stdout, "Gemini IDE Companion %s is serving %s on 127.0.0.1:%d.\n", version, ws, info.Port)
	if info.DiscoveryFile != "" {
		fmt.Fprintf(stdout, "In another terminal, in this folder, run `gemini` (and `/ide enable` if IDE mode is off).\n")
	} else {
		fmt.Fprintf(stdout, "No discovery file could be written (%v).\n", info.DiscoveryErr)
	}
	fmt.Fprintf(stdout, "To pick this companion when several serve the folder: eval \"$(%s env --pid %d)\"\n", shellQuote(selfPath()), os.Getpid())
	fmt.Fprintf(stdout, "Proposed edits appear here. %s Press Ctrl-C to stop.\n", rv.HowToAnswer())

	errc := make(chan error, 1)
	go func() { errc <- rv.Run(ctx, s.Proposals()) }()
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\nStopping.")
		return nil
	case err := <-errc:
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		// Input closed: keep serving until stopped; decisions can no
		// longer be taken here, so diffs are left to the CLI.
		fmt.Fprintln(stdout, "Input closed: answer proposed edits in Gemini CLI. Press Ctrl-C to stop.")
		<-ctx.Done()
		return nil
	}
}

// selfPath is this program's absolute path, so that printed commands work
// as printed even when it is not on PATH.
func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return "gemini-ide-companion"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// printEnv prints export lines for the companion a Gemini CLI started in the
// workspace would connect to, or the one named by --port/--pid.
func printEnv(cfg config, stdout, stderr io.Writer) int {
	ws, err := workspaceDir(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	entries, err := discovery.List(discovery.Dir())
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	var e discovery.Entry
	if cfg.port > 0 || cfg.pid > 0 {
		var ok bool
		for _, c := range entries {
			if (cfg.port > 0 && c.File.Port == cfg.port) || (cfg.pid > 0 && (c.File.PID == cfg.pid || c.IDEPID == cfg.pid)) {
				e, ok = c, true
				break
			}
		}
		if !ok {
			fmt.Fprintf(stderr, "gemini-ide-companion: no running companion with --port %d / --pid %d (see: gemini-ide-companion list)\n", cfg.port, cfg.pid)
			return 1
		}
	} else {
		found := discovery.CLIPick(entries, ws, discovery.CLIIDEPID(), discovery.CLIEnvPort(), discovery.Alive)
		if len(found) == 0 {
			fmt.Fprintf(stderr, "gemini-ide-companion: no running companion serves %s (see: gemini-ide-companion list)\n", ws)
			return 1
		}
		e = found[0]
		if len(found) > 1 {
			fmt.Fprintf(stderr, "gemini-ide-companion: %d companions serve %s; picked %s (port %d), as Gemini CLI would. Others: --port", len(found), ws, e.File.IDEInfo.DisplayName, e.File.Port)
			for _, o := range found[1:] {
				fmt.Fprintf(stderr, " %d", o.File.Port)
			}
			fmt.Fprintln(stderr)
		}
	}
	env := discovery.Env(e.File, e.IDEPID)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "export %s=%s\n", k, shellQuote(env[k]))
	}
	return 0
}

// printList shows every live companion of this user.
func printList(stdout, stderr io.Writer) int {
	all, err := discovery.ListAll(discovery.Dir())
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "EDITOR\tWORKSPACE\tPID\tIDE PID\tPORT\tAGE")
	n := 0
	for _, f := range all {
		if f.Err != nil || !discovery.Alive(f.IDEPID) || (f.File.PID > 0 && !discovery.Alive(f.File.PID)) {
			continue
		}
		n++
		pid := "-"
		if f.File.PID > 0 {
			pid = strconv.Itoa(f.File.PID)
		}
		name := f.File.IDEInfo.DisplayName
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", name, f.File.WorkspacePath, pid, f.IDEPID, f.File.Port, age(f.ModTime))
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintf(stderr, "No running companion (in %s).\n", discovery.Dir())
	}
	return 0
}

func age(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	default:
		return d.Round(time.Hour).String()
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pollable returns stdin as a file the runtime polls, so that closing it
// releases a pending read and the editor link can stop without waiting for
// the editor to close the pipe. Other readers are returned as they are.
func pollable(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || isatty.IsTerminal(f.Fd()) {
		// A terminal is shared with the shell; leave its mode alone.
		return r
	}
	return osproc.Pollable(f)
}

// runDoctor prints doctor's findings for the workspace (default: the
// current folder); exit 0 only when a gemini started there would connect.
func runDoctor(cfg config, stdout, stderr io.Writer) int {
	ws, err := workspaceDir(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	rep := doctor.Run(context.Background(), doctor.Options{Cwd: ws})
	if cfg.json {
		if err := doctor.WriteJSON(stdout, rep); err != nil {
			return 1
		}
	} else {
		doctor.Write(stdout, rep)
	}
	if !rep.WouldConnect {
		return 1
	}
	return 0
}
