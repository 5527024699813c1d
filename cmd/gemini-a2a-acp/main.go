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
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/acp"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

var version = "dev"

type envList []string

func (e *envList) String() string { return strings.Join(*e, ",") }
func (e *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}

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
	var serverEnv envList
	agentURL := flag.String("agent", "", "URL of a running A2A agent (e.g. Gemini CLI's A2A server) for every session (default: start Gemini CLI's A2A server for each session's folder)")
	agentHeaderFile := flag.String("agent-header-file", "", "file of \"Name: value\" lines: HTTP headers sent with every request to --agent (e.g. \"Authorization: Bearer …\")")
	agentTokenEnv := flag.String("agent-token-env", "", "name of an environment variable whose value is sent to --agent as \"Authorization: Bearer <value>\"")
	serverCmd := flag.String("server-command", "", "command that starts Gemini CLI's A2A server (default: gemini-cli-a2a-server on PATH or under node_modules)")
	logFile := flag.String("log-file", "", "write the agent's and the A2A server's log here (default: stderr)")
	timeout := flag.Duration("timeout", 2*time.Minute, "longest wait for the A2A server to start or to answer a request (a turn runs until it ends or is cancelled)")
	sessionDir := flag.String("session-dir", defaultSessionDir(), "where session records are kept for session/load (\"\" keeps none)")
	flag.Var(&serverEnv, "server-env", "KEY=VALUE added to the started A2A server's environment only (repeatable)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("gemini-a2a-acp", version)
		return nil
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: gemini-a2a-acp takes only flags (it speaks ACP on stdin and stdout)", flag.Arg(0))
	}
	if *agentURL != "" {
		if _, err := agent.BaseURL(*agentURL); err != nil {
			return err
		}
	}
	if (*agentHeaderFile != "" || *agentTokenEnv != "") && *agentURL == "" {
		return errors.New("--agent-header-file and --agent-token-env go with --agent (a server gemini-a2a-acp starts needs neither)")
	}
	agentHeader, err := agent.UserCredentials(*agentHeaderFile, *agentTokenEnv)
	if err != nil {
		return fmt.Errorf("--agent credentials: %w", err)
	}
	var logw io.Writer = os.Stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("log file: %w", err)
		}
		defer f.Close()
		logw = f
	}
	logger := log.New(logw, "gemini-a2a-acp: ", log.LstdFlags)
	var command []string
	if *serverCmd != "" {
		command = strings.Fields(*serverCmd)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return acp.Serve(ctx, os.Stdin, os.Stdout, acp.Options{
		AgentURL:      *agentURL,
		AgentHeader:   agentHeader,
		ServerCommand: command,
		ServerEnv:     serverEnv,
		ServerLog:     logw,
		Timeout:       *timeout,
		SessionDir:    *sessionDir,
		HTTPClient:    agent.NewHTTPClient(),
		Version:       version,
		Logf:          logger.Printf,
	})
}
