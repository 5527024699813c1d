package agentpanel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

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
	fix, fixed := p.fixes[tc.CallID]
	if fixed && (tc.Status == "success" || tc.Status == "error" || tc.Status == "cancelled") {
		delete(p.fixes, tc.CallID)
	}
	p.mu.Unlock()

	if fixed && tc.Status == "success" {
		if wrote, err := edits.Restore(fix); err != nil {
			p.emitError("%v", err)
		} else if wrote {
			p.opts.Logf("agent panel: kept the final newline of %s", fix.Path)
		}
	}
	var original *string
	if awaiting && tc.Confirmation.Type == "edit" && filepath.IsAbs(tc.Confirmation.FilePath) {
		if b, err := os.ReadFile(tc.Confirmation.FilePath); err == nil {
			s := string(b)
			original = &s
		}
		if f, ok := edits.KeepFinalNewline(tc.Confirmation.FilePath, original, tc.Confirmation.NewContent); ok {
			p.mu.Lock()
			pd.fix = &f
			p.mu.Unlock()
		}
	}
	ev := toolCall(tc, original)
	if pd != nil && pd.fix != nil && ev.ConfirmationRequest != nil && ev.ConfirmationRequest.FileEditDetails != nil {
		d := ev.ConfirmationRequest.FileEditDetails
		d.NewContent, d.FormattedDiff, d.Note = pd.fix.Content, pd.fix.Diff, pd.fix.Note
	}
	if awaiting && tc.Confirmation.Type == "edit" {
		ev.DiffID = p.showDiff(pd, original)
		ev.DiffShown = ev.DiffID != 0
	}
	if !awaiting && pd != nil && pd.diffID != 0 && !pd.decided {
		p.closeDiff(tc.Confirmation, pd)
	}
	p.emit(Event{Type: "tool", Tool: ev})
}

// proposal is the text the user is shown for an edit: the server's, or the
// corrected one.
func (pd *pending) proposal() string {
	if pd.fix != nil {
		return pd.fix.Content
	}
	return pd.call.Confirmation.NewContent
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
	req := protocol.DiffOpenParams{
		FilePath: c.FilePath, NewContent: c.NewContent, OriginalContent: original,
		UnifiedDiff: c.FileDiff, Title: filepath.Base(c.FilePath) + " (Gemini agent's edit)",
		DiffID: id, Owner: "agent",
	}
	if pd.fix != nil {
		req.NewContent, req.UnifiedDiff, req.Notice = pd.fix.Content, pd.fix.Diff, pd.fix.Note
		req.Title = filepath.Base(c.FilePath) + " (Gemini agent's edit, final newline kept)"
	}
	if _, err := p.plugin.DiffOpen(ctx, req); err != nil {
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
		if _, err := p.plugin.DiffClose(ctx, protocol.DiffCloseParams{FilePath: path}); err != nil {
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
	switch {
	case !accepted:
		p.answer(pd.call.CallID, rfc.OutcomeCancel)
	case pd.orphaned:
		p.approveOrphan(pd, content)
	default:
		p.approve(pd, rfc.OutcomeOnce, content)
	}
	return true
}

// approve approves an edit with the text the user accepted: the proposal
// shown (the final newline the server drops is put back once it wrote the
// file), the server's own text, or the user's version (written by the
// sidecar, the agent's edit declined).
func (p *Panel) approve(pd *pending, outcome, content string) {
	switch {
	case content == pd.proposal():
		if pd.fix != nil {
			p.mu.Lock()
			p.fixes[pd.call.CallID] = *pd.fix
			p.mu.Unlock()
		}
		p.answer(pd.call.CallID, outcome)
	case content == pd.call.Confirmation.NewContent:
		p.answer(pd.call.CallID, outcome)
	default:
		p.writeOwn(pd.call, content)
	}
}

// approveOrphan approves a call asked before the sidecar restarted. An
// edit is written by the panel (content: the agent's text or the user's
// version) and the agent told; any other call is declined and the agent
// asked to make it again, so that it is asked on a live connection.
func (p *Panel) approveOrphan(pd *pending, content string) {
	tc := pd.call
	c := tc.Confirmation
	if c.Type == "edit" {
		if content == pd.proposal() || content == c.NewContent {
			if err := writeFile(c.FilePath, content); err != nil {
				p.emitError("writing %s: %v; the agent's edit was declined", c.FilePath, err)
				p.answer(tc.CallID, rfc.OutcomeCancel)
				return
			}
			p.emit(Event{Type: "notice", Text: fmt.Sprintf("The agent's edit of %s was written by the companion (the agent's connection was lost when the sidecar restarted); the agent is told.", filepath.Base(c.FilePath))})
			p.dequeuePending(tc.CallID)
			p.enqueue(agent.ConfirmMessage("", "", tc.CallID, rfc.OutcomeCancel),
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
	p.enqueue(agent.ConfirmMessage("", "", tc.CallID, rfc.OutcomeCancel),
		agent.TextMessage("", "", fmt.Sprintf("I approve your call %s, but my answer could not reach it. Please make the same call again.", what)))
}

// writeOwn writes the user's version of an edit, declines the agent's and
// tells the agent.
func (p *Panel) writeOwn(tc *agent.ToolCall, content string) {
	path := tc.Confirmation.FilePath
	if err := writeFile(path, content); err != nil {
		p.emitError("writing your version of %s: %v; the agent's edit was declined", path, err)
		p.answer(tc.CallID, rfc.OutcomeCancel)
		return
	}
	p.emit(Event{Type: "notice", Text: fmt.Sprintf("Your version of %s was written; the agent's edit was declined and the agent is told.", filepath.Base(path))})
	p.dequeuePending(tc.CallID)
	p.enqueue(agent.ConfirmMessage("", "", tc.CallID, rfc.OutcomeCancel),
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
	if !rfc.IsOutcome(outcome) {
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
	if pd.orphaned && outcome != rfc.OutcomeCancel {
		text := pd.proposal()
		if content != nil {
			text = *content
		}
		p.approveOrphan(pd, text)
		return nil
	}
	if pd.call.Confirmation.Type == "edit" && outcome != rfc.OutcomeCancel {
		text := pd.proposal()
		if content != nil {
			text = *content
		}
		p.approve(pd, outcome, text)
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
