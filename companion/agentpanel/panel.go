// Package agentpanel makes the sidecar an A2A client of Gemini CLI's agent
// for an editor's agent panel: it attaches to (or starts) the A2A server,
// sends the user's prompts with the editor's context, streams the agent's
// events to the plugin as agent/event notifications, shows an edit the
// agent wants to make as the editor's own diff view (diff/open, as in IDE
// mode) and turns the user's decision into the answer the server takes.
//
// It serves the editor link's agent/* requests (docs/agent-panel.md). The
// A2A side is a2a/agent (client) and a2a/launch (server); this package only
// holds the panel's state and policy.
package agentpanel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// Conn is the editor link as the panel uses it (link.Conn implements it).
type Conn interface {
	Notify(method string, params any) error
	Call(ctx context.Context, method string, params, result any) error
}

// Options wire a Panel to its editor link and the sidecar's state.
type Options struct {
	// Conn carries agent/event notifications and diff/open requests.
	Conn Conn
	// Context returns the editor's context now (open files, cursor,
	// selection), sent with each prompt.
	Context func() idectx.IdeContext
	// Workspace returns the editor's workspace folders; the first one is
	// where a started server works.
	Workspace func() []string
	// DiffBusy reports whether the editor already shows an IDE-mode proposal
	// for path; the agent's edit is then asked in the panel instead.
	DiffBusy func(path string) bool
	// Logf logs a line for the sidecar's log.
	Logf func(format string, args ...any)
	// StartTimeout bounds starting the A2A server (default 90 s).
	StartTimeout time.Duration
}

// diffBase is the first diffId the panel uses, far above the ids of IDE
// mode's proposals, so the two never name the same view.
const diffBase = 1 << 40

// openTimeout bounds the editor's answer to diff/open and diff/close.
const openTimeout = 10 * time.Second

// pending is a tool call that waits for the user.
type pending struct {
	call    *agent.ToolCall
	diffID  uint64 // the diff view showing it, or 0
	decided bool
	// orphaned: the call was asked on a connection of an earlier sidecar.
	// The server ties a turn to the HTTP connection that started it, so an
	// approval sent now cancels the call instead of running it; the panel
	// carries such an approval out another way (see approveOrphan).
	orphaned bool
}

// Panel is the agent panel of one editor link.
type Panel struct {
	opts Options
	hc   *http.Client
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu        sync.Mutex
	ag        *agent.Agent
	srv       *launch.Server
	adopted   int // pid of a server started by an earlier sidecar, ours to stop
	starting  bool
	taskID    string
	contextID string
	queue     []*a2a.Message
	running   bool
	cancelRun context.CancelFunc
	pending   map[string]*pending
	lastTool  map[string]string // callId -> last status sent
	nextDiff  uint64
	closed    bool
}

// New returns a Panel; Close releases it.
func New(opts Options) *Panel {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Context == nil {
		opts.Context = func() idectx.IdeContext { return idectx.IdeContext{} }
	}
	if opts.Workspace == nil {
		opts.Workspace = func() []string { return nil }
	}
	if opts.DiffBusy == nil {
		opts.DiffBusy = func(string) bool { return false }
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 90 * time.Second
	}
	base, stop := context.WithCancel(context.Background())
	return &Panel{opts: opts, hc: agent.NewHTTPClient(), base: base, stop: stop,
		pending: map[string]*pending{}, lastTool: map[string]string{}, nextDiff: diffBase}
}

// Close stops every turn and the server this sidecar started (or adopted),
// and waits for the panel's goroutines.
func (p *Panel) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	srv, adopted, ag := p.srv, p.adopted, p.ag
	p.srv, p.adopted, p.ag = nil, 0, nil
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
	if ag != nil {
		_ = ag.Close()
	}
	if srv != nil {
		srv.Stop()
	}
	if adopted > 0 {
		stopAdopted(adopted)
	}
}

func (p *Panel) emit(ev Event) {
	if err := p.opts.Conn.Notify("agent/event", ev); err != nil {
		p.opts.Logf("agent/event not sent: %v", err)
	}
}

