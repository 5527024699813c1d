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
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/review"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// version is the release; builds may set it with -ldflags "-X main.version=…".
var version = "0.1.0"

const usage = `gemini-ide-companion gives your editor Gemini CLI's IDE mode.

Usage:
  gemini-ide-companion [serve] [--workspace DIR]   serve DIR (default: the current folder)
                                                   and review proposed diffs in this terminal
  gemini-ide-companion --stdio                     speak the editor link on stdin/stdout
                                                   (how editor plugins run it)
  gemini-ide-companion env [--workspace DIR]       print the export lines that point a
                                                   terminal's gemini at the companion serving DIR
  gemini-ide-companion --version

In standalone mode, answer each proposed diff with:
  a  accept    r  reject    e  edit the proposal in $VISUAL/$EDITOR, then accept

Flags:
`

type config struct {
	stdio     bool
	workspace string
	logLevel  string
	logFile   string
	version   bool
}

func main() {
	tuneGC()
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

// tuneGC trades a little memory for CPU: the MCP SDK allocates a few hundred
// KB per request over a live heap of a few MiB, so the default collector
// runs every few requests. A higher GOGC with a soft memory limit keeps the
// idle footprint small and large diffs bounded. GOGC and GOMEMLIMIT in the
// environment win.
func tuneGC() {
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
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.stdio, "stdio", false, "speak the editor link on stdin/stdout")
	fs.StringVar(&cfg.workspace, "workspace", "", "workspace folder (default: current folder)")
	fs.StringVar(&cfg.logLevel, "log-level", "", "debug, info, warn or error (default: info with --stdio, warn otherwise)")
	fs.StringVar(&cfg.logFile, "log-file", "", "append logs to this file instead of stderr")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cmd := "serve"
	if fs.NArg() > 0 {
		cmd = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
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
	case "serve", "stdio", "env", "version":
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n", cmd)
		fs.Usage()
		return 2
	}
	if cmd == "version" {
		fmt.Fprintf(stdout, "gemini-ide-companion %s\n", version)
		return 0
	}
	if cmd == "env" {
		return printEnv(cfg, stdout, stderr)
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
		logger.Info().Str("version", version).Int("pid", os.Getpid()).Msg("editor link starting")
		if err := companion.ServeEditorLink(ctx, pollable(stdin), stdout, opts); err != nil {
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
	rv := review.New(review.Options{In: stdin, Out: stdout, Color: color})
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
	fmt.Fprintf(stdout, "To pick this companion when several serve the folder: eval \"$(gemini-ide-companion env)\"\n")
	fmt.Fprintf(stdout, "Proposed edits appear here. Press Ctrl-C to stop.\n")

	errc := make(chan error, 1)
	go func() { errc <- rv.Run(ctx, s) }()
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
		<-ctx.Done()
		return nil
	}
}

// printEnv prints export lines for the companion serving the workspace.
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
	found := discovery.FindForWorkspace(entries, ws, discovery.Alive)
	if len(found) == 0 {
		fmt.Fprintf(stderr, "gemini-ide-companion: no running companion serves %s\n", ws)
		return 1
	}
	e := found[0]
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
