// Package connlimit caps the connections an HTTP server holds open without
// letting idle ones lock out the clients that have work to do.
//
// A plain limiting listener stops accepting at the cap: connections past it
// wait in the kernel's accept queue, where a local flood of idle ones keeps
// a real client waiting for as long as the server lets each idle one live.
// This Listener accepts at once instead. At the cap it closes an idle
// connection to make room: first the one that has waited longest without
// sending a request, else the one kept alive longest between requests. A
// connection reading or serving a request (an event stream, a tool call)
// is never closed; when every connection is busy, the new one is closed at
// once. Either way no more than the cap are held, and nothing waits in the
// kernel's queue.
package connlimit

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// Listener is a net.Listener that holds at most a fixed number of
// connections open. Set its ConnState as the http.Server's ConnState: that
// is how it knows which connections are busy.
type Listener struct {
	net.Listener
	max  int
	full func(Full)

	mu   sync.Mutex
	open int
	// fresh holds the connections that have not sent a request yet, and
	// kept those between requests: the ones that may be closed to make
	// room, each oldest first. A server that closes refused requests'
	// connections keeps alive only its real clients', so those go last.
	fresh, kept *list.List
}

// Full says what the Listener did with a connection that came at the cap.
type Full struct {
	// Evicted is true when an idle connection was closed to make room for
	// the new one, false when the new one was closed (every connection
	// was busy).
	Evicted bool
}

// New returns a Listener that holds at most limit of inner's connections
// (limit < 1 counts as 1). full, if not nil, is called on the accepting
// goroutine each time a connection comes at the cap; it must not block.
func New(inner net.Listener, limit int, full func(Full)) *Listener {
	return &Listener{Listener: inner, max: max(limit, 1), full: full, fresh: list.New(), kept: list.New()}
}

// conn is an accepted connection the Listener counts until it is closed.
type conn struct {
	net.Conn
	l *Listener
	// The fields below are guarded by l.mu.
	counted bool
	queue   *list.List    // l.fresh, l.kept, or nil while busy
	elem    *list.Element // in queue
}

// Accept waits for and returns the next connection, making room for it
// when the cap is reached.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		inner, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c := &conn{Conn: inner, l: l}
		var evict *conn
		l.mu.Lock()
		if l.open >= l.max {
			evict = l.oldestIdle()
			if evict != nil {
				l.uncount(evict)
			}
		}
		admit := l.open < l.max
		if admit {
			l.open++
			c.counted = true
			l.enqueue(c, l.fresh)
		}
		l.mu.Unlock()
		if evict != nil {
			_ = evict.Conn.Close()
		}
		if (!admit || evict != nil) && l.full != nil {
			l.full(Full{Evicted: evict != nil})
		}
		if !admit {
			_ = inner.Close()
			continue
		}
		return c, nil
	}
}

// ConnState is meant for http.Server.ConnState: a connection that is
// reading or serving a request is busy and kept; a new or idle one may be
// closed to make room; a closed or hijacked one no longer counts.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.counted {
		return
	}
	switch state {
	case http.StateNew:
		// Queued as fresh when accepted.
	case http.StateIdle:
		l.enqueue(c, l.kept)
	case http.StateActive:
		l.enqueue(c, nil)
	case http.StateHijacked, http.StateClosed:
		l.uncount(c)
	}
}

// Open is how many connections the Listener holds now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// oldestIdle is the connection to close to make room, or nil when every
// connection is busy; l.mu is held.
func (l *Listener) oldestIdle() *conn {
	for _, q := range []*list.List{l.fresh, l.kept} {
		if e := q.Front(); e != nil {
			return e.Value.(*conn)
		}
	}
	return nil
}

// enqueue moves c to the back of q (nil: out of every queue); l.mu is
// held.
func (l *Listener) enqueue(c *conn, q *list.List) {
	if c.queue != nil {
		c.queue.Remove(c.elem)
		c.queue, c.elem = nil, nil
	}
	if q != nil {
		c.queue, c.elem = q, q.PushBack(c)
	}
}

// uncount stops counting c; l.mu is held.
func (l *Listener) uncount(c *conn) {
	if !c.counted {
		return
	}
	c.counted = false
	l.open--
	l.enqueue(c, nil)
}

// CloseWrite shuts down the writing side of a TCP connection, as the HTTP
// server does before closing one whose request it did not read to the end
// (so that the client reads the answer rather than a reset).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection and stops counting it.
func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.uncount(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
