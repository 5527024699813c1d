package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// A Line is a client's hold on one task of the agent: it sends the task's
// messages and can stop what the task runs.
//
// Gemini CLI's A2A server (0.25) runs a turn (the model's replies and every
// tool it calls, approved ones included) under the HTTP connection whose
// message started the turn, and aborts all of it, killing a shell command
// that runs, when that connection closes. tasks/cancel only cancels tool
// calls still waiting for approval. And the server closes a connection left
// idle for 5 s (Node's keep-alive timeout), after which nothing can stop the
// turn any more.
//
// So a Line sends a message that starts a turn (one with text) on a
// connection of its own, keeps that connection busy while the turn runs (a
// small request every keepAliveEvery), lets it go when the turn has ended,
// and closes it to stop the turn (Cancel). Answers to the turn's tool calls
// go on the agent's shared client: the server takes them into the turn that
// already runs.
type Line struct {
	ag *Agent

	mu       sync.Mutex
	turn     *turnConn            // the running turn's connection, if any
	awaiting map[string]bool      // tool calls waiting for approval
	running  map[string]*ToolCall // tool calls executing
	ended    bool                 // the last stream ended the turn
	closed   bool
}

// NewLine returns a Line for one task (or a series of tasks, one at a time)
// on the agent. Close releases it.
func (a *Agent) NewLine() *Line {
	return &Line{ag: a, awaiting: map[string]bool{}, running: map[string]*ToolCall{}}
}

// ErrLineClosed is returned by Send on a closed Line.
var ErrLineClosed = errors.New("the agent's line is closed")

// keepAliveEvery is how often a turn's connection is used while the turn
// waits (on the user, or on a tool), well within the server's 5 s.
var keepAliveEvery = 2 * time.Second

// startsTurn reports whether msg starts a turn of the agent (it says
// something) rather than answering a tool call of the turn that runs.
func startsTurn(msg *a2a.Message) bool {
	for _, p := range msg.Parts {
		switch p.(type) {
		case a2a.TextPart, *a2a.TextPart:
			return true
		}
	}
	return false
}

// Send sends msg (message/stream) and yields the agent's updates, parsed,
// until the agent ends the turn (a final event), the stream breaks, or ctx
// ends. A message with text starts a new turn on a connection of its own;
// the previous turn's connection is let go.
func (l *Line) Send(ctx context.Context, msg *a2a.Message) iter.Seq2[Update, error] {
	return func(yield func(Update, error) bool) {
		rpc := l.ag.rpc
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			yield(Update{}, ErrLineClosed)
			return
		}
		var old *turnConn
		if startsTurn(msg) {
			old = l.turn
			l.turn = newTurnConn(l.ag)
			l.awaiting, l.running = map[string]bool{}, map[string]*ToolCall{}
			rpc = l.turn.rpc
		}
		l.ended = false
		l.mu.Unlock()
		if old != nil {
			old.close()
		}
		for ev, err := range rpc.stream(ctx, "message/stream", &a2a.MessageSendParams{Message: msg}) {
			if err != nil {
				yield(Update{}, l.ag.wrap("message/stream", err))
				break
			}
			u := Parse(ev)
			l.observe(u)
			if !yield(u, nil) {
				break
			}
		}
		l.mu.Lock()
		var done *turnConn
		if l.ended {
			done, l.turn = l.turn, nil
		}
		l.mu.Unlock()
		if done != nil {
			done.close()
		}
	}
}

// observe keeps track of the turn's tool calls.
func (l *Line) observe(u Update) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tc := u.Tool; tc != nil && tc.CallID != "" {
		switch tc.Status {
		case "awaiting_approval":
			l.awaiting[tc.CallID] = true
		case "executing":
			delete(l.awaiting, tc.CallID)
			l.running[tc.CallID] = tc
		case "success", "error", "cancelled":
			delete(l.awaiting, tc.CallID)
			delete(l.running, tc.CallID)
		default: // validating, scheduled
			delete(l.awaiting, tc.CallID)
		}
	}
	if u.Final && (len(l.awaiting) == 0 || u.State == a2a.TaskStateCanceled || u.State == a2a.TaskStateFailed) {
		l.ended = true
		l.running = map[string]*ToolCall{}
	}
}

// Stop is what Cancel did about the tools the task was running.
type Stop struct {
	// Stopped are the tool calls that were running and that the server was
	// made to abort (their turn's connection was closed).
	Stopped []*ToolCall
	// StillRunning are the ones it could not be made to abort: the
	// connection that started their turn was already gone.
	StillRunning []*ToolCall
	// Err is why tasks/cancel failed, if it did.
	Err error
}

// Note says in a sentence what Cancel stopped and what it could not, or ""
// when no tool was running.
func (s Stop) Note() string {
	var parts []string
	if len(s.Stopped) > 0 {
		parts = append(parts, "stopped "+describeCalls(s.Stopped))
	}
	if len(s.StillRunning) > 0 {
		parts = append(parts, describeCalls(s.StillRunning)+" is still running and cannot be stopped: the agent's server stops a turn's tools only through the connection that started the turn, and that connection is gone; it may still finish and change files")
	}
	return strings.Join(parts, "; ")
}