func (p *Panel) emitError(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.opts.Logf("agent panel: %s", msg)
	p.emit(Event{Type: "error", Text: msg})
}

func invalid(format string, args ...any) error {
	return link.Errorf(link.CodeInvalidParams, format, args...)
}

func refused(format string, args ...any) error {
	return link.Errorf(link.CodeInvalidRequest, format, args...)
}

func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalid("params: %v", err)
	}
	return nil
}

// Handle serves one agent/* request of the editor link. It never waits on
// the agent: what takes time (starting the server, a turn, a command) runs
// in the background and reports through agent/event.
func (p *Panel) Handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "agent/start":
		var a startParams
		if err := decode(params, &a); err != nil {
			return nil, err
		}
		return p.start(a)
	case "agent/prompt":
		var a struct {
			Text    string `json:"text"`
			Context *bool  `json:"context"`
		}
		if err := decode(params, &a); err != nil {
			return nil, err
		}
		return p.prompt(a.Text, a.Context == nil || *a.Context)
	case "agent/confirm":
		var a struct {
			CallID  string  `json:"callId"`
			Outcome string  `json:"outcome"`
			Content *string `json:"content"`
		}
		if err := decode(params, &a); err != nil {
			return nil, err
		}
		return map[string]any{}, p.confirm(a.CallID, a.Outcome, a.Content)
	case "agent/cancel":
		return map[string]any{}, p.cancel()
	case "agent/listCommands":
		return p.listCommands(ctx)
	case "agent/runCommand":
		var a struct {
			Command string `json:"command"`
			Args    string `json:"args"`
		}
		if err := decode(params, &a); err != nil {
			return nil, err
		}
		return map[string]any{}, p.runCommand(a.Command, a.Args)
	case "agent/resubscribe":
		var a struct {
			TaskID    string `json:"taskId"`
			ContextID string `json:"contextId"`
		}
		if err := decode(params, &a); err != nil {
			return nil, err
		}
		return map[string]any{}, p.resubscribe(a.TaskID, a.ContextID)
	case "agent/status":
		return p.status(), nil
	case "agent/stop":
		p.detach()
		return map[string]any{}, nil
	}
	return nil, link.Errorf(link.CodeMethodNotFound, "unknown method %q", method)
}

// HandleRequest implements link.Handler (Handle), so a Panel can be
// registered for the "agent/" namespace of a link.Mux.
func (p *Panel) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return p.Handle(ctx, method, params)
}

// HandleNotification implements link.Handler: the panel takes no
// notifications (diff decisions reach it through Decide).
func (p *Panel) HandleNotification(context.Context, string, json.RawMessage) {}

type startParams struct {
	// URL attaches to a running A2A server instead of starting one.
	URL string `json:"url"`
	// PID, with URL, is the server an earlier sidecar started: this one
	// adopts it (stops it on exit) if it still is a Gemini A2A server.
	PID int `json:"pid"`
	// Command overrides the server command (default: launch.Find).
	Command []string `json:"command"`
	// Dir is the workspace (default: the first workspace folder).
	Dir string `json:"dir"`
	// TaskID and ContextID resume a conversation (tasks/resubscribe).
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
}

// Status is the answer to agent/status.
type Status struct {
	Attached  bool     `json:"attached"`
	Starting  bool     `json:"starting"`
	URL       string   `json:"url,omitempty"`
	TaskID    string   `json:"taskId,omitempty"`
	ContextID string   `json:"contextId,omitempty"`
	Running   bool     `json:"running"`
	Pending   []string `json:"pending"`
}

func (p *Panel) status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Attached: p.ag != nil, Starting: p.starting, TaskID: p.taskID, ContextID: p.contextID, Running: p.running, Pending: []string{}}
	if p.ag != nil {
		st.URL = p.ag.URL
	}
	for id := range p.pending {
		st.Pending = append(st.Pending, id)
	}
	return st
}

