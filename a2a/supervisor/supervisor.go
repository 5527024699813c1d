// Package supervisor runs tasks on an A2A agent (Gemini CLI's A2A server in
// particular) on behalf of a supervising agent: one session per task, its
// turns streamed in the background, progress buffered until read, tool calls
// awaiting approval turned into decisions, and answers mapped back to the
// server's confirmation outcomes.
package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
)

// Status is a session's state as the supervisor sees it.
type Status string

// Session states. Gemini CLI's A2A server ends every turn with
// input-required; a turn that ended with no tool call awaiting approval is
// "complete" (the task can still be continued with more text).
const (
	Running   Status = "running"
	Waiting   Status = "waiting"
	Complete  Status = "complete"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// ErrUnknownSession is returned for a session id the supervisor never issued.
var ErrUnknownSession = errors.New("unknown session_id")

// Progress is one thing the agent did or said.
type Progress struct {
	Kind string    `json:"kind"` // thought, text, tool, decision, error, note
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Decision is a choice the agent waits on.
type Decision struct {
	Type        string   `json:"type"` // shell_command, file_edit, file_read, clarification, checkpoint
	Description string   `json:"description"`
	Options     []string `json:"options,omitempty"`
	Context     string   `json:"context,omitempty"`
	CallID      string   `json:"call_id"`
	Tool        string   `json:"tool"`
	Path        string   `json:"path,omitempty"`
	Diff        string   `json:"diff,omitempty"`
	Command     string   `json:"command,omitempty"`
	// Kind is the agent's own confirmation type: edit, exec, mcp, info.
	Kind string `json:"kind,omitempty"`
	// Server is the MCP server (its name in the agent's settings) and
	// ServerTool the tool's own name on it, for an MCP tool call; Tool is
	// the agent's name for the call ("server__tool" when two servers offer
	// the same tool).
	Server     string `json:"server,omitempty"`
	ServerTool string `json:"server_tool,omitempty"`
	// Args are the call's arguments, for MCP and other tools whose
	// description does not show them.
	Args map[string]any `json:"args,omitempty"`
	// URLs are the addresses a web fetch would reach.
	URLs []string `json:"urls,omitempty"`
	// Note says what the bridge changed in the agent's proposal (the file's
	// final newline, which the server trims, is kept).
	Note string `json:"note,omitempty"`
}

// Snapshot is what a status call returns.
type Snapshot struct {
	SessionID string     `json:"session_id"`
	TaskID    string     `json:"task_id,omitempty"`
	ContextID string     `json:"context_id,omitempty"`
	Status    Status     `json:"status"`
	Decision  *Decision  `json:"decision,omitempty"`
	Progress  []Progress `json:"progress"`
	Result    string     `json:"result,omitempty"`
	Summary   string     `json:"summary,omitempty"`
	Error     string     `json:"error,omitempty"`
	// State is the agent's own last task state (A2A), Text all the agent's
	// text of the turn, Pending every call awaiting approval.
	State   string      `json:"-"`
	Text    string      `json:"-"`
	Pending []*Decision `json:"-"`
}

// Supervisor holds the sessions of one bridge.
type Supervisor struct {
	base context.Context
	stop context.CancelFunc
	mu   sync.Mutex
	byID map[string]*Session
	wg   sync.WaitGroup
	logf func(format string, args ...any)
}

// New returns a Supervisor whose background turns end when Close is called.
// logf, if not nil, receives one line per notable event.
func New(logf func(format string, args ...any)) *Supervisor {
	ctx, cancel := context.WithCancel(context.Background())
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Supervisor{base: ctx, stop: cancel, byID: map[string]*Session{}, logf: logf}
}

// Close stops every running turn and waits for them.
func (s *Supervisor) Close() {
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	sessions := make([]*Session, 0, len(s.byID))
	for _, ss := range s.byID {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.line.Close()
	}
}

// Session is one task on an agent.
type Session struct {
	id  string
	ag  *agent.Agent
	sup *Supervisor
	// line carries the task's messages and can stop what its turn runs.
	line *agent.Line

	mu        sync.Mutex
	changed   chan struct{}
	taskID    string
	contextID string
	status    Status
	pending   []*agent.ToolCall
	progress  []Progress
	result    string
	errText   string
	running   bool
	cancelRun context.CancelFunc
	state     string
	follow    *a2a.Message
	gen       int
	watchers  map[int]func(Progress)
	nextWatch int
	// fixes are the corrected proposals of edits waiting for approval or
	// running, by call id (see package edits).
	fixes map[string]edits.Fix
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "gs-" + hex.EncodeToString(b[:])
}

// Start begins a task on ag with text as the first message and returns its
// session. The turn runs in the background.
func (s *Supervisor) Start(ag *agent.Agent, text string) *Session {
	ss := &Session{id: newID(), ag: ag, sup: s, line: ag.NewLine(), changed: make(chan struct{}), status: Running}
	s.mu.Lock()
	s.byID[ss.id] = ss
	s.mu.Unlock()
	s.logf("session %s started", ss.id)
	ss.turn(agent.TextMessage("", "", text), nil)
	return ss
}

// Get returns the session with id.
func (s *Supervisor) Get(id string) (*Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSession, id)
	}
	return ss, nil
}

