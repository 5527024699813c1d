package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
)

// turn sends msg and streams the turn in the background. If the turn ends
// with nothing pending and follow is not empty, follow is sent as the next
// turn.
func (ss *Session) turn(msg *a2a.Message, follow *a2a.Message) {
	ctx, cancel := context.WithCancel(ss.sup.base)
	ss.mu.Lock()
	ss.running = true
	ss.cancelRun = cancel
	ss.status = Running
	ss.result = ""
	ss.errText = ""
	ss.follow = follow
	ss.gen++
	gen := ss.gen
	ss.notify()
	ss.mu.Unlock()
	ss.sup.wg.Add(1)
	go func() {
		defer ss.sup.wg.Done()
		defer cancel()
		for msg != nil {
			ss.stream(ctx, msg)
			msg = nil
			ss.mu.Lock()
			// A newer turn (an answer given as soon as this one settled)
			// owns the follow-up and the running flag.
			if ss.gen == gen {
				if ss.follow != nil && ss.status == Running {
					msg, ss.follow = ss.follow, nil
					msg.TaskID, msg.ContextID = a2a.TaskID(ss.taskID), ss.contextID
					ss.result = ""
				}
				ss.follow = nil
			}
			ss.mu.Unlock()
		}
		ss.mu.Lock()
		if ss.gen == gen {
			ss.running = false
		}
		ss.notify()
		ss.mu.Unlock()
	}()
}