// DescribeCall names a tool call for the user: a shell command by its
// command, a file tool by its file, anything else by its name.
func DescribeCall(tc *ToolCall) string {
	if c, ok := tc.Args["command"].(string); ok && c != "" {
		return "`" + c + "`"
	}
	if tc.Confirmation != nil && tc.Confirmation.Command != "" {
		return "`" + tc.Confirmation.Command + "`"
	}
	if p, ok := tc.Args["file_path"].(string); ok && p != "" {
		return fmt.Sprintf("%s %s", tc.Name, p)
	}
	return tc.Name
}

func describeCalls(calls []*ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = DescribeCall(c)
	}
	return strings.Join(names, ", ")
}

// Cancel stops the task: it closes the connection of the running turn, so
// that the server aborts what the turn runs (a shell command is killed),
// then cancels the task on the agent (tasks/cancel, which cancels the tool
// calls waiting for approval and ends the task). taskID may be empty when
// the agent never named the task. Cancel reports which running tools were
// stopped and which still run.
func (l *Line) Cancel(ctx context.Context, taskID string) Stop {
	l.mu.Lock()
	turn := l.turn
	l.turn = nil
	running := make([]*ToolCall, 0, len(l.running))
	for _, tc := range l.running {
		running = append(running, tc)
	}
	l.awaiting, l.running = map[string]bool{}, map[string]*ToolCall{}
	l.mu.Unlock()
	held := turn != nil && turn.open()
	if turn != nil {
		turn.close()
	}
	var st Stop
	if len(running) > 0 {
		if held {
			st.Stopped = running
		} else {
			st.StillRunning = running
		}
	}
	if taskID != "" {
		if _, err := l.ag.Cancel(ctx, taskID); err != nil {
			st.Err = err
		}
	}
	return st
}

// Holding reports whether the line still holds the connection of a turn
// that has not ended, that is whether Cancel can stop what the turn runs.
func (l *Line) Holding() bool {
	l.mu.Lock()
	turn := l.turn
	l.mu.Unlock()
	return turn != nil && turn.open()
}

// Close lets go of the line: a turn still running on it is aborted by the
// server. Send fails afterwards.
func (l *Line) Close() {
	l.mu.Lock()
	turn := l.turn
	l.turn, l.closed = nil, true
	l.mu.Unlock()
	if turn != nil {
		turn.close()
	}
}

// turnConn is the one connection of a turn: an HTTP client that dials once
// and never again (a second connection would not be the turn's), kept busy
// while it is open.
type turnConn struct {
	rpc    *rpcClient
	tr     *http.Transport
	ctx    context.Context // ends when the connection is let go
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	dialed bool
	conn   *watchedConn
	once   sync.Once
}

var errTurnGone = errors.New("the turn's connection is gone")

func newTurnConn(a *Agent) *turnConn {
	tc := &turnConn{}
	tc.ctx, tc.cancel = context.WithCancel(context.Background())
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tc.tr = &http.Transport{
		Proxy:                 nil,
		MaxConnsPerHost:       1,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       0, // closed by the Line, never by the pool
		ResponseHeaderTimeout: 2 * time.Minute,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			tc.mu.Lock()
			if tc.dialed {
				tc.mu.Unlock()
				return nil, errTurnGone
			}
			tc.dialed = true
			tc.mu.Unlock()
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			w := &watchedConn{Conn: c}
			tc.mu.Lock()
			tc.conn = w
			tc.mu.Unlock()
			return w, nil
		},
	}
	tc.rpc = &rpcClient{url: a.rpc.url, hc: &http.Client{Transport: tc.tr}, header: a.rpc.header}
	tc.wg.Add(1)
	go tc.keepBusy(a.URL + CardPath)
	return tc
}

// keepBusy uses the connection every keepAliveEvery while it is open and
// idle (a request waits while the turn streams on it), so that the server
// never closes it as idle. No request is given a deadline: one cut off while
// it is on the connection would close the connection, and with it the turn.
func (tc *turnConn) keepBusy(cardURL string) {
	defer tc.wg.Done()
	ctx := tc.ctx
	t := time.NewTicker(keepAliveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tc.mu.Lock()
		dialed, conn := tc.dialed, tc.conn
		tc.mu.Unlock()
		if !dialed {
			continue
		}
		if conn == nil || conn.isClosed() {
			return
		}
		req, err := tc.rpc.request(ctx, http.MethodGet, cardURL, nil)
		if err != nil {
			return
		}
		resp, err := tc.rpc.hc.Do(req)
		if err != nil {
			if errors.Is(err, errTurnGone) || ctx.Err() != nil {
				return
			}
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
	}
}

// open reports whether the turn's connection was made and is still open.
func (tc *turnConn) open() bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.conn != nil && !tc.conn.isClosed()
}

// close closes the connection (the server then aborts the turn, if it still
// runs) and stops keeping it busy.
func (tc *turnConn) close() {
	tc.once.Do(func() {
		tc.cancel()
		tc.mu.Lock()
		tc.dialed = true // no connection after this one
		conn := tc.conn
		tc.mu.Unlock()
		if conn != nil {
			_ = conn.Close()
		}
		tc.tr.CloseIdleConnections()
		tc.wg.Wait()
	})
}

// watchedConn is a connection that knows when it has been closed, by either
// side.
type watchedConn struct {
	net.Conn
	mu     sync.Mutex
	closed bool
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			c.mu.Lock()
			c.closed = true
			c.mu.Unlock()
		}
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.Conn.Close()
}

func (c *watchedConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
