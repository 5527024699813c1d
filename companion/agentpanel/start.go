package agentpanel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// defaultCommandOption names the server command for a plugin that did not
// say how its users set it.
const defaultCommandOption = "the agent's server command in your editor plugin's settings (the command of agent/start)"

// serverLinger is how long a server this sidecar started outlives the
// sidecar when it is killed (and so cannot stop the server): long enough
// for the plugin to restart the sidecar and for the new one to adopt the
// server and resume its task, short enough that a sidecar killed for good
// leaves nothing running for long.
const serverLinger = 30 * time.Second

func (p *Panel) start(a protocol.AgentStartParams) (protocol.AgentStartResult, error) {
	if a.URL != "" {
		if _, err := agent.BaseURL(a.URL); err != nil {
			return protocol.AgentStartResult{}, invalid("url: %v", err)
		}
	}
	if a.Dir != "" && !filepath.IsAbs(a.Dir) {
		return protocol.AgentStartResult{}, invalid("dir: %q is not an absolute path", a.Dir)
	}
	dir := a.Dir
	if dir == "" {
		if ws := p.opts.Workspace(); len(ws) > 0 {
			dir = ws[0]
		}
	}
	if a.URL == "" && dir == "" {
		return protocol.AgentStartResult{}, invalid("no workspace folder: open a folder, or pass dir or url")
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return protocol.AgentStartResult{}, refused("the sidecar is shutting down")
	}
	if p.starting {
		p.mu.Unlock()
		return protocol.AgentStartResult{Status: "starting"}, nil
	}
	if p.ag != nil {
		url := p.ag.URL
		p.mu.Unlock()
		if a.URL == "" || sameURL(a.URL, url) {
			p.emitReady()
			if a.TaskID != "" {
				return protocol.AgentStartResult{Status: "attached"}, p.resubscribe(a.TaskID, a.ContextID)
			}
			return protocol.AgentStartResult{Status: "attached"}, nil
		}
		p.detach()
		p.mu.Lock()
	}
	p.starting = true
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		err := p.connect(a, dir)
		p.mu.Lock()
		p.starting = false
		p.mu.Unlock()
		if err != nil {
			p.emitError("%v", err)
			return
		}
		p.emitReady()
		if a.TaskID != "" {
			if err := p.resubscribe(a.TaskID, a.ContextID); err != nil {
				p.emitError("%v", err)
			}
		}
	}()
	return protocol.AgentStartResult{Status: "starting"}, nil
}

// urlPort is the port of an http(s) URL (0 if none can be told).
func urlPort(raw string) uint32 {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443
		}
		return 80
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return 0
	}
	return uint32(n)
}

func sameURL(a, b string) bool {
	x, _ := agent.BaseURL(a)
	y, _ := agent.BaseURL(b)
	return x == y
}