// stream runs one turn to its end and records what happened.
func (ss *Session) stream(ctx context.Context, msg *a2a.Message) {
	ended := false
	var streamErr error
	for u, err := range ss.line.Send(ctx, msg) {
		if err != nil {
			streamErr = err
			break
		}
		if ss.apply(u) {
			ended = true
			break
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ended || ss.status == Cancelled {
		return
	}
	switch {
	case ctx.Err() != nil && ss.sup.base.Err() != nil:
		ss.errText = "the bridge is shutting down"
	case streamErr != nil:
		ss.errText = fmt.Sprintf("lost the agent mid-task: %v", streamErr)
	default:
		ss.errText = agent.ErrStreamEnded.Error()
	}
	ss.status = Failed
	ss.add("error", ss.errText)
	ss.sup.logf("session %s failed: %s", ss.id, ss.errText)
}

// apply records one event and reports whether it ended the turn.
func (ss *Session) apply(u agent.Update) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.taskID == "" && u.TaskID != "" {
		ss.taskID, ss.contextID = u.TaskID, u.ContextID
	}
	if u.State != "" {
		ss.state = string(u.State)
	}
	switch u.Kind {
	case agent.KindThought:
		ss.add("thought", u.Text)
	case agent.KindText:
		ss.result += u.Text
		ss.add("text", u.Text)
	case agent.KindConfirmation, agent.KindToolUpdate:
		if tc := u.Tool; tc != nil {
			ss.track(tc)
		}
	default:
		if u.Text != "" && u.State != a2a.TaskStateSubmitted {
			ss.add("note", u.Text)
		}
	}
	if ss.status == Cancelled {
		// Cancel has spoken: what the aborted turn still reports is
		// recorded above but changes nothing.
		return u.Final
	}
	switch u.State {
	case a2a.TaskStateCanceled:
		ss.status = Cancelled
		ss.notify()
		return u.Final
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		ss.status = Failed
		ss.errText = explainFailure(u.Text)
		ss.notify()
		return true
	}
	if !u.Final {
		return false
	}
	switch {
	case len(ss.pending) > 0:
		ss.status = Waiting
	case ss.follow != nil:
		// A follow-up message goes out next: still running.
	default:
		ss.status = Complete
	}
	ss.notify()
	ss.sup.logf("session %s: %s", ss.id, ss.status)
	return true
}

// track follows a tool call's status; ss.mu held.
func (ss *Session) track(tc *agent.ToolCall) {
	idx := -1
	for i, p := range ss.pending {
		if p.CallID == tc.CallID {
			idx = i
		}
	}
	switch tc.Status {
	case "awaiting_approval":
		if idx < 0 {
			ss.pending = append(ss.pending, tc)
			ss.keepNewline(tc)
			d := ss.decision(tc)
			ss.add("decision", d.Type+": "+d.Description)
			ss.sup.logf("session %s waits on %s", ss.id, d.Description)
		}
	case "success", "error", "cancelled":
		if idx >= 0 {
			ss.pending = append(ss.pending[:idx], ss.pending[idx+1:]...)
		}
		line := fmt.Sprintf("%s %s", tc.Name, tc.Status)
		if tc.Output != "" {
			line += ": " + firstLine(tc.Output)
		}
		ss.add("tool", line)
		if fix, ok := ss.fixes[tc.CallID]; ok {
			delete(ss.fixes, tc.CallID)
			if tc.Status == "success" {
				if wrote, err := edits.Restore(fix); err != nil {
					ss.add("error", err.Error())
				} else if wrote {
					ss.add("note", "kept the final newline of "+fix.Path)
				}
			}
		}
	case "executing":
		ss.add("tool", tc.Name+" executing")
	}
}

// keepNewline records the corrected proposal of an edit that would drop
// the file's final newline; ss.mu held.
func (ss *Session) keepNewline(tc *agent.ToolCall) {
	c := tc.Confirmation
	if c == nil || c.Type != "edit" || c.FilePath == "" {
		return
	}
	original := c.OriginalContent
	if original == nil {
		if b, err := os.ReadFile(c.FilePath); err == nil {
			s := string(b)
			original = &s
		}
	}
	if fix, ok := edits.KeepFinalNewline(c.FilePath, original, c.NewContent); ok {
		if ss.fixes == nil {
			ss.fixes = map[string]edits.Fix{}
		}
		ss.fixes[tc.CallID] = fix
	}
}

// decision describes a tool call awaiting approval, with the session's
// correction of its proposal; ss.mu held.
func (ss *Session) decision(tc *agent.ToolCall) *Decision {
	d := decisionFor(tc)
	if fix, ok := ss.fixes[tc.CallID]; ok {
		d.Diff, d.Note = fix.Diff, fix.Note
	}
	return d
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// decisionFor describes a tool call awaiting approval.
func decisionFor(tc *agent.ToolCall) *Decision {
	d := &Decision{CallID: tc.CallID, Tool: tc.Name, Options: []string{"approved", "denied", "modify: …"}}
	c := tc.Confirmation
	if c == nil {
		c = &agent.Confirmation{}
	}
	d.Kind = c.Type
	switch c.Type {
	case "edit":
		d.Type, d.Path, d.Diff = "file_edit", c.FilePath, c.FileDiff
		d.Description = fmt.Sprintf("%s wants to edit %s", tc.Name, c.FilePath)
		d.Options = []string{"approved", "denied", "modify: <the file's full new content>", "modify: instruction: <what to do instead>"}
	case "exec":
		d.Type, d.Command = "shell_command", c.Command
		d.Description = "run shell command: " + c.Command
	case "mcp":
		// An MCP server's tool: name the server and the tool, and show the
		// arguments, which are all there is to judge the call by.
		d.Type, d.Server, d.ServerTool, d.Args = "checkpoint", c.ServerName, c.ToolName, tc.Args
		if d.ServerTool == "" {
			d.ServerTool = tc.Name
		}
		d.Description = fmt.Sprintf("call MCP tool %s on server %s", d.ServerTool, d.Server)
		if len(tc.Args) > 0 {
			if b, err := json.Marshal(tc.Args); err == nil {
				d.Description += " with " + string(b)
			}
		}
		d.Options = []string{"approved", "approved_always", "denied", "modify: …"}
	default:
		d.Type, d.Args, d.URLs = "checkpoint", tc.Args, c.URLs
		d.Description = strings.TrimSpace(fmt.Sprintf("%s %s %s", tc.Name, c.Title, c.Prompt))
		if tc.Name == "read_file" || tc.Name == "read_many_files" || tc.Name == "glob" {
			d.Type = "file_read"
		}
	}
	return d
}

// Status returns the session's state and the progress since the last call,
// first waiting up to wait for a change while the agent is running.
func (ss *Session) Status(ctx context.Context, wait time.Duration) Snapshot {
	ss.mu.Lock()
	if wait > 0 && ss.status == Running && len(ss.progress) == 0 {
		ch := ss.changed
		ss.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		ss.mu.Lock()
	}
	defer ss.mu.Unlock()
	return ss.snapshotLocked()
}

// WaitSettled blocks until the session is no longer running (or ctx ends)
// and returns its snapshot.
func (ss *Session) WaitSettled(ctx context.Context) Snapshot {
	for {
		ss.mu.Lock()
		if ss.status != Running && !ss.running {
			s := ss.snapshotLocked()
			ss.mu.Unlock()
			return s
		}
		if ss.status == Waiting {
			s := ss.snapshotLocked()
			ss.mu.Unlock()
			return s
		}
		ch := ss.changed
		ss.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			ss.mu.Lock()
			s := ss.snapshotLocked()
			ss.mu.Unlock()
			return s
		}
	}
}

func (ss *Session) snapshotLocked() Snapshot {
	s := Snapshot{SessionID: ss.id, TaskID: ss.taskID, ContextID: ss.contextID, Status: ss.status,
		Progress: ss.progress, Error: ss.errText, State: ss.state, Text: strings.TrimSpace(ss.result)}
	for _, tc := range ss.pending {
		s.Pending = append(s.Pending, ss.decision(tc))
	}
	if s.Progress == nil {
		s.Progress = []Progress{}
	}
	ss.progress = nil
	if ss.status == Waiting && len(ss.pending) > 0 {
		s.Decision = ss.decision(ss.pending[0])
	}
	if ss.status == Complete {
		s.Result = strings.TrimSpace(ss.result)
		s.Summary = firstLine(s.Result)
	}
	return s
}

// Answer kinds, from the supervisor's words.
func outcomeOf(answer string) (outcome, rest string) {
	a := strings.TrimSpace(answer)
	l := strings.ToLower(a)
	switch {
	case l == "approved" || l == "approve" || l == "yes" || l == "proceed":
		return "proceed_once", ""
	case l == "approved_always" || l == "always":
		return "proceed_always", ""
	case l == "denied" || l == "deny" || l == "no" || l == "abort":
		return "cancel", ""
	case strings.HasPrefix(l, "modify:"):
		// Keep the content exactly (trailing newline included).
		raw := strings.TrimLeft(answer, " \t\r\n")
		return "modify", strings.TrimPrefix(raw[len("modify:"):], " ")
	case strings.HasPrefix(l, "adjust:"):
		return "text", strings.TrimSpace(a[len("adjust:"):])
	}
	return "text", a
}

// Respond answers the decision the session waits on, or, when the turn has
// ended, continues the task with answer as the next message. It returns a
// short note of what was done.
func (ss *Session) Respond(answer string) (string, error) {
	if strings.TrimSpace(answer) == "" {
		return "", errors.New("decision is empty: answer approved, denied, modify: …, or text")
	}
	ss.mu.Lock()
	status := ss.status
	var tc *agent.ToolCall
	if len(ss.pending) > 0 {
		tc = ss.pending[0]
	}
	taskID, contextID := ss.taskID, ss.contextID
	ss.mu.Unlock()
	outcome, rest := outcomeOf(answer)
	switch {
	case status == Waiting && tc != nil:
	case status == Complete && outcome == "text":
		// The turn's goroutine may still be winding down (running): the
		// status turned Complete at the turn's last event, after which it
		// writes nothing of this session but under its own generation, so
		// the next turn can start now.
		ss.turn(agent.TextMessage(taskID, contextID, rest), nil)
		return "sent as the next message", nil
	case status == Running:
		return "", fmt.Errorf("session %s is running; nothing waits on a decision (poll gemini_status with wait_s)", ss.id)
	case status == Complete:
		return "", fmt.Errorf("session %s has finished its turn and waits on no decision; answer with text to continue it", ss.id)
	default:
		return "", fmt.Errorf("session %s is %s and cannot take an answer", ss.id, status)
	}
	note := ""
	if outcome == "proceed_always" && tc.Confirmation != nil && tc.Confirmation.Type == "mcp" {
		// The server remembers "always" for an MCP tool only as
		// proceed_always_tool (or _server); plain proceed_always is once.
		outcome = "proceed_always_tool"
	}
	if outcome == "proceed_always" && tc.Name == "web_fetch" {
		// Server 0.25.2 takes "always" on a web fetch as switching the
		// task to auto-edit: its file edits would stop coming as
		// decisions. The supervisor keeps them: approve this fetch once.
		outcome = "proceed_once"
		note = " (once: \"always\" on a web fetch would also stop this task's file edits from being asked)"
	}
	switch outcome {
	case "proceed_once", "proceed_always", "proceed_always_tool", "cancel":
		ss.turn(agent.ConfirmMessage(taskID, contextID, tc.CallID, outcome), nil)
		return fmt.Sprintf("%s %s%s", tc.Name, map[string]string{"proceed_once": "approved", "proceed_always": "approved (always)", "proceed_always_tool": "approved (always, this tool)", "cancel": "denied"}[outcome], note), nil
	case "modify":
		c := tc.Confirmation
		if c != nil && c.Type == "edit" && c.FilePath != "" && !strings.HasPrefix(strings.ToLower(rest), "instruction:") {
			// Gemini CLI's A2A server 0.25 loses the call when given inline
			// content; deny the agent's edit and write the user's version.
			if err := os.WriteFile(c.FilePath, []byte(rest), 0o644); err != nil {
				return "", fmt.Errorf("writing your version of %s: %w", c.FilePath, err)
			}
			ss.turn(agent.ConfirmMessage(taskID, contextID, tc.CallID, "cancel"),
				agent.TextMessage(taskID, contextID, fmt.Sprintf("I did not accept your edit of %s; I wrote my own version of it instead, which is now on disk. Keep my version.", c.FilePath)))
			return fmt.Sprintf("agent's edit denied; your version written to %s and the agent told", c.FilePath), nil
		}
		instr := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(rest, "instruction:"), "INSTRUCTION:"))
		ss.turn(agent.ConfirmMessage(taskID, contextID, tc.CallID, "cancel"),
			agent.TextMessage(taskID, contextID, "I denied that "+tc.Name+" call. Instead: "+instr))
		return "denied; your instruction is sent once the agent has taken the denial", nil
	default:
		ss.turn(agent.ConfirmMessage(taskID, contextID, tc.CallID, "cancel"), agent.TextMessage(taskID, contextID, rest))
		return "denied; your text is sent once the agent has taken the denial", nil
	}
}

