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
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/edits"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol/rpc"
)

// Options wire a Panel to its editor link and the sidecar's state.
type Options struct {
	// Conn carries agent/event notifications and diff/open requests to
	// the plugin (link.Conn is one).
	Conn rpc.Caller
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
	// EditorTools returns what gives a server the panel starts the editor
	// tools: its MCP servers (settings entries by name) and the variables
	// that lead them to this companion; nil for none.
	EditorTools func() (servers map[string]any, env []string)
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
	// fix is the proposal shown instead of the server's, when the server's
	// dropped the file's final newline.
	fix *edits.Fix
	// orphaned: the call was asked on a connection of an earlier sidecar.
	// The server ties a turn to the HTTP connection that started it, so an
	// approval sent now cancels the call instead of running it; the panel
	// carries such an approval out another way (see approveOrphan).
	orphaned bool
}

// Panel is the agent panel of one editor link.
type Panel struct {
	opts   Options
	plugin rpc.Plugin // calls on opts.Conn
	hc     *http.Client
	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	ag *agent.Agent
	// line carries the conversation's messages to ag and can stop what its
	// turn runs.
	line      *agent.Line
	srv       *launch.Server
	adopted   int             // pid of a server started by an earlier sidecar, ours to stop
	hold      *launch.Holding // keeps the adopted server from ending with its starter
	starting  bool
	taskID    string
	contextID string
	queue     []*a2a.Message
	running   bool
	// ended: the turn being streamed has had its final update; the stream
	// is closing, and a new prompt is queued behind it, not refused.
	ended     bool
	cancelRun context.CancelFunc
	// canceling: agent/cancel is stopping the turn; the aborted turn's own
	// end is not reported as the turn ending.
	canceling bool
	pending   map[string]*pending
	lastTool  map[string]string // callId -> last status sent
	// fixes are approved edits whose file gets its final newline back once
	// the server has written its trimmed text.
	fixes    map[string]edits.Fix
	nextDiff uint64
	closed   bool
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
	return &Panel{opts: opts, plugin: rpc.Plugin{Caller: opts.Conn}, hc: agent.NewHTTPClient(), base: base, stop: stop,
		pending: map[string]*pending{}, lastTool: map[string]string{}, fixes: map[string]edits.Fix{}, nextDiff: diffBase}
}

// Close stops every turn and the server this sidecar started (or adopted),
// and waits for the panel's goroutines. It never fails; the error is for
// io.Closer, which the editor link calls when it ends.
func (p *Panel) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	srv, adopted, hold, ag, line := p.srv, p.adopted, p.hold, p.ag, p.line
	p.srv, p.adopted, p.hold, p.ag, p.line = nil, 0, nil, nil, nil
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
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
	return nil
}

func (p *Panel) emit(ev Event) {
	if err := p.plugin.AgentEvent(ev); err != nil {
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

func (p *Panel) status() protocol.AgentStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := protocol.AgentStatus{Attached: p.ag != nil, Starting: p.starting, TaskID: p.taskID, ContextID: p.contextID, Running: p.running, Pending: []string{}}
	if p.ag != nil {
		st.URL = p.ag.URL
	}
	for id := range p.pending {
		st.Pending = append(st.Pending, id)
	}
	return st
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
