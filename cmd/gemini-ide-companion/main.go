// Command gemini-ide-companion gives an editor Gemini CLI's IDE mode. Editor
// plugins run it with --stdio; without arguments it serves the current
// folder on its own and reviews proposed diffs in its terminal.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

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
  gemini-ide-companion doctor --agent [--workspace DIR] [--json] [--agent-command JSON]
                                                   whether the agent panel can start Gemini CLI's
                                                   A2A server here (node, the server and its
                                                   version, the folder of its secret)
  gemini-ide-companion --stdio [--framing=lsp]     speak the editor link on stdin/stdout
                                                   (how editor plugins run it); lsp framing
                                                   suits editors' built-in JSON-RPC clients
  gemini-ide-companion tools                       a stdio MCP server with the editor tools
                                                   (diagnostics, definitions, references...),
                                                   answered by the editor this runs in
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
	timeout   time.Duration
	// doctor --agent: the agent panel's checks, with the plugin's server
	// command (a JSON list) and the name of that option.
	agent        bool
	agentCommand string
	agentSetting string
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

// flags is the flag set of every command, writing into cfg.
func flags(cfg *config) *flag.FlagSet {
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
	fs.BoolVar(&cfg.agent, "agent", false, "doctor: check what the agent panel needs to start Gemini CLI's A2A server (node, the server, the secret folder)")
	fs.StringVar(&cfg.agentCommand, "agent-command", "", "doctor --agent: the server command set in the editor plugin, as a JSON list of strings")
	fs.StringVar(&cfg.agentSetting, "agent-setting", "", "doctor --agent: how the editor plugin's user sets that command (for the advice)")
	fs.StringVar(&cfg.framing, "framing", "ndjson", "--stdio: ndjson (a message per line) or lsp (Content-Length headers)")
	fs.DurationVar(&cfg.timeout, "editor-timeout", 0, "--stdio: how long the editor may take to show a diff or answer an editor tool (default 10s)")
	return fs
}

// printUsage writes the usage and every flag to w.
func printUsage(w io.Writer) {
	fmt.Fprint(w, usage)
	fs := flags(&config{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// tuneRuntime sets the runtime up for a relay of small messages with now
// and then a very large one: a higher GOGC under a soft memory limit, no
// heap profile samples, and Go code on one processor (GOMAXPROCS=1). The
// environment's GOGC, GOMEMLIMIT and GOMAXPROCS win. docs/performance.md
// ("The runtime's settings") says why, with the figures.
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
	fs := flags(&cfg)
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
	case "stdio":
		return runStdio(cfg, stdin, stdout, stderr)
	case "tools":
		return runTools(cfg, stdin, stdout, stderr)
	case "serve":
		return runServe(cfg, stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "gemini-ide-companion: unknown command %q\n\n", cmd)
	printUsage(stderr)
	return 2
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

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