// Cancel cancels the task on the agent and stops streaming it. A tool the
// task runs is stopped when the agent's server still can (see agent.Line);
// note says what was stopped and what still runs.
func (ss *Session) Cancel(ctx context.Context) (status Status, note string, err error) {
	ss.mu.Lock()
	taskID, cancelRun, prev := ss.taskID, ss.cancelRun, ss.status
	ss.status = Cancelled
	ss.pending = nil
	ss.notify()
	ss.mu.Unlock()
	stop := ss.line.Cancel(ctx, taskID)
	if cancelRun != nil {
		cancelRun()
	}
	note = stop.Note()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, tc := range stop.Stopped {
		ss.add("tool", tc.Name+" stopped by cancel")
	}
	if len(stop.StillRunning) > 0 {
		ss.add("note", note)
		ss.sup.logf("session %s: %s", ss.id, note)
	}
	if prev == Failed && stop.Err != nil {
		ss.status = Failed
	}
	ss.notify()
	return ss.status, note, stop.Err
}

// Confirm answers the tool call callID with a raw outcome of the agent
// (proceed_once, cancel, proceed_always, ...).
func (ss *Session) Confirm(callID, outcome string) error {
	ss.mu.Lock()
	running, taskID, contextID := ss.running, ss.taskID, ss.contextID
	known := false
	for _, p := range ss.pending {
		known = known || p.CallID == callID
	}
	ss.mu.Unlock()
	if running && !known {
		return fmt.Errorf("task %s is running and waits on no call %q", taskID, callID)
	}
	ss.turn(agent.ConfirmMessage(taskID, contextID, callID, outcome), nil)
	return nil
}

// Say sends text as the next message of the task.
func (ss *Session) Say(text string) error {
	ss.mu.Lock()
	running, taskID, contextID := ss.running, ss.taskID, ss.contextID
	ss.mu.Unlock()
	if running {
		return fmt.Errorf("task %s is still running its turn; wait for it (get_task) or cancel it", taskID)
	}
	ss.turn(agent.TextMessage(taskID, contextID, text), nil)
	return nil
}

// Peek returns the session's snapshot without taking its progress.
func (ss *Session) Peek() Snapshot {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	keep := ss.progress
	s := ss.snapshotLocked()
	ss.progress = keep
	return s
}

// explainFailure adds what to do to the failures of the A2A server that
// have a known cause outside the task.
func explainFailure(text string) string {
	if strings.Contains(text, "Failed to initialize checkpointing") && strings.Contains(text, "lock") {
		// Server 0.25.2 creates its shadow Git repository for a workspace
		// at the first edit; two tasks doing that at once collide. The
		// repository exists now, so the same task started again works.
		return text + " (two tasks made their first edit in this workspace at the same moment and the A2A server's history repository was being created by both; it exists now: start the task again)"
	}
	return text
}