// connect attaches to a.URL, or starts the server for dir.
func (p *Panel) connect(a protocol.AgentStartParams, dir string) error {
	ctx, cancel := context.WithTimeout(p.base, p.opts.StartTimeout)
	defer cancel()
	target := a.URL
	var srv *launch.Server
	if target == "" {
		var err error
		setting := strings.TrimSpace(a.CommandOption)
		if setting == "" {
			setting = defaultCommandOption
		}
		o := launch.Options{Command: a.Command, Dir: dir, Log: logWriter{p.opts.Logf}, StartTimeout: p.opts.StartTimeout, Setting: setting, Linger: serverLinger}
		if p.opts.EditorTools != nil {
			// The agent sees what the editor knows, as Gemini CLI with the
			// extension does: the editor tools' stdio server, which finds
			// this companion by the variables.
			o.MCPServers, o.Env = p.opts.EditorTools()
		}
		srv, err = launch.Start(ctx, o)
		if err != nil {
			var exit *launch.ExitError
			var missing *launch.NotFoundError
			if errors.As(err, &exit) || errors.As(err, &missing) {
				return err // says what was run and what to do
			}
			return fmt.Errorf("starting Gemini CLI's A2A server: %w", err)
		}
		target = srv.URL
	}
	// The server this sidecar started wants its launch's secret; one an
	// earlier sidecar started (adopted) has its secret in the user's
	// private folder; any other is attached as it is.
	var header http.Header
	if srv != nil {
		header = srv.Header()
	} else if h, err := launch.HeaderFor(target); err == nil {
		header = h
	} else if !errors.Is(err, launch.ErrNoSecret) {
		p.opts.Logf("%v", err)
	}
	ag, err := agent.Load(ctx, target, p.hc, agent.WithHeader(header))
	if err != nil {
		if srv != nil {
			srv.Stop()
		}
		return err
	}
	adopted := 0
	var hold *launch.Holding
	if srv == nil && a.PID > 0 && servesPort(a.PID, urlPort(ag.URL)) {
		adopted = a.PID
		// The server ends when no program of ours holds it (its starter,
		// the killed sidecar, is gone): this sidecar holds it now.
		if hold, err = launch.Hold(ctx, target, header); err != nil {
			p.opts.Logf("the adopted A2A server (pid %d) cannot be held, it may end on its own: %v", adopted, err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = ag.Close()
		if srv != nil {
			srv.Stop()
		}
		hold.Release()
		return errors.New("the sidecar is shutting down")
	}
	p.ag, p.line, p.srv, p.adopted, p.hold = ag, ag.NewLine(), srv, adopted, hold
	if srv != nil {
		p.wg.Add(1)
		go p.watch(srv)
	}
	return nil
}

// watch reports a started server that exits while the panel uses it, and
// forgets it, so the next agent/start starts a new one.
func (p *Panel) watch(srv *launch.Server) {
	defer p.wg.Done()
	select {
	case <-p.base.Done():
		return
	case <-srv.Done():
	}
	p.mu.Lock()
	ours := p.srv == srv
	var ag *agent.Agent
	var line *agent.Line
	if ours {
		ag, line = p.ag, p.line
		p.ag, p.line, p.srv, p.taskID = nil, nil, nil, ""
		p.pending = map[string]*pending{}
	}
	p.mu.Unlock()
	if !ours {
		return // stopped by the panel itself
	}
	if line != nil {
		line.Close()
	}
	if ag != nil {
		_ = ag.Close()
	}
	p.emitError("Gemini CLI's A2A server exited; start the agent again to go on")
	p.emit(Event{Type: "state", State: "stopped"})
}

func (p *Panel) emitReady() {
	p.mu.Lock()
	ag := p.ag
	info := &AgentInfo{Context: ContextMode}
	if ag != nil {
		info.Name, info.URL = ag.Name, ag.URL
	}
	if p.srv != nil {
		info.PID, info.Started = p.srv.PID(), true
	} else if p.adopted > 0 {
		info.PID, info.Started = p.adopted, true
	}
	p.mu.Unlock()
	if ag != nil {
		p.emit(Event{Type: "ready", Agent: info})
	}
}

// detach forgets the agent, stopping a server this sidecar owns.
func (p *Panel) detach() {
	p.mu.Lock()
	ag, line, srv, adopted, hold, cancelRun := p.ag, p.line, p.srv, p.adopted, p.hold, p.cancelRun
	p.ag, p.line, p.srv, p.adopted, p.hold = nil, nil, nil, 0, nil
	p.taskID, p.contextID = "", ""
	p.queue = nil
	p.mu.Unlock()
	if cancelRun != nil {
		cancelRun()
	}
	p.dropPending()
	if line != nil {
		line.Close()
	}
	if ag != nil {
		_ = ag.Close()
	}
	if srv != nil {
		srv.Stop()
	}
	if adopted > 0 {
		stopAdopted(adopted)
	}
	hold.Release()
}
