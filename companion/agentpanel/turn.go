package agentpanel

import (
	"context"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
)

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

func (p *Panel) prompt(text string, withContext bool) error {
	if strings.TrimSpace(text) == "" {
		return invalid("text is required")
	}
	if _, err := p.agentOrErr(); err != nil {
		return err
	}
	p.mu.Lock()
	busy := (p.running && !p.ended) || len(p.pending) > 0
	p.mu.Unlock()
	if busy {
		return refused("the agent is busy: answer its pending request or cancel the turn first")
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
	return nil
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
		p.ended = false
		if msg.TaskID == "" {
			msg.TaskID = a2a.TaskID(p.taskID)
		}
		if msg.ContextID == "" {
			msg.ContextID = p.contextID
		}
		line := p.line
		p.mu.Unlock()
		p.stream(ctx, line, msg)
	}
}

// stream runs one turn and forwards its events.
func (p *Panel) stream(ctx context.Context, line *agent.Line, msg *a2a.Message) {
	p.emit(Event{Type: "state", State: "working", TaskID: string(msg.TaskID), ContextID: msg.ContextID})
	for u, err := range line.Send(ctx, msg) {
		if err != nil {
			if ctx.Err() == nil {
				p.emitError("lost the agent mid-turn: %v", err)
				p.emit(Event{Type: "state", State: "failed"})
			}
			return
		}
		p.apply(ctx, u)
		if u.Final {
			return
		}
	}
	if ctx.Err() == nil {
		p.emitError("%v", agent.ErrStreamEnded)
		p.emit(Event{Type: "state", State: "failed"})
	}
}

// apply forwards one event of the agent and keeps the panel's state. An
// event read before ctx ended (agent/cancel ends it) but applied after is
// dropped: it would bring back the task that cancel has just let go.
func (p *Panel) apply(ctx context.Context, u agent.Update) {
	p.mu.Lock()
	if ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	if u.TaskID != "" {
		p.taskID = u.TaskID
	}
	if u.ContextID != "" {
		p.contextID = u.ContextID
	}
	if u.Final {
		p.ended = true
	}
	p.mu.Unlock()
	switch {
	case u.Tool != nil:
		p.tool(u.Tool)
	case u.Kind == agent.KindThought:
		th := rfc.ThoughtOf(u)
		p.emit(Event{Type: "thought", Thought: &th})
	case u.Kind == agent.KindText && u.Text != "":
		p.emit(Event{Type: "text", Text: u.Text})
	case u.Kind == agent.KindStateChange && u.Text != "" && !u.Final:
		p.emit(Event{Type: "notice", Text: u.Text})
	}
	if u.Final {
		p.turnEnded(ctx, u.State, u.Text)
	}
}

func (p *Panel) turnEnded(ctx context.Context, state a2a.TaskState, text string) {
	p.mu.Lock()
	if p.canceling || ctx.Err() != nil {
		p.mu.Unlock()
		return // agent/cancel reports how the turn ended
	}
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

// cancel stops the turn: what it runs is stopped when the server still can
// (see agent.Line), the task is cancelled, and a canceled state event says
// what was stopped and what still runs.
func (p *Panel) cancel() error {
	if _, err := p.agentOrErr(); err != nil {
		return err
	}
	p.mu.Lock()
	taskID, cancelRun, line := p.taskID, p.cancelRun, p.line
	if taskID == "" || line == nil {
		p.mu.Unlock()
		return refused("nothing to cancel")
	}
	p.queue = nil
	p.canceling = true
	p.mu.Unlock()
	p.dropPending()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.base, 15*time.Second)
		defer cancel()
		stop := line.Cancel(ctx, taskID)
		if cancelRun != nil {
			cancelRun()
		}
		p.mu.Lock()
		if p.taskID == taskID {
			p.taskID = ""
		}
		p.canceling = false
		for _, tc := range stop.Stopped {
			p.lastTool[tc.CallID] = "cancelled"
		}
		p.mu.Unlock()
		if stop.Err != nil {
			p.emitError("cancel: %v", stop.Err)
		}
		for _, tc := range stop.Stopped {
			stopped := *tc
			stopped.Status, stopped.Output = "cancelled", "Stopped by cancel."
			p.emit(Event{Type: "tool", Tool: toolCall(&stopped, nil)})
		}
		p.emit(Event{Type: "state", State: "canceled", TaskState: string(a2a.TaskStateCanceled), TaskID: taskID, Text: stop.Note()})
	}()
	return nil
}
