package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

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
	// fate follows a decision until the CLI has handled it; nil for
	// context updates.
	fate *fate
}

// fate follows one diff decision to the session of the CLI that made the
// proposal, so that it is not lost when that session ends before the CLI
// has handled it (a CLI that left without a word still counts as connected
// for its grace period): lost then tells the user.
type fate struct {
	mu        sync.Mutex
	delivered bool
	holders   int
	// lost, if set, is called once when the decision reached no CLI.
	lost func()
}

func (f *fate) hold() {
	f.mu.Lock()
	f.holders++
	f.mu.Unlock()
}

func (f *fate) written() {
	f.mu.Lock()
	f.holders--
	f.delivered = true
	f.mu.Unlock()
}

// release drops one holder's copy unwritten and reports whether the
// decision is now lost: written by no session and held by none.
func (f *fate) release() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holders--
	return f.holders == 0 && !f.delivered
}

// session is one connected CLI. Notifications reach it through its outbox,
// written by one goroutine per session so that a slow CLI never holds up the
// others and each CLI sees notifications in the order they were sent.
type session struct {
	id        string
	transport *mcp.StreamableServerTransport
	post      http.Handler // the transport behind the intake, for POSTs
	conn      mcp.Connection
	ss        *mcp.ServerSession

	mu      sync.Mutex
	ready   bool   // initialize answered
	context *note  // latest context update not yet written
	queue   []note // decisions not yet written, in order
	streams int    // open GET streams
	grace   *time.Timer
	ended   bool       // removed from the server; decisions go to orphan
	orphan  func(note) // takes a decision this session can no longer write
	// unconfirm cancels the ping that confirms a decision, so that closing
	// the session (which waits for outgoing calls) is not held up by a CLI
	// that no longer answers.
	unconfirm context.CancelFunc

	wake     chan struct{} // something was queued
	streamUp chan struct{} // a GET stream opened
}

func newSession(id string, t *mcp.StreamableServerTransport, orphan func(note)) *session {
	return &session{
		id:        id,
		transport: t,
		orphan:    orphan,
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
	if n.fate != nil {
		n.fate.hold()
	}
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
	if n.method == methodContextUpdate {
		if s.context == nil {
			s.context = &n
		}
		s.mu.Unlock()
		return
	}
	if s.ended {
		s.mu.Unlock()
		s.abandon(n)
		return
	}
	s.queue = append([]note{n}, s.queue...)
	s.mu.Unlock()
}

// end marks the session as removed and hands every decision it still holds
// to orphan.
func (s *session) end() {
	s.mu.Lock()
	s.ended = true
	queue := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, n := range queue {
		s.abandon(n)
	}
}

func (s *session) abandon(n note) {
	if n.fate != nil && n.fate.release() {
		if n.fate.lost != nil {
			n.fate.lost()
			return
		}
		s.orphan(n)
	}
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
		err := writeNote(s.conn, n.method, n.params)
		if err == nil && n.fate != nil {
			err = s.confirm(ctx)
		}
		if err == nil {
			if n.fate != nil {
				n.fate.written()
			}
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

// decisionAckWait is how long one ping that confirms a decision may take
// before it is sent again.
const decisionAckWait = 10 * time.Second

// confirm returns once the CLI has read everything written to its event
// stream so far: a decision written into the socket is not yet delivered (a
// CLI that stopped reading and then died never saw it). The CLI answers a
// ping only after handling the events before it on the same stream. A CLI
// that is alive but slow is asked again; an error means the stream is gone
// (the decision is sent again on the next one; the CLI ignores a repeat) or
// the session ended (the decision did not reach this CLI).
func (s *session) confirm(ctx context.Context) error {
	if s.ss == nil {
		return nil
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, decisionAckWait)
		s.mu.Lock()
		s.unconfirm = cancel
		s.mu.Unlock()
		err := s.ss.Ping(pctx, nil)
		s.mu.Lock()
		s.unconfirm = nil
		s.mu.Unlock()
		if errors.Is(pctx.Err(), context.Canceled) && ctx.Err() == nil {
			cancel()
			return fmt.Errorf("session closing before the CLI confirmed: %w", err)
		}
		cancel()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("session ended before the CLI confirmed: %w", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded):
			continue // alive but slow: ask again
		default:
			return fmt.Errorf("confirm delivery: %w", err)
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
	s.startGraceLocked(grace)
}

// expectStream starts the grace period of a session that has just been
// initialized: a CLI that never opens its event stream can receive nothing
// and is as gone as one that closed it.
func (s *session) expectStream(grace time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startGraceLocked(grace)
}

func (s *session) startGraceLocked(grace time.Duration) {
	if s.streams > 0 || s.grace != nil {
		return
	}
	s.grace = time.AfterFunc(grace, func() {
		s.mu.Lock()
		gone := s.streams == 0
		s.mu.Unlock()
		if gone {
			s.abortConfirm()
			_ = s.ss.Close()
		}
	})
}

// abortConfirm gives up waiting for the CLI to confirm a decision: the
// session is closing.
func (s *session) abortConfirm() {
	s.mu.Lock()
	if s.unconfirm != nil {
		s.unconfirm()
	}
	s.mu.Unlock()
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