func (p *Panel) start(a startParams) (any, error) {
	if a.URL != "" {
		if _, err := agent.BaseURL(a.URL); err != nil {
			return nil, invalid("url: %v", err)
		}
	}
	if a.Dir != "" && !filepath.IsAbs(a.Dir) {
		return nil, invalid("dir: %q is not an absolute path", a.Dir)
	}
	dir := a.Dir
	if dir == "" {
		if ws := p.opts.Workspace(); len(ws) > 0 {
			dir = ws[0]
		}
	}
	if a.URL == "" && dir == "" {
		return nil, invalid("no workspace folder: open a folder, or pass dir or url")
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, refused("the sidecar is shutting down")
	}
	if p.starting {
		p.mu.Unlock()
		return map[string]any{"status": "starting"}, nil
	}
	if p.ag != nil {
		url := p.ag.URL
		p.mu.Unlock()
		if a.URL == "" || sameURL(a.URL, url) {
			p.emitReady()
			if a.TaskID != "" {
				return map[string]any{"status": "attached"}, p.resubscribe(a.TaskID, a.ContextID)
			}
			return map[string]any{"status": "attached"}, nil
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
	return map[string]any{"status": "starting"}, nil
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
func (p *Panel) connect(a startParams, dir string) error {
	ctx, cancel := context.WithTimeout(p.base, p.opts.StartTimeout)
	defer cancel()
	target := a.URL
	var srv *launch.Server
	if target == "" {
		var err error
		srv, err = launch.Start(ctx, launch.Options{Command: a.Command, Dir: dir, Log: logWriter{p.opts.Logf}, StartTimeout: p.opts.StartTimeout})
		if err != nil {
			return fmt.Errorf("starting Gemini CLI's A2A server: %w", err)
		}
		target = srv.URL
	}
	ag, err := agent.Load(ctx, target, p.hc)
	if err != nil {
		if srv != nil {
			srv.Stop()
		}
		return err
	}
	adopted := 0
	if srv == nil && a.PID > 0 && servesPort(a.PID, urlPort(ag.URL)) {
		adopted = a.PID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = ag.Close()
		if srv != nil {
			srv.Stop()
		}
		return errors.New("the sidecar is shutting down")
	}
	p.ag, p.srv, p.adopted = ag, srv, adopted
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
	if ours {
		ag = p.ag
		p.ag, p.srv, p.taskID = nil, nil, ""
		p.pending = map[string]*pending{}
	}
	p.mu.Unlock()
	if !ours {
		return // stopped by the panel itself
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
	ag, srv, adopted, cancelRun := p.ag, p.srv, p.adopted, p.cancelRun
	p.ag, p.srv, p.adopted = nil, nil, 0
	p.taskID, p.contextID = "", ""
	p.queue = nil
	p.mu.Unlock()
	if cancelRun != nil {
		cancelRun()
	}
	p.dropPending()
	if ag != nil {
		_ = ag.Close()
	}
	if srv != nil {
		srv.Stop()
	}
	if adopted > 0 {
		stopAdopted(adopted)
	}
}

func (p *Panel) agentOrErr() (*agent.Agent, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ag == nil {
		if p.starting {
			return nil, refused("the agent is still starting")
		}
		return nil, refused("no agent: run agent/start first")
	}
	return p.ag, nil
}

func (p *Panel) prompt(text string, withContext bool) (any, error) {
	if strings.TrimSpace(text) == "" {
		return nil, invalid("text is required")
	}
	if _, err := p.agentOrErr(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	busy := p.running || len(p.pending) > 0
	p.mu.Unlock()
	if busy {
		return nil, refused("the agent is busy: answer its pending request or cancel the turn first")
	}
	parts := a2a.ContentParts{a2a.TextPart{Text: text}}
	if withContext {
		c := contextText(p.opts.Context())
		if c != "" {
			parts = append(parts, a2a.TextPart{Text: c})
		}
		p.opts.Logf("agent panel: prompt sent with %d bytes of editor context", len(c))
	}
	p.emit(Event{Type: "user", Text: text})
	p.enqueue(a2a.NewMessage(a2a.MessageRoleUser, parts...))
	return map[string]any{}, nil
}

// enqueue sends msgs as the next turns, one after the other, each streamed
// to its end. Messages get the current task and context ids when sent.
func (p *Panel) enqueue(msgs ...*a2a.Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, msgs...)
	if p.running || p.closed {
		return
	}
	p.running = true
	ctx, cancel := context.WithCancel(p.base)
	p.cancelRun = cancel
	p.wg.Add(1)
	go p.run(ctx, cancel)
}

func (p *Panel) run(ctx context.Context, cancel context.CancelFunc) {
	defer p.wg.Done()
	defer cancel()
	for {
		p.mu.Lock()
		if len(p.queue) == 0 || ctx.Err() != nil || p.ag == nil {
			p.running = false
			p.queue = nil
			p.mu.Unlock()
			return
		}
		msg := p.queue[0]
		p.queue = p.queue[1:]
		if msg.TaskID == "" {
			msg.TaskID = a2a.TaskID(p.taskID)
		}
		if msg.ContextID == "" {
			msg.ContextID = p.contextID
		}
		ag := p.ag
		p.mu.Unlock()
		p.stream(ctx, ag, msg)
	}
}

// stream runs one turn and forwards its events.
func (p *Panel) stream(ctx context.Context, ag *agent.Agent, msg *a2a.Message) {
	p.emit(Event{Type: "state", State: "working", TaskID: string(msg.TaskID), ContextID: msg.ContextID})
	for u, err := range ag.Stream(ctx, msg) {
		if err != nil {
			if ctx.Err() == nil {
				p.emitError("lost the agent mid-turn: %v", err)
				p.emit(Event{Type: "state", State: "failed"})
			}
			return
		}
		p.apply(u)
		if u.Final {
			return
		}
	}
	if ctx.Err() == nil {
		p.emitError("%v", agent.ErrStreamEnded)
		p.emit(Event{Type: "state", State: "failed"})
	}
}

// apply forwards one event of the agent and keeps the panel's state.
func (p *Panel) apply(u agent.Update) {
	p.mu.Lock()
	if u.TaskID != "" {
		p.taskID = u.TaskID
	}
	if u.ContextID != "" {
		p.contextID = u.ContextID
	}
	p.mu.Unlock()
	switch {
	case u.Tool != nil:
		p.tool(u.Tool)
	case u.Kind == agent.KindThought:
		subject, desc, _ := strings.Cut(u.Text, ": ")
		p.emit(Event{Type: "thought", Thought: &Thought{Subject: subject, Description: desc}})
	case u.Kind == agent.KindText && u.Text != "":
		p.emit(Event{Type: "text", Text: u.Text})
	case u.Kind == agent.KindStateChange && u.Text != "" && !u.Final:
		p.emit(Event{Type: "notice", Text: u.Text})
	}
	if u.Final {
		p.turnEnded(u.State, u.Text)
	}
}

func (p *Panel) turnEnded(state a2a.TaskState, text string) {
	p.mu.Lock()
	waiting := len(p.pending) > 0
	taskID, contextID := p.taskID, p.contextID
	if state == a2a.TaskStateCanceled || state == a2a.TaskStateFailed {
		p.taskID = ""
	}
	p.mu.Unlock()
	ev := Event{Type: "state", TaskState: string(state), TaskID: taskID, ContextID: contextID}
	switch {
	case state == a2a.TaskStateCanceled:
		ev.State = "canceled"
	case state == a2a.TaskStateFailed:
		ev.State, ev.Text = "failed", text
	case waiting:
		ev.State = "waiting"
	default:
		ev.State = "idle"
	}
	p.emit(ev)
}

// tool forwards a tool-call update; a call that waits for approval becomes
// pending and, for an edit, is shown as the editor's diff view.
func (p *Panel) tool(tc *agent.ToolCall) {
	p.mu.Lock()
	if p.lastTool[tc.CallID] == tc.Status {
		p.mu.Unlock()
		return // the server repeats an update as tool-call-confirmation
	}
	p.lastTool[tc.CallID] = tc.Status
	pd := p.pending[tc.CallID]
	awaiting := tc.Status == "awaiting_approval" && tc.Confirmation != nil
	if awaiting && pd == nil {
		pd = &pending{call: tc}
		p.pending[tc.CallID] = pd
	}
	if !awaiting && pd != nil {
		delete(p.pending, tc.CallID)
	}
	p.mu.Unlock()

	var original *string
	if awaiting && tc.Confirmation.Type == "edit" && filepath.IsAbs(tc.Confirmation.FilePath) {
		if b, err := os.ReadFile(tc.Confirmation.FilePath); err == nil {
			s := string(b)
			original = &s
		}
	}
	ev := toolCall(tc, original)
	if awaiting && tc.Confirmation.Type == "edit" {
		ev.DiffID = p.showDiff(pd, original)
		ev.DiffShown = ev.DiffID != 0
	}
	if !awaiting && pd != nil && pd.diffID != 0 && !pd.decided {
		p.closeDiff(tc.Confirmation, pd)
	}
	p.emit(Event{Type: "tool", Tool: ev})
}

// showDiff opens the edit as the editor's diff view and returns its diffId,
// or 0 when it is asked in the panel instead.
func (p *Panel) showDiff(pd *pending, original *string) uint64 {
	c := pd.call.Confirmation
	if !filepath.IsAbs(c.FilePath) || p.opts.DiffBusy(c.FilePath) {
		return 0
	}
	p.mu.Lock()
	p.nextDiff++
	id := p.nextDiff
	pd.diffID = id
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.base, openTimeout)
	defer cancel()
	req := map[string]any{
		"filePath": c.FilePath, "newContent": c.NewContent, "originalContent": original,
		"unifiedDiff": c.FileDiff, "title": filepath.Base(c.FilePath) + " (Gemini agent's edit)",
		"diffId": id, "owner": "agent",
	}
	if err := p.opts.Conn.Call(ctx, "diff/open", req, nil); err != nil {
		p.opts.Logf("agent panel: diff/open for %s: %v", c.FilePath, err)
		p.mu.Lock()
		pd.diffID = 0
		p.mu.Unlock()
		return 0
	}
	return id
}

// closeDiff closes the diff view of a call answered elsewhere (panel,
// cancel), in the background: the editor answers on the link this may be
// called from.
func (p *Panel) closeDiff(c *agent.Confirmation, pd *pending) {
	if c == nil {
		c = pd.call.Confirmation
	}
	path := c.FilePath
	p.mu.Lock()
	pd.decided = true
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.base, openTimeout)
		defer cancel()
		if err := p.opts.Conn.Call(ctx, "diff/close", map[string]string{"filePath": path}, nil); err != nil {
			p.opts.Logf("agent panel: diff/close for %s: %v", path, err)
		}
	}()
}

// Decide takes the editor's decision on a diff view (diff/accepted or
// diff/rejected) and reports whether it was one of the panel's. Accepting
// the agent's text unchanged approves the call; accepting an edited text
// declines the agent's edit, writes the user's version and tells the agent
// (the server's own inline-edit route is broken in 0.25.2); rejecting
// declines it.
func (p *Panel) Decide(path string, diffID uint64, accepted bool, content string) bool {
	if p == nil || diffID < diffBase {
		return false
	}
	p.mu.Lock()
	var pd *pending
	for _, x := range p.pending {
		if x.diffID == diffID {
			pd = x
		}
	}
	if pd == nil || pd.decided || pd.call.Confirmation.FilePath != path {
		p.mu.Unlock()
		if pd == nil {
			p.emit(Event{Type: "notice", Text: fmt.Sprintf("The agent no longer waits on this edit of %s; nothing was written.", filepath.Base(path))})
		}
		return true
	}
	pd.decided = true
	p.mu.Unlock()
	c := pd.call.Confirmation
	switch {
	case !accepted:
		p.answer(pd.call.CallID, OutcomeCancel)
	case pd.orphaned:
		p.approveOrphan(pd.call, content)
	case content == c.NewContent:
		p.answer(pd.call.CallID, OutcomeOnce)
	default:
		p.writeOwn(pd.call, content)
	}
	return true
}

// approveOrphan approves a call asked before the sidecar restarted. An
// edit is written by the panel (content: the agent's text or the user's
// version) and the agent told; any other call is declined and the agent
// asked to make it again, so that it is asked on a live connection.
func (p *Panel) approveOrphan(tc *agent.ToolCall, content string) {
	c := tc.Confirmation
	if c.Type == "edit" {
		if content == c.NewContent {
			if err := writeFile(c.FilePath, content); err != nil {
				p.emitError("writing %s: %v; the agent's edit was declined", c.FilePath, err)
				p.answer(tc.CallID, OutcomeCancel)
				return
			}
			p.emit(Event{Type: "notice", Text: fmt.Sprintf("The agent's edit of %s was written by the companion (the agent's connection was lost when the sidecar restarted); the agent is told.", filepath.Base(c.FilePath))})
			p.dequeuePending(tc.CallID)
			p.enqueue(agent.ConfirmMessage("", "", tc.CallID, OutcomeCancel),
				agent.TextMessage("", "", fmt.Sprintf("I accepted your edit of %s. My answer could not reach your tool call, so I applied your edit myself: the file now has exactly the content you proposed. Go on.", c.FilePath)))
			return
		}
		p.writeOwn(tc, content)
		return
	}
	p.emit(Event{Type: "notice", Text: fmt.Sprintf("%s was asked before the sidecar restarted and cannot run now; the agent is asked to request it again.", tc.Name)})
	what := tc.Name
	if c.Command != "" {
		what += " (" + c.Command + ")"
	}
	p.dequeuePending(tc.CallID)
	p.enqueue(agent.ConfirmMessage("", "", tc.CallID, OutcomeCancel),
		agent.TextMessage("", "", fmt.Sprintf("I approve your call %s, but my answer could not reach it. Please make the same call again.", what)))
}

// writeOwn writes the user's version of an edit, declines the agent's and
// tells the agent.
func (p *Panel) writeOwn(tc *agent.ToolCall, content string) {
	path := tc.Confirmation.FilePath
	if err := writeFile(path, content); err != nil {
		p.emitError("writing your version of %s: %v; the agent's edit was declined", path, err)
		p.answer(tc.CallID, OutcomeCancel)
		return
	}
	p.emit(Event{Type: "notice", Text: fmt.Sprintf("Your version of %s was written; the agent's edit was declined and the agent is told.", filepath.Base(path))})
	p.dequeuePending(tc.CallID)
	p.enqueue(agent.ConfirmMessage("", "", tc.CallID, OutcomeCancel),
		agent.TextMessage("", "", fmt.Sprintf("I did not accept your edit of %s; I wrote my own version of it instead, which is now on disk. Keep my version.", path)))
}

func writeFile(path, content string) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), mode)
}

func (p *Panel) dequeuePending(callID string) {
	p.mu.Lock()
	delete(p.pending, callID)
	p.mu.Unlock()
}

func (p *Panel) answer(callID, outcome string) {
	p.dequeuePending(callID)
	p.enqueue(agent.ConfirmMessage("", "", callID, outcome))
}

func (p *Panel) confirm(callID, outcome string, content *string) error {
	if !validOutcomes[outcome] {
		return invalid("outcome: %q is not one of proceed_once, proceed_always, proceed_always_tool, proceed_always_server, cancel", outcome)
	}
	p.mu.Lock()
	pd := p.pending[callID]
	if pd == nil || (pd.decided && pd.diffID == 0) {
		p.mu.Unlock()
		return refused("no tool call %q waits for an answer", callID)
	}
	already := pd.decided
	p.mu.Unlock()
	if already {
		return refused("tool call %q was already answered", callID)
	}
	if pd.diffID != 0 {
		p.closeDiff(nil, pd)
	} else {
		p.mu.Lock()
		pd.decided = true
		p.mu.Unlock()
	}
	if pd.orphaned && outcome != OutcomeCancel {
		text := pd.call.Confirmation.NewContent
		if content != nil {
			text = *content
		}
		p.approveOrphan(pd.call, text)
		return nil
	}
	if content != nil && pd.call.Confirmation.Type == "edit" && outcome != OutcomeCancel && *content != pd.call.Confirmation.NewContent {
		p.writeOwn(pd.call, *content)
		return nil
	}
	p.answer(callID, outcome)
	return nil
}