// Forget drops a finished session (a turn it still runs is aborted).
func (s *Supervisor) Forget(id string) {
	s.mu.Lock()
	ss := s.byID[id]
	delete(s.byID, id)
	s.mu.Unlock()
	if ss != nil {
		ss.line.Close()
	}
}

// ID returns the session id.
func (ss *Session) ID() string { return ss.id }

// notify wakes waiters; ss.mu must be held.
func (ss *Session) notify() {
	close(ss.changed)
	ss.changed = make(chan struct{})
}

func (ss *Session) add(kind, text string) {
	if text == "" {
		return
	}
	p := Progress{Kind: kind, Text: text, At: time.Now()}
	ss.progress = append(ss.progress, p)
	for _, w := range ss.watchers {
		w(p)
	}
	ss.notify()
}

// Attach returns a session for a task that already exists on ag (started
// elsewhere); it starts idle, as if its last turn had completed.
func (s *Supervisor) Attach(ag *agent.Agent, taskID, contextID string) *Session {
	ss := &Session{id: newID(), ag: ag, sup: s, line: ag.NewLine(), changed: make(chan struct{}), status: Complete,
		taskID: taskID, contextID: contextID}
	s.mu.Lock()
	s.byID[ss.id] = ss
	s.mu.Unlock()
	return ss
}

// StartIn is Start with a chosen context id (empty: the agent picks one).
func (s *Supervisor) StartIn(ag *agent.Agent, contextID, text string) *Session {
	ss := &Session{id: newID(), ag: ag, sup: s, line: ag.NewLine(), changed: make(chan struct{}), status: Running}
	s.mu.Lock()
	s.byID[ss.id] = ss
	s.mu.Unlock()
	ss.turn(agent.TextMessage("", contextID, text), nil)
	return ss
}

// Watch calls fn with every progress entry from now on, until stop is
// called. fn runs with the session locked and must not block.
func (ss *Session) Watch(fn func(Progress)) (stop func()) {
	return ss.watch(fn, false)
}

// WatchAll is Watch that first calls fn with the entries recorded and not
// read yet: for a caller that started the session and must not miss what
// its turn reported before the caller began to watch.
func (ss *Session) WatchAll(fn func(Progress)) (stop func()) {
	return ss.watch(fn, true)
}

func (ss *Session) watch(fn func(Progress), unread bool) (stop func()) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if unread {
		for _, p := range ss.progress {
			fn(p)
		}
	}
	if ss.watchers == nil {
		ss.watchers = map[int]func(Progress){}
	}
	id := ss.nextWatch
	ss.nextWatch++
	ss.watchers[id] = fn
	return func() {
		ss.mu.Lock()
		delete(ss.watchers, id)
		ss.mu.Unlock()
	}
}
