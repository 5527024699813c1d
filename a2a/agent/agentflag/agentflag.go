// Package agentflag is the command line that the commands in front of
// Gemini CLI's A2A agent share (gemini-a2a-mcp, gemini-a2a-acp): which
// agent to reach and with what credentials, or how to start one, and where
// the log goes. One definition keeps their flags, their checks and their
// messages the same.
package agentflag

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

// Flags holds the shared flags once their FlagSet is parsed.
type Flags struct {
	// URL is --agent: a running A2A agent, "" to start one.
	URL string
	// HeaderFile and TokenEnv are --agent-header-file and
	// --agent-token-env: the user's credentials for URL, never given on
	// the command line itself.
	HeaderFile, TokenEnv string
	// ServerCommand is --server-command: how to start the A2A server.
	ServerCommand string
	// ServerEnv is --server-env, repeated: KEY=VALUE pairs for the
	// started server only.
	ServerEnv []string
	// LogFile is --log-file: "" for stderr.
	LogFile string
}

// Register defines the shared flags on fs. agentUsage describes --agent
// for this command, what is used when it is not given.
func Register(fs *flag.FlagSet, agentUsage string) *Flags {
	f := &Flags{}
	fs.StringVar(&f.URL, "agent", "", agentUsage)
	fs.StringVar(&f.HeaderFile, "agent-header-file", "", "file of \"Name: value\" lines: HTTP headers sent with every request to --agent (e.g. \"Authorization: Bearer …\")")
	fs.StringVar(&f.TokenEnv, "agent-token-env", "", "name of an environment variable whose value is sent to --agent as \"Authorization: Bearer <value>\"")
	fs.StringVar(&f.ServerCommand, "server-command", "", "command that starts Gemini CLI's A2A server (default: gemini-cli-a2a-server on PATH or under node_modules)")
	fs.Func("server-env", "KEY=VALUE added to the started A2A server's environment only (repeatable)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		f.ServerEnv = append(f.ServerEnv, v)
		return nil
	})
	fs.StringVar(&f.LogFile, "log-file", "", "write the log of this command and of the A2A server it starts here (default: stderr)")
	return f
}

// Command is --server-command split into its words, nil when not given.
func (f *Flags) Command() []string {
	if f.ServerCommand == "" {
		return nil
	}
	return strings.Fields(f.ServerCommand)
}

// Header checks --agent and reads the credentials that go with it: nil
// when none are given. starter names what starts a server when --agent is
// not given ("the bridge"), for the message that credentials need --agent.
func (f *Flags) Header(starter string) (http.Header, error) {
	if f.URL != "" {
		if _, err := agent.BaseURL(f.URL); err != nil {
			return nil, err
		}
	}
	if (f.HeaderFile != "" || f.TokenEnv != "") && f.URL == "" {
		return nil, fmt.Errorf("--agent-header-file and --agent-token-env go with --agent (a server %s starts needs neither)", starter)
	}
	h, err := agent.UserCredentials(f.HeaderFile, f.TokenEnv)
	if err != nil {
		return nil, fmt.Errorf("--agent credentials: %w", err)
	}
	return h, nil
}

// OpenLog opens --log-file for appending (stderr when not given); closeLog
// releases it.
func (f *Flags) OpenLog() (w io.Writer, closeLog func() error, err error) {
	if f.LogFile == "" {
		return os.Stderr, func() error { return nil }, nil
	}
	file, err := os.OpenFile(f.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-file: %w", err)
	}
	return file, file.Close, nil
}
