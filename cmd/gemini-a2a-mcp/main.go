// Command gemini-a2a-mcp is a stdio MCP server that exposes A2A agents as
// MCP tools, and lets an MCP client (Claude Code, Gemini CLI, an editor)
// hand work to a Gemini CLI agent and supervise it.
//
// With --agent URL it talks to a running A2A server; otherwise it starts
// Gemini CLI's A2A server for the current folder, bound to 127.0.0.1, and
// stops it when stdin closes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent/agentflag"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/mcptools"
)

var version = "dev"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gemini-a2a-mcp:", err)
		os.Exit(1)
	}
}

func run() error {
	af := agentflag.Register(flag.CommandLine, "URL of a running Gemini CLI A2A server to supervise (default: start one for --dir)")
	dir := flag.String("dir", ".", "workspace folder for the A2A server started by the bridge")
	noStart := flag.Bool("no-start", false, "never start an A2A server; the gemini_* tools need --agent")
	timeout := flag.Duration("timeout", 2*time.Minute, "longest a tool call waits on an agent")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("gemini-a2a-mcp", version)
		return nil
	}
	agentHeader, err := af.Header("the bridge")
	if err != nil {
		return err
	}
	logw, closeLog, err := af.OpenLog()
	if err != nil {
		return err
	}
	defer closeLog()
	logger := log.New(logw, "gemini-a2a-mcp: ", log.LstdFlags)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hc := agent.NewHTTPClient()

	var gemini mcptools.GeminiAgent
	var srv *launch.Server
	var srvMu sync.Mutex
	// startCtx ends before the bridge returns, so a server still starting
	// then is stopped rather than left behind.
	startCtx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	startDone := make(chan struct{})
	switch {
	case af.URL != "":
		gemini = attach(af.URL, hc, agentHeader)
	case !*noStart:
		command := af.Command()
		// The server starts now, in the background; the first gemini_* call
		// waits for it (bounded by that call's timeout).
		ready := startDone
		var startedAgent *agent.Agent
		var startErr error
		go func() {
			defer close(ready)
			s, err := launch.Start(startCtx, launch.Options{Command: command, Dir: *dir, Env: af.ServerEnv, Log: logw, Setting: serverSetting})
			if err != nil {
				startErr = launchError(err)
				logger.Print(startErr)
				return
			}
			srvMu.Lock()
			srv = s
			srvMu.Unlock()
			logger.Printf("A2A server pid %d on %s (127.0.0.1 only; it answers only requests that carry this launch's secret)", s.PID(), s.URL)
			lctx, cancel := context.WithTimeout(startCtx, 30*time.Second)
			defer cancel()
			startedAgent, startErr = agent.Load(lctx, s.URL, hc, agent.WithHeader(s.Header()))
		}()
		gemini = func(cctx context.Context) (*agent.Agent, error) {
			select {
			case <-ready:
			case <-cctx.Done():
				return nil, fmt.Errorf("waiting for the Gemini CLI A2A server to start: %w", cctx.Err())
			}
			if startErr != nil {
				return nil, startErr
			}
			srvMu.Lock()
			s := srv
			srvMu.Unlock()
			select {
			case <-s.Done():
				return nil, errors.New("the Gemini CLI A2A server has exited; restart the bridge")
			default:
			}
			return startedAgent, nil
		}
	}
	if gemini == nil || af.URL != "" {
		close(startDone)
	}
	defer func() {
		cancelStart()
		<-startDone
		srvMu.Lock()
		s := srv
		srvMu.Unlock()
		if s != nil {
			s.Stop()
		}
	}()

	bridge := mcptools.New(hc, gemini, logger.Printf)
	bridge.CallTimeout = *timeout
	// load_agent: the started server and --agent get their credentials,
	// a server another of the user's programs started gets its secret;
	// nothing goes to any other agent.
	bridge.Credentials = func(base string) http.Header {
		srvMu.Lock()
		s := srv
		srvMu.Unlock()
		switch {
		case s != nil && base == s.URL:
			return s.Header()
		case agentHeader != nil && sameAgent(base, af.URL):
			return agentHeader
		}
		return launchedHeader(base, logger)
	}
	defer bridge.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "gemini-a2a-mcp", Version: version}, nil)
	bridge.Register(server)
	// A client may close its input right after its requests: they are
	// answered first (each is bounded by --timeout).
	err = server.Run(ctx, answeringTransport{Transport: &mcp.StdioTransport{}, wait: *timeout + 10*time.Second})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// serverSetting is how a user of the bridge gives the server command, for
// the errors of launch.
const serverSetting = "the bridge's --server-command (or run the server yourself and pass --agent URL)"

// launchError words a failure to start the server for the supervising
// agent's user: launch's own errors already say what was run and what to do.
func launchError(err error) error {
	var exit *launch.ExitError
	var missing *launch.NotFoundError
	if errors.As(err, &exit) || errors.As(err, &missing) {
		return err
	}
	return fmt.Errorf("starting the Gemini CLI A2A server: %w", err)
}

// userHeader reads the headers the user gives for --agent: from a file, or
// a bearer token from an environment variable, never from the command line.
// launchedHeader is the secret of a server that one of the user's programs
// (a2a/launch) started at base, if any.
func launchedHeader(base string, logger *log.Logger) http.Header {
	h, err := launch.HeaderFor(base)
	if err != nil && !errors.Is(err, launch.ErrNoSecret) {
		logger.Print(err)
	}
	return h
}

func sameAgent(a, b string) bool {
	x, errX := agent.BaseURL(a)
	y, errY := agent.BaseURL(b)
	return errX == nil && errY == nil && x == y
}

// attach loads the agent at url on first use (and again after a failure),
// with header (the user's for --agent), or else the secret of a server one
// of the user's programs started there.
func attach(url string, hc *http.Client, header http.Header) mcptools.GeminiAgent {
	var mu sync.Mutex
	var a *agent.Agent
	return func(ctx context.Context) (*agent.Agent, error) {
		mu.Lock()
		defer mu.Unlock()
		if a != nil {
			return a, nil
		}
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		h := header
		if h == nil {
			if base, err := agent.BaseURL(url); err == nil {
				h, _ = launch.HeaderFor(base)
			}
		}
		got, err := agent.Load(lctx, url, hc, agent.WithHeader(h))
		if errors.Is(err, agent.ErrUnauthorized) {
			return nil, fmt.Errorf("%w; give them with --agent-header-file FILE or --agent-token-env VAR", err)
		}
		if err != nil {
			return nil, err
		}
		a = got
		return a, nil
	}
}
