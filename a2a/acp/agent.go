// Package acp is an Agent Client Protocol (ACP) agent in front of A2A
// agents: it serves ACP over a stdio pair (newline-delimited JSON-RPC 2.0,
// ACP protocol version 1) and carries each ACP session to an A2A agent,
// Gemini CLI's A2A server above all, which it starts for the session's
// folder (a2a/launch) or finds at a URL the user gives.
//
// A session is an A2A context; its prompts are message/stream turns on one
// task, sent through an agent.Line so that session/cancel really stops what
// the turn runs. The server's events are read through the RFC's model of a
// turn (a2a/rfc), the same the editor's agent panel uses, and become ACP
// session updates: text and thought chunks, tool calls with their kind,
// status, locations and, for edits, a diff; a confirmation becomes
// session/request_permission, the option chosen the RFC's outcome. Slash
// commands of the server are offered as ACP's available commands. An
// approved edit is written through the client (fs/write_text_file) when it
// offers that, so the editor's buffer has it. MCP servers the client
// passes reach the A2A server's settings. docs/acp.md has the whole
// mapping.
package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
)

// Options configure the agent.
type Options struct {
	// AgentURL attaches every session to this A2A agent instead of starting
	// Gemini CLI's A2A server for each session's folder.
	AgentURL string
	// AgentHeader goes with every request to AgentURL: the user's
	// credentials for an agent they started. Nil: the secret of a server
	// that one of the user's programs started there (launch.HeaderFor), if
	// any. The servers the adapter starts get their own launch's secret.
	AgentHeader http.Header
	// ServerCommand starts the server (default: launch.Find's), ServerEnv
	// is added to its environment, ServerLog gets its output.
	ServerCommand []string
	ServerEnv     []string
	ServerLog     io.Writer
	// Timeout bounds starting a server and each request that is not a
	// turn (a turn runs until it ends or the client cancels it).
	Timeout time.Duration
	// SessionDir keeps a record of each session, for session/load after a
	// restart; "" keeps none.
	SessionDir string
	// HTTPClient talks to the A2A agents (agent.NewHTTPClient's).
	HTTPClient *http.Client
	// Version is reported in initialize's agentInfo.
	Version string
	// Logf logs a line for the user's log file.
	Logf func(format string, args ...any)
}

// Agent is the ACP agent of one client connection.
type Agent struct {
	opts  Options
	pool  *pool
	store store
	conn  *conn

	mu       sync.Mutex
	sessions map[string]*session
	fsRead   bool
	fsWrite  bool
}

// Serve serves one ACP client reading in and writing out until in ends,
// then stops every turn and every A2A server it started.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.ServerLog == nil {
		opts.ServerLog = io.Discard
	}
	a := &Agent{opts: opts, store: store{opts.SessionDir}, sessions: map[string]*session{}}
	a.pool = &pool{opts: opts, log: opts.Logf, backends: map[string]*backend{}, starting: map[string]chan struct{}{}}
	a.conn = newConn(out, opts.Logf)
	// A signal (ctx) ends the agent as the end of its input does.
	stopped := make(chan struct{})
	defer close(stopped)
	if c, ok := in.(io.Closer); ok {
		go func() {
			select {
			case <-ctx.Done():
				_ = c.Close()
			case <-stopped:
			}
		}()
	}
	err := a.conn.serve(ctx, in, a)
	if ctx.Err() != nil {
		err = nil
	}
	a.close()
	return err
}

func (a *Agent) close() {
	a.mu.Lock()
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	for _, s := range ss {
		s.close()
	}
	a.pool.close()
}

func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return errorf(CodeInvalidParams, "params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func (a *Agent) request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		var p initializeParams
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		return a.initialize(p), nil
	case "authenticate":
		return struct{}{}, nil
	case "session/new":
		var p newSessionParams
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		return a.newSession(ctx, p)
	case "session/load":
		var p loadSessionParams
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		return a.loadSession(ctx, p)
	case "session/prompt":
		var p promptParams
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			return nil, err
		}
		return s.prompt(ctx, p.Prompt)
	}
	return nil, errorf(CodeMethodNotFound, "unknown method %q", method)
}

func (a *Agent) notification(_ context.Context, method string, params json.RawMessage) {
	switch method {
	case "session/cancel":
		var p sessionIDParams
		if err := decode(params, &p); err != nil {
			a.opts.Logf("session/cancel: %v", err)
			return
		}
		s, err := a.session(p.SessionID)
		if err != nil {
			a.opts.Logf("session/cancel: %v", err)
			return
		}
		s.cancelTurn()
	default:
		a.opts.Logf("notification %q ignored", method)
	}
}

func (a *Agent) initialize(p initializeParams) initializeResult {
	a.mu.Lock()
	a.fsRead, a.fsWrite = p.ClientCapabilities.FS.ReadTextFile, p.ClientCapabilities.FS.WriteTextFile
	a.mu.Unlock()
	if p.ClientInfo != nil {
		a.opts.Logf("client %s %s, protocol version %d", p.ClientInfo.Name, p.ClientInfo.Version, p.ProtocolVersion)
	}
	// A server this agent starts takes every MCP transport in its settings;
	// one given with --agent takes none from the client.
	started := a.opts.AgentURL == ""
	version := a.opts.Version
	if version == "" {
		version = "dev"
	}
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:        true,
			PromptCapabilities: promptCapabilities{EmbeddedContext: true},
			McpCapabilities:    mcpCapabilities{HTTP: started, SSE: started},
		},
		AgentInfo:   implementation{Name: "gemini-a2a-acp", Title: "Gemini (A2A)", Version: version},
		AuthMethods: []any{},
	}
}

