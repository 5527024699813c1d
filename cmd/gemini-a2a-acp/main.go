// Command gemini-a2a-acp is an Agent Client Protocol (ACP) agent in front
// of A2A agents: an editor that speaks ACP (Zed, JetBrains IDEs, Neovim
// with CodeCompanion or avante.nvim, Emacs with agent-shell, acpx) runs it
// as its agent and talks, through it, to Gemini CLI's A2A agent.
//
// It speaks ACP on stdin/stdout. For each session it starts Gemini CLI's
// A2A server for the session's folder, bound to 127.0.0.1, and stops it
// when stdin closes; with --agent URL every session goes to that running
// A2A agent instead. See docs/acp.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/acp"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent/agentflag"
)

var version = "dev"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gemini-a2a-acp:", err)
		os.Exit(1)
	}
}

// defaultSessionDir is where session records are kept unless
// --session-dir says otherwise.
func defaultSessionDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gemini-a2a-acp", "sessions")
}

func run() error {
	af := agentflag.Register(flag.CommandLine, "URL of a running A2A agent (e.g. Gemini CLI's A2A server) for every session (default: start Gemini CLI's A2A server for each session's folder)")
	timeout := flag.Duration("timeout", 2*time.Minute, "longest wait for the A2A server to start or to answer a request (a turn runs until it ends or is cancelled)")
	sessionDir := flag.String("session-dir", defaultSessionDir(), "where session records are kept for session/load (\"\" keeps none)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("gemini-a2a-acp", version)
		return nil
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: gemini-a2a-acp takes only flags (it speaks ACP on stdin and stdout)", flag.Arg(0))
	}
	agentHeader, err := af.Header("gemini-a2a-acp")
	if err != nil {
		return err
	}
	logw, closeLog, err := af.OpenLog()
	if err != nil {
		return err
	}
	defer closeLog()
	logger := log.New(logw, "gemini-a2a-acp: ", log.LstdFlags)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, os.Stdin, os.Stdout, acp.Options{
		AgentURL:      af.URL,
		AgentHeader:   agentHeader,
		ServerCommand: af.Command(),
		ServerEnv:     af.ServerEnv,
		ServerLog:     logw,
		Timeout:       *timeout,
		SessionDir:    *sessionDir,
		HTTPClient:    agent.NewHTTPClient(),
		Version:       version,
		Logf:          logger.Printf,
	})
}