// dropPending forgets every pending call and closes their diff views.
func (p *Panel) dropPending() {
	p.mu.Lock()
	var open []*pending
	for _, pd := range p.pending {
		if pd.diffID != 0 && !pd.decided {
			open = append(open, pd)
		}
	}
	p.pending = map[string]*pending{}
	p.mu.Unlock()
	for _, pd := range open {
		p.closeDiff(nil, pd)
	}
}

func (p *Panel) cancel() error {
	ag, err := p.agentOrErr()
	if err != nil {
		return err
	}
	p.mu.Lock()
	taskID, cancelRun := p.taskID, p.cancelRun
	p.queue = nil
	p.mu.Unlock()
	if taskID == "" {
		return refused("nothing to cancel")
	}
	p.dropPending()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.base, 15*time.Second)
		defer cancel()
		_, err := ag.Cancel(ctx, taskID)
		if cancelRun != nil {
			cancelRun()
		}
		p.mu.Lock()
		if p.taskID == taskID {
			p.taskID = ""
		}
		p.mu.Unlock()
		if err != nil {
			p.emitError("cancel: %v", err)
		}
		p.emit(Event{Type: "state", State: "canceled", TaskState: string(a2a.TaskStateCanceled), TaskID: taskID})
	}()
	return nil
}