func (a *Agent) clientFS() (read, write bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fsRead, a.fsWrite
}

func (a *Agent) session(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, errorf(CodeNotFound, "unknown session %q: create it with session/new (or session/load)", id)
	}
	return s, nil
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return errorf(CodeInvalidParams, "cwd: %q is not an absolute path", cwd)
	}
	st, err := os.Stat(cwd)
	if err != nil || !st.IsDir() {
		return errorf(CodeInvalidParams, "cwd: %q is not a folder", cwd)
	}
	return nil
}

// open makes a session on the backend for cwd.
func (a *Agent) open(ctx context.Context, id, cwd string, mcp []McpServer) (*session, error) {
	b, err := a.pool.get(ctx, cwd, mcp)
	if err != nil {
		return nil, err
	}
	s := &session{a: a, id: id, cwd: cwd, mcp: mcp, b: b, line: b.ag.NewLine()}
	return s, nil
}

func (a *Agent) add(s *session) {
	a.mu.Lock()
	old := a.sessions[s.id]
	a.sessions[s.id] = s
	a.mu.Unlock()
	if old != nil {
		old.close()
	}
}

func (a *Agent) newSession(ctx context.Context, p newSessionParams) (any, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	s, err := a.open(ctx, newSessionID(), filepath.Clean(p.Cwd), p.McpServers)
	if err != nil {
		return nil, err
	}
	a.add(s)
	s.save()
	res := newSessionResult{SessionID: s.id}
	if a.opts.AgentURL != "" && len(p.McpServers) > 0 {
		names := mcpNames(p.McpServers)
		a.opts.Logf("session %s: the client's MCP servers %v are not passed on: the A2A agent at %s was started by someone else and uses its own settings", s.id, names, a.opts.AgentURL)
		res.Meta = map[string]any{"gemini-a2a-acp": map[string]any{"mcpServersIgnored": names,
			"reason": "attached to an A2A agent given with --agent, which uses its own settings"}}
	}
	return afterAnswer{Result: res, Then: func() { s.sendCommands(ctx) }}, nil
}

func (a *Agent) loadSession(ctx context.Context, p loadSessionParams) (any, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return nil, err
	}
	r, ok := a.store.load(p.SessionID)
	a.mu.Lock()
	live := a.sessions[p.SessionID]
	a.mu.Unlock()
	if live != nil {
		live.mu.Lock()
		busy := live.turn != nil
		r = record{SessionID: live.id, Cwd: live.cwd, TaskID: live.taskID, ContextID: live.contextID}
		live.mu.Unlock()
		if busy {
			return nil, errorf(CodeInvalidRequest, "session %s has a prompt running: load it once the turn ended", p.SessionID)
		}
		ok = true
	}
	if !ok {
		where := "no session records are kept"
		if a.store.dir != "" {
			where = "no record of it in " + a.store.dir
		}
		return nil, errorf(CodeNotFound, "unknown session %q (%s)", p.SessionID, where)
	}
	s := live
	if s == nil && a.opts.AgentURL == "" && r.TaskID != "" && !a.reachable(ctx, r.AgentURL) {
		// The server that held the task was started by an earlier
		// gemini-a2a-acp and stopped with it.
		return nil, errGone(p.SessionID, fmt.Errorf("its server at %s is gone", r.AgentURL))
	}
	if s == nil {
		var err error
		if s, err = a.open(ctx, p.SessionID, filepath.Clean(p.Cwd), p.McpServers); err != nil {
			return nil, err
		}
	}
	if err := s.replay(ctx, r); err != nil {
		if live == nil {
			s.close()
		}
		return nil, err
	}
	if live == nil {
		a.add(s)
	}
	s.save()
	return afterAnswer{Result: struct{}{}, Then: func() { s.sendCommands(ctx) }}, nil
}

// reachable reports whether an A2A agent answers at url.
func (a *Agent) reachable(ctx context.Context, url string) bool {
	if url == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	h, _ := launch.HeaderFor(url)
	_, err := agent.Load(ctx, url, a.opts.HTTPClient, agent.WithHeader(h))
	return err == nil || errors.Is(err, agent.ErrUnauthorized) // it answers
}

// errGone words a task the A2A server no longer knows.
func errGone(id string, err error) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("session %s cannot be loaded: its A2A task is gone (%v). "+
		"Gemini CLI's A2A server keeps tasks in memory only, so a task dies with the server that gemini-a2a-acp started for it; "+
		"to keep sessions across restarts, run the server yourself and pass --agent URL. Start a new session to go on.", id, err)}
}

// commandsTimeout bounds listing the server's slash commands.
const commandsTimeout = 10 * time.Second

// sendCommands tells the client the server's slash commands
// (available_commands_update).
func (s *session) sendCommands(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, commandsTimeout)
	defer cancel()
	cmds, err := rfc.ListCommands(ctx, s.b.ag)
	if err != nil {
		s.a.opts.Logf("session %s: no slash commands: %v", s.id, err)
		return
	}
	flat := rfc.Flatten(cmds)
	s.mu.Lock()
	s.commands = flat
	s.mu.Unlock()
	avail := make([]availableCommand, 0, len(flat))
	for _, c := range flat {
		ac := availableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = "/" + c.Name
		}
		if len(c.Arguments) > 0 {
			hint := ""
			for i, arg := range c.Arguments {
				if i > 0 {
					hint += " "
				}
				hint += arg.Name
			}
			ac.Input = &commandInput{Hint: hint}
		}
		avail = append(avail, ac)
	}
	s.send(update{SessionUpdate: "available_commands_update", AvailableCommands: avail})
}
