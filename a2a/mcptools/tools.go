// Package mcptools exposes A2A agents as MCP tools: five generic tools for
// any A2A agent (load_agent, list_agents, send_message, get_task,
// cancel_task) and five for supervising a Gemini CLI agent (gemini_*).
package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/supervisor"
)

// GeminiAgent returns the Gemini CLI agent the gemini_* tools drive
// (attached by URL or started for the current folder).
type GeminiAgent func(ctx context.Context) (*agent.Agent, error)

// Bridge holds the loaded agents and the supervised sessions of one MCP
// server.
type Bridge struct {
	hc     *http.Client
	gemini GeminiAgent
	sup    *supervisor.Supervisor
	// CallTimeout bounds how long a tool call waits on an agent.
	CallTimeout time.Duration
	// Credentials, when set, gives the header load_agent sends with every
	// request to the agent at a base URL (nil for none): the bridge knows
	// the secret of the server it started, and the user's header for
	// --agent; no other agent gets them.
	Credentials func(baseURL string) http.Header

	mu     sync.Mutex
	agents []*agent.Agent
	tasks  map[string]*supervisor.Session // "agentURL taskID" → session
}

// New returns a Bridge. gemini may be nil when no Gemini agent is available.
func New(hc *http.Client, gemini GeminiAgent, logf func(string, ...any)) *Bridge {
	return &Bridge{hc: hc, gemini: gemini, sup: supervisor.New(logf), CallTimeout: 2 * time.Minute,
		tasks: map[string]*supervisor.Session{}}
}

// Close stops every background turn.
func (b *Bridge) Close() { b.sup.Close() }

// Register adds the ten tools to s.
func (b *Bridge) Register(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "load_agent", Description: "Load an A2A agent by its base URL or agent card URL, and give it a name to use in the other tools."}, b.loadAgent)
	mcp.AddTool(s, &mcp.Tool{Name: "list_agents", Description: "List the A2A agents loaded so far."}, b.listAgents)
	mcp.AddTool(s, &mcp.Tool{Name: "send_message", Description: "Send a message to a loaded A2A agent (new task, or continue taskId; confirm answers a pending tool call with {callId, outcome}). Returns when the agent's turn ends, it waits on a confirmation, or timeout_s passes."}, b.sendMessage)
	mcp.AddTool(s, &mcp.Tool{Name: "get_task", Description: "Get an A2A task's state, text and pending confirmations (A2A tasks/get)."}, b.getTask)
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_task", Description: "Cancel an A2A task (A2A tasks/cancel)."}, b.cancelTask)
	mcp.AddTool(s, &mcp.Tool{Name: "gemini_task_start", Description: "Hand a task to the Gemini agent. Returns a session_id; poll gemini_status (with wait_s) for progress and decisions, answer them with gemini_respond. async=false waits until the turn ends or needs a decision."}, b.taskStart)
	mcp.AddTool(s, &mcp.Tool{Name: "gemini_status", Description: "A Gemini session's status (running/waiting/complete/failed/cancelled), the decision it waits on (shell command, file edit with path and unified diff), progress since the last call, and the result. wait_s blocks up to that many seconds for a change."}, b.status)
	mcp.AddTool(s, &mcp.Tool{Name: "gemini_respond", Description: "Answer the decision a Gemini session waits on: approved, denied, modify: <new file content> (or modify: instruction: <text>), or free text; on a finished turn, free text continues the task."}, b.respond)
	mcp.AddTool(s, &mcp.Tool{Name: "gemini_consult", Description: "Ask the Gemini agent a question and get its answer synchronously (no tools run: any tool call it attempts is denied)."}, b.consult)
	mcp.AddTool(s, &mcp.Tool{Name: "gemini_cancel", Description: "Cancel a Gemini session's task."}, b.cancel)
}

// ---- generic tools ----

