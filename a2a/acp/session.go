package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
)

// session is one ACP session: an A2A context on one backend, one task at a
// time, one turn at a time.
type session struct {
	a   *Agent
	id  string
	cwd string
	mcp []McpServer

	mu        sync.Mutex
	b         *backend
	line      *agent.Line
	taskID    string
	contextID string
	commands  []rfc.SlashCommand
	turn      *turn
	closed    bool
}

// turn is one running session/prompt.
type turn struct {
	cancel    context.CancelFunc
	cancelled bool
	stopped   chan struct{} // closed once a cancel has stopped what runs
	stop      agent.Stop
	tools     map[string]*toolState
	awaiting  []string // calls waiting for approval, in the order asked
}

// toolState is what the session knows of one tool call of the turn.
type toolState struct {
	call      *agent.ToolCall
	announced bool   // tool_call sent
	server    string // last server status seen
	sent      string // last ACP status sent
	title     string
	kind      string
	locations []location
	// original is the file before an edit (from the client, the server or
	// the disk), fix the proposal with the file's final newline kept.
	original *string
	fix      *edits.Fix
	asked    bool
	outcome  string
}

func (s *session) send(u update) {
	if err := s.a.conn.notify("session/update", sessionNotification{SessionID: s.id, Update: u}); err != nil {
		s.a.opts.Logf("session %s: update not sent: %v", s.id, err)
	}
}

func (s *session) chunk(kind, t string) {
	s.send(update{SessionUpdate: kind, Content: text(t)})
}

func (s *session) save() {
	s.mu.Lock()
	r := record{SessionID: s.id, Cwd: s.cwd, AgentURL: s.b.ag.URL, TaskID: s.taskID, ContextID: s.contextID}
	s.mu.Unlock()
	if err := s.a.store.save(r); err != nil {
		s.a.opts.Logf("session %s: %v", s.id, err)
	}
}

func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	line, b, t := s.line, s.b, s.turn
	s.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	line.Close()
	s.a.pool.release(b)
}

// thoughtText is how Gemini CLI's own ACP agent writes a thought.
func thoughtText(th rfc.Thought) string {
	return "**" + th.Subject + "**\n" + th.Description
}

// promptParts turns the client's content into the message's parts: the
// user's text first (the task's history names the prompt by its first text
// part), then each embedded file and link.
func promptParts(blocks []contentBlock) (string, a2a.ContentParts, error) {
	var texts []string
	var extra a2a.ContentParts
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "resource":
			if b.Resource == nil || b.Resource.Blob != "" {
				return "", nil, errorf(CodeInvalidParams, "prompt: only text resources can be embedded")
			}
			extra = append(extra, a2a.TextPart{Text: fmt.Sprintf("Content of %s:\n```\n%s\n```", b.Resource.URI, b.Resource.Text)})
		case "resource_link":
			extra = append(extra, a2a.TextPart{Text: fmt.Sprintf("The user refers to %s (%s).", b.Name, b.URI)})
		default:
			return "", nil, errorf(CodeInvalidParams, "prompt: %q content is not supported (promptCapabilities: text, resource, resource_link)", b.Type)
		}
	}
	userText := strings.Join(texts, "\n")
	if strings.TrimSpace(userText) == "" && len(extra) == 0 {
		return "", nil, errorf(CodeInvalidParams, "prompt: empty")
	}
	parts := a2a.ContentParts{}
	if userText != "" {
		parts = append(parts, a2a.TextPart{Text: userText})
	}
	return userText, append(parts, extra...), nil
}

// prompt runs one turn: a slash command of the server, or the user's
// message to the agent until the agent ends its turn.
func (s *session) prompt(ctx context.Context, blocks []contentBlock) (any, error) {
	userText, parts, err := promptParts(blocks)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return nil, errorf(CodeInvalidRequest, "session %s already runs a prompt: wait for its end or cancel it", s.id)
	}
	if s.closed {
		s.mu.Unlock()
		return nil, errorf(CodeNotFound, "session %s is closed", s.id)
	}
	tctx, cancel := context.WithCancel(ctx)
	t := &turn{cancel: cancel, stopped: make(chan struct{}), tools: map[string]*toolState{}}
	s.turn = t
	s.mu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		s.turn = nil
		s.mu.Unlock()
		s.save()
	}()
	if err := s.ensureBackend(tctx); err != nil {
		return nil, err
	}
	if name, args, ok := s.matchCommand(userText); ok {
		s.runCommand(tctx, name, args)
		return promptResult{StopReason: StopEndTurn}, nil
	}
	reason, err := s.run(tctx, t, a2a.NewMessage(a2a.MessageRoleUser, parts...))
	if s.cancelled(t) {
		return s.finishCancel(t), nil
	}
	if err != nil {
		return nil, err
	}
	return promptResult{StopReason: reason}, nil
}

func (s *session) cancelled(t *turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.cancelled
}

// ensureBackend replaces a started server that exited by a new one (the
// conversation starts again: its task died with the server).
func (s *session) ensureBackend(ctx context.Context) error {
	s.mu.Lock()
	b := s.b
	s.mu.Unlock()
	if !b.dead() {
		return nil
	}
	nb, err := s.a.pool.get(ctx, s.cwd, s.mcp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	old, oldLine := s.b, s.line
	s.b, s.line = nb, nb.ag.NewLine()
	s.taskID, s.contextID = "", ""
	s.mu.Unlock()
	oldLine.Close()
	s.a.pool.release(old)
	s.a.opts.Logf("session %s: the A2A server had exited; a new one serves the session (the conversation starts again)", s.id)
	return nil
}

// run sends msg and forwards the turn's events; when the turn waits for an
// approval, it asks the client and sends the answer, until the agent ends
// its turn.
func (s *session) run(ctx context.Context, t *turn, msg *a2a.Message) (string, error) {
	for {
		s.mu.Lock()
		msg.TaskID, msg.ContextID = a2a.TaskID(s.taskID), s.contextID
		line := s.line
		s.mu.Unlock()
		var final *agent.Update
		for u, err := range line.Send(ctx, msg) {
			if err != nil {
				if ctx.Err() != nil || s.cancelled(t) {
					return StopCancelled, nil
				}
				return "", s.lost(err)
			}
			s.observe(u)
			s.forward(ctx, t, u)
			if u.Final {
				final = &u
				break
			}
		}
		if ctx.Err() != nil || s.cancelled(t) {
			return StopCancelled, nil
		}
		if final == nil {
			return "", s.lost(agent.ErrStreamEnded)
		}
		switch final.State {
		case a2a.TaskStateCanceled:
			s.endTask()
			return StopCancelled, nil
		case a2a.TaskStateFailed:
			s.endTask()
			why := strings.TrimSpace(final.Text)
			if why == "" {
				why = "no reason given"
			}
			return "", &Error{Code: CodeInternalError, Message: "the agent's turn failed: " + why}
		}
		st := s.nextAwaiting(t)
		if st == nil {
			if final.State.Terminal() {
				s.endTask() // another A2A agent's completed task takes no more messages
			}
			return StopEndTurn, nil
		}
		outcome, err := s.ask(ctx, st)
		if err != nil {
			return StopCancelled, nil
		}
		msg = agent.ConfirmMessage("", "", st.call.CallID, outcome)
	}
}

// lost words a turn whose stream broke.
func (s *session) lost(err error) error {
	s.mu.Lock()
	b := s.b
	s.mu.Unlock()
	msg := fmt.Sprintf("lost the A2A agent mid-turn: %v", err)
	if b.srv != nil {
		select {
		case <-b.srv.Done():
			msg += "; Gemini CLI's A2A server exited (the next prompt starts a new one, and a new conversation)"
		case <-time.After(time.Second):
		}
	}
	s.endTask()
	return &Error{Code: CodeInternalError, Message: msg}
}

// endTask forgets the task (it ended for good); the next prompt starts a
// new task in the same context.
func (s *session) endTask() {
	s.mu.Lock()
	s.taskID = ""
	s.mu.Unlock()
}

func (s *session) observe(u agent.Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.TaskID != "" {
		s.taskID = u.TaskID
	}
	if u.ContextID != "" {
		s.contextID = u.ContextID
	}
}

func (s *session) nextAwaiting(t *turn) *toolState {
	for len(t.awaiting) > 0 {
		id := t.awaiting[0]
		t.awaiting = t.awaiting[1:]
		if st := t.tools[id]; st != nil && !st.asked && st.server == "awaiting_approval" {
			return st
		}
	}
	return nil
}

// forward turns one A2A event into ACP session updates.
func (s *session) forward(ctx context.Context, t *turn, u agent.Update) {
	switch {
	case u.Tool != nil:
		s.tool(ctx, t, u.Tool)
	case u.Kind == agent.KindThought:
		s.chunk("agent_thought_chunk", thoughtText(rfc.ThoughtOf(u)))
	case u.Kind == agent.KindText && u.Text != "":
		s.chunk("agent_message_chunk", u.Text)
	case u.Kind == "" && u.Text != "":
		// An A2A agent other than Gemini CLI's: its messages, status
		// texts and artifacts are its answer.
		s.chunk("agent_message_chunk", u.Text)
	}
}

// acpKind maps the tool's kind in Gemini CLI's registry to ACP's, as Gemini
// CLI's own ACP agent does; a tool whose kind is not given is told by its
// name.
func acpKind(tc *agent.ToolCall) string {
	switch tc.Kind {
	case "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other":
		return tc.Kind
	case "agent":
		return "think"
	case "":
	default:
		return "other"
	}
	switch tc.Name {
	case "read_file", "read_many_files", "list_directory":
		return "read"
	case "write_file", "replace":
		return "edit"
	case "run_shell_command":
		return "execute"
	case "glob", "search_file_content":
		return "search"
	case "web_fetch", "google_web_search":
		return "fetch"
	}
	return "other"
}

// acpStatus maps the server's tool status to ACP's.
func acpStatus(s string) string {
	switch s {
	case "executing":
		return "in_progress"
	case "success":
		return "completed"
	case "error", "cancelled":
		return "failed"
	}
	return "pending"
}

var pathArgs = []string{"file_path", "absolute_path", "path", "dir_path", "directory"}

// toolPath is the file or folder a tool call works on, when it names one.
func toolPath(tc *agent.ToolCall) string {
	if tc.Confirmation != nil && tc.Confirmation.FilePath != "" {
		return tc.Confirmation.FilePath
	}
	for _, k := range pathArgs {
		if p, ok := tc.Args[k].(string); ok && p != "" {
			return p
		}
	}
	return ""
}

func (s *session) title(tc *agent.ToolCall) string {
	name := tc.DisplayName
	if name == "" {
		name = tc.Name
	}
	if c, ok := tc.Args["command"].(string); ok && c != "" {
		return c
	}
	if p := toolPath(tc); p != "" {
		if rel, err := filepath.Rel(s.cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		return name + " " + p
	}
	if tc.Confirmation != nil && tc.Confirmation.ToolDisplayName != "" {
		return tc.Confirmation.ToolDisplayName
	}
	return name
}

// tool forwards a tool-call update: the first becomes tool_call, later
// ones tool_call_update when the status changes. An edit waiting for
// approval carries its diff; a finished edit is written through the client
// when it offers that.
func (s *session) tool(ctx context.Context, t *turn, tc *agent.ToolCall) {
	st := t.tools[tc.CallID]
	if st == nil {
		st = &toolState{}
		t.tools[tc.CallID] = st
	}
	if st.server == tc.Status {
		return // the server repeats an update as tool-call-confirmation
	}
	st.server = tc.Status
	if st.call != nil {
		if tc.Confirmation == nil {
			tc.Confirmation = st.call.Confirmation
		}
		if tc.Kind == "" {
			tc.Kind, tc.DisplayName = st.call.Kind, st.call.DisplayName
		}
	}
	st.call = tc
	if st.title == "" {
		st.title, st.kind = s.title(tc), acpKind(tc)
		if p := toolPath(tc); filepath.IsAbs(p) {
			st.locations = []location{{Path: p}}
		}
	}
	var content []toolCallContent
	switch tc.Status {
	case "awaiting_approval":
		if tc.Confirmation != nil {
			s.prepare(ctx, st)
			t.awaiting = append(t.awaiting, tc.CallID)
			content = s.askContent(st)
		}
	case "success":
		content = s.finished(ctx, st)
	case "error":
		if tc.Output != "" {
			content = []toolCallContent{textContent(tc.Output)}
		}
	case "cancelled":
		why := "Cancelled."
		if st.outcome == rfc.OutcomeCancel {
			why = "Rejected by the user."
		}
		content = []toolCallContent{textContent(why)}
	}
	status := acpStatus(tc.Status)
	if !st.announced {
		st.announced, st.sent = true, status
		s.send(update{SessionUpdate: "tool_call", ToolCallID: tc.CallID, Title: st.title, Kind: st.kind, Status: status,
			Locations: st.locations, RawInput: tc.Args, Contents: content})
		return
	}
	if status == st.sent && content == nil {
		return
	}
	st.sent = status
	s.send(update{SessionUpdate: "tool_call_update", ToolCallID: tc.CallID, Status: status, Contents: content})
}

// prepare reads the file an edit changes (through the client when it
// offers that, so an unsaved buffer counts) and keeps the file's final
// newline in the proposal.
func (s *session) prepare(ctx context.Context, st *toolState) {
	c := st.call.Confirmation
	if c.Type != "edit" || !filepath.IsAbs(c.FilePath) {
		return
	}
	st.original = nil
	if _, err := os.Stat(c.FilePath); errors.Is(err, fs.ErrNotExist) {
		return // a new file: no old text
	}
	if read, _ := s.a.clientFS(); read {
		var res readTextFileResult
		rctx, cancel := context.WithTimeout(ctx, s.a.opts.Timeout)
		err := s.a.conn.call(rctx, "fs/read_text_file", readTextFileParams{SessionID: s.id, Path: c.FilePath}, &res)
		cancel()
		if err == nil {
			st.original = &res.Content
		} else {
			s.a.opts.Logf("session %s: fs/read_text_file %s: %v", s.id, c.FilePath, err)
		}
	}
	if st.original == nil && c.OriginalContent != nil {
		st.original = c.OriginalContent
	}
	if st.original == nil {
		if b, err := os.ReadFile(c.FilePath); err == nil {
			s := string(b)
			st.original = &s
		}
	}
	if f, ok := edits.KeepFinalNewline(c.FilePath, st.original, c.NewContent); ok {
		st.fix = &f
	}
}

// proposal is the edit's text as the user is shown it.
func (st *toolState) proposal() string {
	if st.fix != nil {
		return st.fix.Content
	}
	return st.call.Confirmation.NewContent
}

// askContent is what a call waiting for approval shows: an edit's diff, a
// command, an MCP tool, a generic prompt.
func (s *session) askContent(st *toolState) []toolCallContent {
	c := st.call.Confirmation
	switch c.Type {
	case "edit":
		return []toolCallContent{diffContent(c.FilePath, st.original, st.proposal())}
	case "exec":
		return []toolCallContent{textContent(c.Command)}
	case "mcp":
		return []toolCallContent{textContent(fmt.Sprintf("Tool %s of MCP server %s", c.ToolName, c.ServerName))}
	}
	if d := strings.TrimSpace(c.Title + "\n" + c.Prompt); d != "" {
		return []toolCallContent{textContent(d)}
	}
	return nil
}

// finished is the content of a call that succeeded. An edit's file gets
// the approved text: through the client when it writes files (the
// editor's buffer then has it), else on disk with the final newline the
// server trimmed put back.
func (s *session) finished(ctx context.Context, st *toolState) []toolCallContent {
	tc := st.call
	path, original, content, fix := "", st.original, "", st.fix
	switch {
	case tc.Confirmation != nil && tc.Confirmation.Type == "edit" && filepath.IsAbs(tc.Confirmation.FilePath):
		path, content = tc.Confirmation.FilePath, st.proposal()
	case tc.ResultDiff != nil && filepath.IsAbs(tc.ResultDiff.FilePath):
		// An edit that was not asked (approved for the session before).
		rd := tc.ResultDiff
		path, original, content = rd.FilePath, rd.OriginalContent, rd.NewContent
		if f, ok := edits.KeepFinalNewline(path, original, content); ok {
			fix, content = &f, f.Content
		}
	default:
		if tc.Output != "" {
			return []toolCallContent{textContent(tc.Output)}
		}
		return nil
	}
	_, write := s.a.clientFS()
	wrote := false
	if write {
		wctx, cancel := context.WithTimeout(ctx, s.a.opts.Timeout)
		err := s.a.conn.call(wctx, "fs/write_text_file", writeTextFileParams{SessionID: s.id, Path: path, Content: content}, nil)
		cancel()
		if err != nil {
			s.a.opts.Logf("session %s: fs/write_text_file %s: %v; the server's own write stands", s.id, path, err)
		} else {
			wrote = true
		}
	}
	if !wrote && fix != nil {
		if _, err := edits.Restore(*fix); err != nil {
			s.a.opts.Logf("session %s: %v", s.id, err)
		}
	}
	return []toolCallContent{diffContent(path, original, content)}
}

// permissionKind is ACP's kind of a confirmation option.
func permissionKind(outcome string) string {
	switch outcome {
	case rfc.OutcomeOnce:
		return "allow_once"
	case rfc.OutcomeCancel:
		return "reject_once"
	}
	return "allow_always"
}

// ask sends session/request_permission for a call waiting for approval and
// returns the outcome for the server: the option chosen, or cancel when
// the client cancelled the request, chose no option offered or failed. It
// fails only when the turn was cancelled.
func (s *session) ask(ctx context.Context, st *toolState) (string, error) {
	st.asked = true
	rc := rfc.NewToolCall(st.call, st.original).ConfirmationRequest
	var opts []permissionOption
	offered := map[string]bool{}
	for _, o := range rc.Options {
		opts = append(opts, permissionOption{OptionID: o.ID, Name: o.Name, Kind: permissionKind(o.ID)})
		offered[o.ID] = true
	}
	params := requestPermissionParams{SessionID: s.id, Options: opts, ToolCall: permissionToolCall{
		ToolCallID: st.call.CallID, Title: st.title, Kind: st.kind, Status: "pending",
		Content: s.askContent(st), Locations: st.locations, RawInput: st.call.Args,
	}}
	var res requestPermissionResult
	err := s.a.conn.call(ctx, "session/request_permission", params, &res)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	outcome := rfc.OutcomeCancel
	switch {
	case err != nil:
		s.a.opts.Logf("session %s: session/request_permission: %v; the call is denied", s.id, err)
	case res.Outcome.Outcome == "selected" && offered[res.Outcome.OptionID]:
		outcome = res.Outcome.OptionID
	case res.Outcome.Outcome == "selected":
		s.a.opts.Logf("session %s: option %q was not offered; the call is denied", s.id, res.Outcome.OptionID)
	}
	st.outcome = outcome
	return outcome, nil
}

// cancelTurn stops the running turn (session/cancel): the turn's
// connection is closed so that the server aborts what it runs, the task is
// cancelled, and the prompt answers cancelled once that is done.
func (s *session) cancelTurn() {
	s.mu.Lock()
	t, taskID, line := s.turn, s.taskID, s.line
	if t == nil || t.cancelled {
		s.mu.Unlock()
		return
	}
	t.cancelled = true
	s.mu.Unlock()
	go func() {
		defer close(t.stopped)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		stop := line.Cancel(ctx, taskID)
		t.cancel()
		s.mu.Lock()
		t.stop = stop
		if s.taskID == taskID {
			s.taskID = ""
		}
		s.mu.Unlock()
		if stop.Err != nil {
			s.a.opts.Logf("session %s: cancel: %v", s.id, stop.Err)
		}
	}()
}

// finishCancel reports what the cancel stopped, once it has.
func (s *session) finishCancel(t *turn) promptResult {
	<-t.stopped
	s.mu.Lock()
	stop := t.stop
	// The task is cancelled (its last events may have named it again while
	// the cancel went on): the next prompt starts a new one in the context.
	s.taskID = ""
	s.mu.Unlock()
	for _, tc := range stop.Stopped {
		if st := t.tools[tc.CallID]; st != nil && st.announced {
			s.send(update{SessionUpdate: "tool_call_update", ToolCallID: tc.CallID, Status: "failed",
				Contents: []toolCallContent{textContent("Stopped by cancel.")}})
		}
	}
	if len(stop.StillRunning) > 0 {
		s.chunk("agent_message_chunk", "Cancelled, but "+stop.Note()+".")
	}
	return promptResult{StopReason: StopCancelled}
}

// matchCommand reports whether text runs one of the server's slash
// commands: "/name args", the longest name that matches ("/memory show"
// before "/memory").
func (s *session) matchCommand(text string) (string, []string, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", nil, false
	}
	words := strings.Fields(text[1:])
	s.mu.Lock()
	known := map[string]bool{}
	for _, c := range s.commands {
		known[c.Name] = true
	}
	s.mu.Unlock()
	for n := len(words); n > 0; n-- {
		if name := strings.Join(words[:n], " "); known[name] {
			return name, words[n:], true
		}
	}
	return "", nil, false
}

// runCommand runs a slash command and shows its output as the agent's
// message.
func (s *session) runCommand(ctx context.Context, name string, args []string) {
	s.mu.Lock()
	b := s.b
	s.mu.Unlock()
	data, streamed, err := rfc.ExecuteCommand(ctx, b.ag, name, args, func(text string) {
		s.chunk("agent_message_chunk", text)
	})
	switch {
	case err != nil:
		s.chunk("agent_message_chunk", fmt.Sprintf("/%s failed: %v", name, err))
	case streamed:
	case data == nil:
		s.chunk("agent_message_chunk", fmt.Sprintf("/%s done.", name))
	default:
		if str, ok := data.(string); ok {
			s.chunk("agent_message_chunk", str)
			return
		}
		b, _ := json.MarshalIndent(data, "", "  ")
		s.chunk("agent_message_chunk", string(b))
	}
}

// replay sends the session's history as session updates (session/load):
// the task as the A2A agent keeps it.
func (s *session) replay(ctx context.Context, r record) error {
	s.mu.Lock()
	s.taskID, s.contextID = r.TaskID, r.ContextID
	b := s.b
	s.mu.Unlock()
	if r.TaskID == "" {
		return nil
	}
	gctx, cancel := context.WithTimeout(ctx, s.a.opts.Timeout)
	defer cancel()
	task, err := b.ag.TaskHistory(gctx, r.TaskID)
	if err != nil {
		return errGone(s.id, err)
	}
	for _, it := range rfc.History(task) {
		switch {
		case it.User != "":
			s.chunk("user_message_chunk", it.User)
		case it.Thought != nil:
			s.chunk("agent_thought_chunk", thoughtText(*it.Thought))
		case it.Text != "":
			s.chunk("agent_message_chunk", it.Text)
		case it.Tool != nil:
			tc := it.Tool
			u := update{SessionUpdate: "tool_call", ToolCallID: tc.CallID, Title: s.title(tc), Kind: acpKind(tc),
				Status: acpStatus(tc.Status), RawInput: tc.Args}
			if p := toolPath(tc); filepath.IsAbs(p) {
				u.Locations = []location{{Path: p}}
			}
			switch {
			case tc.ResultDiff != nil:
				u.Contents = []toolCallContent{diffContent(tc.ResultDiff.FilePath, tc.ResultDiff.OriginalContent, tc.ResultDiff.NewContent)}
			case tc.Output != "":
				u.Contents = []toolCallContent{textContent(tc.Output)}
			}
			s.send(u)
		}
	}
	if task.Status.State.Terminal() {
		s.endTask()
	}
	return nil
}