// resubscribe follows the task again after the editor reconnected: the
// panel is reset and replayed from the task's history, pending calls are
// asked again (edits reopen their diff view), and a running turn streams on.
func (p *Panel) resubscribe(taskID, contextID string) error {
	ag, err := p.agentOrErr()
	if err != nil {
		return err
	}
	if taskID == "" {
		return invalid("taskId is required")
	}
	p.mu.Lock()
	if p.running {
		p.mu.Unlock()
		return refused("a turn is running; resubscribe once it ended")
	}
	p.running = true
	ctx, cancel := context.WithCancel(p.base)
	p.cancelRun = cancel
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		defer func() {
			p.mu.Lock()
			p.running = false
			p.mu.Unlock()
		}()
		first := true
		for ev, err := range ag.Resubscribe(ctx, taskID) {
			if err != nil {
				p.emitError("resubscribe to task %s: %v", taskID, err)
				return
			}
			if t, ok := ev.(*a2a.Task); ok && first {
				first = false
				p.replay(t)
				continue
			}
			u := agent.Parse(ev)
			p.apply(u)
			if u.Final {
				return
			}
		}
	}()
	return nil
}

// replay resets the panel to the task as the agent keeps it.
func (p *Panel) replay(t *a2a.Task) {
	p.mu.Lock()
	p.taskID, p.contextID = string(t.ID), t.ContextID
	p.pending = map[string]*pending{}
	p.lastTool = map[string]string{}
	p.mu.Unlock()
	p.emit(Event{Type: "reset", TaskID: string(t.ID), ContextID: t.ContextID})
	events, last := historyEvents(t)
	for _, ev := range events {
		if ev.Tool != nil && ev.Tool.ConfirmationRequest != nil {
			continue // asked again below, live
		}
		p.emit(ev)
	}
	state := t.Status.State
	if state.Terminal() {
		p.mu.Lock()
		p.taskID = ""
		p.mu.Unlock()
	} else {
		for _, tc := range last {
			if tc.Status == "awaiting_approval" && tc.Confirmation != nil {
				p.mu.Lock()
				p.pending[tc.CallID] = &pending{call: tc, orphaned: true}
				p.mu.Unlock()
				p.tool(tc)
			}
		}
	}
	if state != a2a.TaskStateWorking && state != a2a.TaskStateSubmitted {
		p.turnEnded(state, "")
	}
}

// logWriter sends the server's own log lines to the sidecar's log; the
// multi-line event dumps between them are left out.
type logWriter struct{ logf func(string, ...any) }

func (w logWriter) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.HasPrefix(line, "[") || strings.Contains(line, "Agent Server started") {
			w.logf("a2a server: %s", line)
		}
	}
	return len(b), nil
}
