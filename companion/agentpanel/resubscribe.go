package agentpanel

import (
	"context"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
)

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
	p.running, p.ended = true, false
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
				p.replay(ctx, t)
				continue
			}
			u := agent.Parse(ev)
			p.apply(ctx, u)
			if u.Final {
				return
			}
		}
	}()
	return nil
}

// replay resets the panel to the task as the agent keeps it.
func (p *Panel) replay(ctx context.Context, t *a2a.Task) {
	p.mu.Lock()
	p.taskID, p.contextID = string(t.ID), t.ContextID
	p.pending = map[string]*pending{}
	p.lastTool = map[string]string{}
	p.fixes = map[string]edits.Fix{}
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
		p.turnEnded(ctx, state, "")
	}
}
