package acp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
)

// backend is one A2A server the sessions of a folder talk to: one this
// agent started (and stops), or the one given with --agent.
type backend struct {
	key string
	ag  *agent.Agent
	srv *launch.Server // nil when attached
	// home is the private GEMINI_CLI_HOME that carries the client's MCP
	// servers, removed with the server.
	home string
	refs int
}

// dead reports whether a started server has exited.
func (b *backend) dead() bool {
	if b.srv == nil {
		return false
	}
	select {
	case <-b.srv.Done():
		return true
	default:
		return false
	}
}

func (b *backend) stop() {
	if b.srv != nil {
		b.srv.Stop()
	}
	if b.home != "" {
		os.RemoveAll(b.home)
	}
}

// pool starts one A2A server per folder and set of MCP servers, shared by
// the sessions that ask for the same, or hands out the one agent of
// --agent.
type pool struct {
	opts Options
	log  func(string, ...any)

	mu       sync.Mutex
	backends map[string]*backend
	starting map[string]chan struct{}
	attached *backend
	closed   bool
}

func backendKey(cwd string, mcp []McpServer) string {
	if len(mcp) == 0 {
		return cwd
	}
	b, _ := json.Marshal(mcp)
	sum := sha256.Sum256(b)
	return cwd + "\x00" + hex.EncodeToString(sum[:8])
}

// get returns the backend for cwd with the client's MCP servers, starting
// a server when there is none yet (or the last one exited), and takes a
// reference on it (release gives it back).
func (p *pool) get(ctx context.Context, cwd string, mcp []McpServer) (*backend, error) {
	if p.opts.AgentURL != "" {
		return p.attach(ctx)
	}
	key := backendKey(cwd, mcp)
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errors.New("the agent is shutting down")
		}
		if b := p.backends[key]; b != nil {
			if !b.dead() {
				b.refs++
				p.mu.Unlock()
				return b, nil
			}
			delete(p.backends, key)
			go b.stop()
		}
		if wait := p.starting[key]; wait != nil {
			p.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		p.starting[key] = done
		p.mu.Unlock()
		b, err := p.start(ctx, key, cwd, mcp)
		p.mu.Lock()
		delete(p.starting, key)
		close(done)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		if p.closed {
			p.mu.Unlock()
			b.stop()
			return nil, errors.New("the agent is shutting down")
		}
		b.refs = 1
		p.backends[key] = b
		p.mu.Unlock()
		return b, nil
	}
}

func (p *pool) attach(ctx context.Context) (*backend, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.attached != nil {
		return p.attached, nil
	}
	lctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	header := p.opts.AgentHeader
	if header == nil {
		header, _ = launch.HeaderFor(p.opts.AgentURL)
	}
	ag, err := agent.Load(lctx, p.opts.AgentURL, p.opts.HTTPClient, agent.WithHeader(header))
	if errors.Is(err, agent.ErrUnauthorized) {
		return nil, fmt.Errorf("%w; give them with --agent-header-file FILE or --agent-token-env VAR", err)
	}
	if err != nil {
		return nil, err
	}
	p.attached = &backend{key: p.opts.AgentURL, ag: ag}
	return p.attached, nil
}

// release gives back a reference; a started server nobody uses any more
// is stopped.
func (p *pool) release(b *backend) {
	if b == nil || b.srv == nil {
		return
	}
	p.mu.Lock()
	b.refs--
	last := b.refs <= 0 && p.backends[b.key] == b
	if last {
		delete(p.backends, b.key)
	}
	p.mu.Unlock()
	if last {
		b.stop()
	}
}

// ServerSetting is how a user of gemini-a2a-acp gives the server command,
// for launch's errors.
const ServerSetting = "gemini-a2a-acp's --server-command in your editor's agent configuration (or run the server yourself and pass --agent URL)"

func (p *pool) start(ctx context.Context, key, cwd string, mcp []McpServer) (*backend, error) {
	env := append([]string(nil), p.opts.ServerEnv...)
	home := ""
	if len(mcp) > 0 {
		h, err := mcpHome(env, mcp)
		if err != nil {
			return nil, fmt.Errorf("passing the client's MCP servers to the A2A server: %w", err)
		}
		home = h
		env = append(env, "GEMINI_CLI_HOME="+home)
	}
	sctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	srv, err := launch.Start(sctx, launch.Options{Command: p.opts.ServerCommand, Dir: cwd, Env: env, Log: p.opts.ServerLog, StartTimeout: p.opts.Timeout, Setting: ServerSetting})
	if err != nil {
		if home != "" {
			os.RemoveAll(home)
		}
		var exit *launch.ExitError
		var missing *launch.NotFoundError
		if errors.As(err, &exit) || errors.As(err, &missing) {
			return nil, err
		}
		return nil, fmt.Errorf("starting Gemini CLI's A2A server for %s: %w", cwd, err)
	}
	p.log("A2A server pid %d on %s for %s (127.0.0.1 only; it answers only requests that carry this launch's secret)", srv.PID(), srv.URL, cwd)
	ag, err := agent.Load(sctx, srv.URL, p.opts.HTTPClient, agent.WithHeader(srv.Header()))
	if err != nil {
		srv.Stop()
		if home != "" {
			os.RemoveAll(home)
		}
		return nil, err
	}
	return &backend{key: key, ag: ag, srv: srv, home: home}, nil
}

// close stops every server started.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	bs := make([]*backend, 0, len(p.backends))
	for _, b := range p.backends {
		bs = append(bs, b)
	}
	p.backends = map[string]*backend{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.stop()
		}()
	}
	wg.Wait()
}

// mcpHome makes the private GEMINI_CLI_HOME through which the client's MCP
// servers reach the A2A server (see launch.MCPHome).
func mcpHome(env []string, mcp []McpServer) (string, error) {
	servers := map[string]any{}
	for _, m := range mcp {
		servers[m.Name] = settingsEntry(m)
	}
	return launch.MCPHome(env, servers)
}

// settingsEntry is an ACP MCP server as Gemini CLI's settings write it.
func settingsEntry(m McpServer) map[string]any {
	pairs := func(nv []nameValue) map[string]string {
		out := map[string]string{}
		for _, p := range nv {
			out[p.Name] = p.Value
		}
		return out
	}
	switch m.Type {
	case "http":
		e := map[string]any{"httpUrl": m.URL}
		if len(m.Headers) > 0 {
			e["headers"] = pairs(m.Headers)
		}
		return e
	case "sse":
		e := map[string]any{"url": m.URL}
		if len(m.Headers) > 0 {
			e["headers"] = pairs(m.Headers)
		}
		return e
	}
	e := map[string]any{"command": m.Command, "args": append([]string{}, m.Args...)}
	if len(m.Env) > 0 {
		e["env"] = pairs(m.Env)
	}
	return e
}

// mcpNames lists the servers' names, sorted.
func mcpNames(mcp []McpServer) []string {
	names := make([]string, 0, len(mcp))
	for _, m := range mcp {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names
}