// LoadAgentIn are load_agent's arguments.
type LoadAgentIn struct {
	URL  string `json:"url" jsonschema:"the agent's base URL or agent card URL"`
	Name string `json:"name,omitempty" jsonschema:"an alias to refer to the agent by"`
}

// AgentInfo describes a loaded agent.
type AgentInfo struct {
	Name         string   `json:"name"`
	URL          string   `json:"url"`
	Description  string   `json:"description,omitempty"`
	Skills       []string `json:"skills,omitempty"`
	Capabilities Caps     `json:"capabilities"`
	Version      string   `json:"version,omitempty"`
}

func info(a *agent.Agent) AgentInfo {
	c := a.Card.Capabilities
	ai := AgentInfo{Name: a.Name, URL: a.URL, Description: a.Card.Description, Version: a.Card.Version,
		Capabilities: Caps{Streaming: c.Streaming, PushNotifications: c.PushNotifications, StateTransitionHistory: c.StateTransitionHistory}}
	for _, s := range a.Card.Skills {
		ai.Skills = append(ai.Skills, s.Name)
	}
	return ai
}

func (b *Bridge) loadAgent(ctx context.Context, _ *mcp.CallToolRequest, in LoadAgentIn) (*mcp.CallToolResult, AgentInfo, error) {
	if strings.TrimSpace(in.URL) == "" {
		return nil, AgentInfo{}, errors.New("url is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var opts []agent.Option
	if base, err := agent.BaseURL(in.URL); err == nil && b.Credentials != nil {
		opts = append(opts, agent.WithHeader(b.Credentials(base)))
	}
	a, err := agent.Load(ctx, in.URL, b.hc, opts...)
	if err != nil {
		return nil, AgentInfo{}, err
	}
	if in.Name != "" {
		a.Name = in.Name
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, old := range b.agents {
		if old.Name == a.Name || old.URL == a.URL {
			b.agents[i] = a
			return nil, info(a), nil
		}
	}
	b.agents = append(b.agents, a)
	return nil, info(a), nil
}

// Caps are the agent's declared A2A capabilities.
type Caps struct {
	Streaming              bool `json:"streaming"`
	PushNotifications      bool `json:"pushNotifications"`
	StateTransitionHistory bool `json:"stateTransitionHistory"`
}

// ListAgentsOut is list_agents' result.
type ListAgentsOut struct {
	Agents []AgentInfo `json:"agents"`
}

func (b *Bridge) listAgents(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, ListAgentsOut, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := ListAgentsOut{Agents: []AgentInfo{}}
	for _, a := range b.agents {
		out.Agents = append(out.Agents, info(a))
	}
	return nil, out, nil
}

func (b *Bridge) findAgent(name string) (*agent.Agent, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("agent is required (a name from list_agents or a URL)")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	base, _ := agent.BaseURL(name)
	for _, a := range b.agents {
		if a.Name == name || a.URL == name || (base != "" && a.URL == base) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q: load it first with load_agent", name)
}

// Confirm answers a pending tool call.
type Confirm struct {
	CallID  string `json:"callId"`
	Outcome string `json:"outcome" jsonschema:"proceed_once, cancel, proceed_always, proceed_always_server, proceed_always_tool"`
}

// SendMessageIn are send_message's arguments.
type SendMessageIn struct {
	Agent     string   `json:"agent" jsonschema:"agent name or URL"`
	Text      string   `json:"text,omitempty"`
	TaskID    string   `json:"taskId,omitempty"`
	ContextID string   `json:"contextId,omitempty"`
	Confirm   *Confirm `json:"confirm,omitempty"`
	TimeoutS  float64  `json:"timeout_s,omitempty" jsonschema:"how long to wait for the turn (default 120)"`
}

// Pending is a confirmation awaiting an answer.
type Pending struct {
	CallID      string `json:"callId"`
	Tool        string `json:"tool"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Path        string `json:"path,omitempty"`
	Diff        string `json:"diff,omitempty"`
	Command     string `json:"command,omitempty"`
}

// TaskOut is send_message's and get_task's result.
type TaskOut struct {
	TaskID    string    `json:"taskId"`
	ContextID string    `json:"contextId,omitempty"`
	State     string    `json:"state"`
	Text      string    `json:"text"`
	Pending   []Pending `json:"pending"`
	History   []string  `json:"history,omitempty"`
	Error     string    `json:"error,omitempty"`
}

func taskOut(s supervisor.Snapshot) TaskOut {
	out := TaskOut{TaskID: s.TaskID, ContextID: s.ContextID, State: s.State, Text: s.Text, Pending: []Pending{}, Error: s.Error}
	if s.Status == supervisor.Running && out.State == "" {
		out.State = "working"
	}
	if s.Status == supervisor.Failed && out.State == "" {
		out.State = "failed"
	}
	for _, d := range s.Pending {
		out.Pending = append(out.Pending, Pending{CallID: d.CallID, Tool: d.Tool, Kind: d.Type, Description: d.Description, Path: d.Path, Diff: d.Diff, Command: d.Command})
	}
	return out
}

func (b *Bridge) timeout(s float64) time.Duration {
	if s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return b.CallTimeout
}

func (b *Bridge) session(a *agent.Agent, taskID string) *supervisor.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tasks[a.URL+" "+taskID]
}

func (b *Bridge) remember(a *agent.Agent, ss *supervisor.Session, taskID string) {
	b.mu.Lock()
	b.tasks[a.URL+" "+taskID] = ss
	b.mu.Unlock()
}

func (b *Bridge) sendMessage(ctx context.Context, req *mcp.CallToolRequest, in SendMessageIn) (*mcp.CallToolResult, TaskOut, error) {
	a, err := b.findAgent(in.Agent)
	if err != nil {
		return nil, TaskOut{}, err
	}
	if in.Text == "" && in.Confirm == nil {
		return nil, TaskOut{}, errors.New("give text, or confirm {callId, outcome}")
	}
	if in.Confirm != nil && (in.Confirm.CallID == "" || in.Confirm.Outcome == "" || in.TaskID == "") {
		return nil, TaskOut{}, errors.New("confirm needs callId, outcome and the taskId")
	}
	var ss *supervisor.Session
	if in.TaskID != "" {
		ss = b.session(a, in.TaskID)
		if ss == nil {
			ss = b.sup.Attach(a, in.TaskID, in.ContextID)
			b.remember(a, ss, in.TaskID)
		}
		if in.Confirm != nil {
			err = ss.Confirm(in.Confirm.CallID, in.Confirm.Outcome)
		} else {
			err = ss.Say(in.Text)
		}
		if err != nil {
			return nil, TaskOut{}, err
		}
	} else {
		ss = b.sup.StartIn(a, in.ContextID, in.Text)
	}
	wctx, cancel := context.WithTimeout(ctx, b.timeout(in.TimeoutS))
	defer cancel()
	snap := b.waitSettled(wctx, req, ss, in.TaskID == "")
	if snap.TaskID != "" && in.TaskID == "" {
		b.remember(a, ss, snap.TaskID)
	}
	out := taskOut(snap)
	if snap.TaskID == "" && snap.Status == supervisor.Failed {
		return nil, out, fmt.Errorf("agent %s: %s", a.Name, snap.Error)
	}
	return nil, out, nil
}

// GetTaskIn are get_task's arguments.
type GetTaskIn struct {
	Agent   string `json:"agent"`
	TaskID  string `json:"taskId"`
	History bool   `json:"history,omitempty" jsonschema:"include the message history"`
}

func (b *Bridge) getTask(ctx context.Context, _ *mcp.CallToolRequest, in GetTaskIn) (*mcp.CallToolResult, TaskOut, error) {
	a, err := b.findAgent(in.Agent)
	if err != nil {
		return nil, TaskOut{}, err
	}
	if in.TaskID == "" {
		return nil, TaskOut{}, errors.New("taskId is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t, err := a.GetTask(ctx, in.TaskID)
	if err != nil {
		return nil, TaskOut{}, err
	}
	out := TaskOut{TaskID: string(t.ID), ContextID: t.ContextID, State: string(t.Status.State), Pending: []Pending{}}
	out.Text = agent.Parse(t).Text
	if ss := b.session(a, in.TaskID); ss != nil {
		snap := ss.Peek()
		if snap.Text != "" {
			out.Text = snap.Text
		}
		out.Pending = taskOut(snap).Pending
	}
	if in.History {
		for _, m := range t.History {
			if txt := agent.Parse(m).Text; txt != "" {
				out.History = append(out.History, string(m.Role)+": "+txt)
			}
		}
	}
	return nil, out, nil
}

// CancelTaskIn are cancel_task's arguments.
type CancelTaskIn struct {
	Agent  string `json:"agent"`
	TaskID string `json:"taskId"`
}

// CancelTaskOut is cancel_task's result.
type CancelTaskOut struct {
	TaskID string `json:"taskId"`
	State  string `json:"state"`
	// Note says which running tools were stopped, and which still run.
	Note string `json:"note,omitempty"`
}

func (b *Bridge) cancelTask(ctx context.Context, _ *mcp.CallToolRequest, in CancelTaskIn) (*mcp.CallToolResult, CancelTaskOut, error) {
	a, err := b.findAgent(in.Agent)
	if err != nil {
		return nil, CancelTaskOut{}, err
	}
	if in.TaskID == "" {
		return nil, CancelTaskOut{}, errors.New("taskId is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if ss := b.session(a, in.TaskID); ss != nil {
		_, note, err := ss.Cancel(ctx)
		if err != nil {
			return nil, CancelTaskOut{}, err
		}
		t, err := a.GetTask(ctx, in.TaskID)
		if err != nil {
			return nil, CancelTaskOut{}, err
		}
		return nil, CancelTaskOut{TaskID: in.TaskID, State: string(t.Status.State), Note: note}, nil
	}
	t, err := a.Cancel(ctx, in.TaskID)
	if err != nil {
		return nil, CancelTaskOut{}, err
	}
	return nil, CancelTaskOut{TaskID: string(t.ID), State: string(t.Status.State)}, nil
}

// waitSettled waits until ss's turn ends or needs a decision (or ctx ends),
// forwarding progress to the caller as it comes; started says the call
// started ss, so what it reported before now is the caller's too.
func (b *Bridge) waitSettled(ctx context.Context, req *mcp.CallToolRequest, ss *supervisor.Session, started bool) supervisor.Snapshot {
	stop := b.forward(ctx, req, ss, started)
	defer stop()
	return ss.WaitSettled(ctx)
}

// forward sends the session's progress to the caller as progress
// notifications, when it gave a progress token. (MCP logging is deprecated
// as of protocol 2026-07-28, so progress is not duplicated as log lines.)
func (b *Bridge) forward(ctx context.Context, req *mcp.CallToolRequest, ss *supervisor.Session, started bool) func() {
	if req == nil || req.Session == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	ch := make(chan supervisor.Progress, 64)
	push := func(p supervisor.Progress) {
		select {
		case ch <- p:
		default:
		}
	}
	watch := ss.Watch
	if started {
		watch = ss.WatchAll
	}
	unwatch := watch(push)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		token := req.Params.GetProgressToken()
		n := 0.0
		send := func(p supervisor.Progress) {
			n++
			msg := p.Kind + ": " + p.Text
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg})
		}
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-ch:
				send(p)
			case <-done:
				// The turn settled: what it reported before that still goes
				// out, ahead of the tool's result.
				for {
					select {
					case p := <-ch:
						send(p)
					default:
						return
					}
				}
			}
		}
	}()
	return func() {
		unwatch()
		close(done)
		wg.Wait()
	}
}
