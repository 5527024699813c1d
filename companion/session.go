package companion

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notification methods the CLI listens for.
const (
	methodContextUpdate = "ide/contextUpdate"
	methodDiffAccepted  = "ide/diffAccepted"
	methodDiffRejected  = "ide/diffRejected"
)

// note is one notification waiting to be written to a session.
type note struct {
	method string
	params json.RawMessage
}

// session is one connected CLI. Notifications reach it through its outbox,
// written by one goroutine per session so that a slow CLI never holds up the
// others and each CLI sees notifications in the order they were sent.
type session struct {
	id        string
	transport *mcp.StreamableServerTransport
	conn      mcp.Connection
	ss        *mcp.ServerSession

	mu      sync.Mutex
	ready   bool   // initialize answered
	context *note  // latest context update not yet written
	queue   []note // decisions not yet written, in order
	streams int    // open GET streams
	grace   *time.Timer

	wake     chan struct{} // something was queued
	streamUp chan struct{} // a GET stream opened
}

func newSession(id string, t *mcp.StreamableServerTransport) *session {
	return &session{
		id:        id,
		transport: t,
		wake:      make(chan struct{}, 1),
		streamUp:  make(chan struct{}, 1),
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// pushContext replaces any context update still waiting: only the newest
// state matters to the CLI.
func (s *session) pushContext(params json.RawMessage) {
	s.mu.Lock()
	s.context = &note{method: methodContextUpdate, params: params}
	s.mu.Unlock()
	signal(s.wake)
}

// push queues a notification that must be delivered (a diff decision).
func (s *session) push(n note) {
	s.mu.Lock()
	s.queue = append(s.queue, n)
	s.mu.Unlock()
	signal(s.wake)
}

// next returns the next notification to write: decisions first, then the
// latest context.
func (s *session) next() (note, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		n := s.queue[0]
		s.queue = s.queue[1:]
		return n, true
	}
	if s.context != nil {
		n := *s.context
		s.context = nil
		return n, true
	}
	return note{}, false
}

// putBack returns an undelivered notification to the front of the line,
// unless a newer context update has replaced it meanwhile.
func (s *session) putBack(n note) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n.method == methodContextUpdate {
		if s.context == nil {
			s.context = &n
		}
		return
	}
	s.queue = append([]note{n}, s.queue...)
}

// run writes queued notifications until ctx ends. A write fails while the
// CLI has no GET stream open (the SDK can only deliver notifications there);
// the notification then waits for the next stream.
func (s *session) run(ctx context.Context) {
	for {
		n, ok := s.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				continue
			}
		}
		// A detached context routes the message to the standalone SSE
		// stream, which is where the CLI listens for notifications.
		err := s.conn.Write(context.Background(), &jsonrpc.Request{Method: n.method, Params: n.params})
		if err == nil {
			continue
		}
		s.putBack(n)
		select {
		case <-ctx.Done():
			return
		case <-s.streamUp:
		}
	}
}

func (s *session) streamOpened() {
	s.mu.Lock()
	s.streams++
	if s.grace != nil {
		s.grace.Stop()
		s.grace = nil
	}
	s.mu.Unlock()
	signal(s.streamUp)
}

// streamClosed notes that a GET stream ended. With none left, the session
// ends unless the CLI opens a new one within grace.
func (s *session) streamClosed(grace time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams--
	if s.streams > 0 || s.grace != nil {
		return
	}
	s.grace = time.AfterFunc(grace, func() {
		s.mu.Lock()
		gone := s.streams == 0
		s.mu.Unlock()
		if gone {
			_ = s.ss.Close()
		}
	})
}

func (s *session) stopGrace() {
	s.mu.Lock()
	if s.grace != nil {
		s.grace.Stop()
		s.grace = nil
	}
	s.mu.Unlock()
}

func (s *session) isReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// capture is an mcp.Transport that hands the SDK a streamable server
// transport and keeps the connection it makes, so the companion can write
// its own notifications (ide/*) to it: the SDK's ServerSession has no public
// way to send custom methods.
type capture struct {
	inner *mcp.StreamableServerTransport
	conn  mcp.Connection
}

// Connect implements mcp.Transport.
func (c *capture) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.inner.Connect(ctx)
	c.conn = conn
	return conn, err
}

// streamWatch tells when the SDK has started an SSE stream on a GET: it
// writes the 200 header while it sets the stream up, and the stream takes
// writes from then on.
type streamWatch struct {
	http.ResponseWriter
	once   sync.Once
	onOpen func()
}

func (w *streamWatch) WriteHeader(status int) {
	if status == http.StatusOK {
		w.once.Do(w.onOpen)
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush lets the SDK flush the event stream through the wrapper.
func (w *streamWatch) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the real writer.
func (w *streamWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }
