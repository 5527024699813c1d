package link

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxLine is the longest line a Conn accepts unless told otherwise:
// big enough for the diff of a very large file.
const DefaultMaxLine = 256 << 20

// DefaultWriteTimeout is how long a write to the peer may make no progress
// before it fails with ErrStalled, unless told otherwise.
const DefaultWriteTimeout = 5 * time.Second

// ErrClosed is returned by Call and Notify once the connection has ended.
var ErrClosed = errors.New("editor link closed")

// ErrStalled is returned by writes while the peer has stopped reading: a
// line made no progress for the write timeout. Later writes fail at once
// until the stuck line gets through.
var ErrStalled = errors.New("the editor is not reading the editor link")

// Handler receives what the peer sends. Both methods are called from the
// reading goroutine, one message at a time and in arrival order, so a handler
// sees events in the order the editor sent them. They must not block for
// long, and must not Call the peer (the answer could never be read).
type Handler interface {
	// HandleRequest answers a request. A returned *Error is sent as is; any
	// other error is sent as CodeInternalError.
	HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error)
	// HandleNotification takes a notification; there is no answer.
	HandleNotification(ctx context.Context, method string, params json.RawMessage)
}

// Final wraps a request's result to say it is the last thing this Conn
// does: the result is written, then Serve returns nil. A shutdown request
// answers with it, so the reply is on the wire before the process exits.
type Final struct {
	Result any
}

// ProblemFunc is told about every line the Conn could not use, so the owner
// can log it. It must not block.
type ProblemFunc func(err error)

// Conn is one editor link. Create it with New and run it with Serve.
type Conn struct {
	r       io.Reader
	w       io.Writer
	h       Handler
	maxLine int
	framing Framing
	problem ProblemFunc
	paced   *pacedReader // see WithBatching; nil without
	batch   func(method string) bool
	// lastMethod is the method name of the last line decodeFast took,
	// reused while lines name the same method. Reading goroutine only.
	lastMethod *string

	wmu          sync.Mutex  // serialises whole lines on w
	out          *jsonWriter // the buffer lines are written through, under wmu
	writeTimeout time.Duration
	lines        chan *outLine // to the writer goroutine, while Serve runs
	serving      atomic.Bool   // the writer goroutine runs
	busy         atomic.Bool   // the writer is writing a line
	lastProgress atomic.Int64  // when the writer last got bytes out (Unix ns)
	quit         chan struct{} // closed when Serve ends

	mu      sync.Mutex
	nextID  int64
	pending map[int64]pendingCall
	closed  bool
}

// Option adjusts a Conn.
type Option func(*Conn)

// WithMaxLine sets the longest accepted line in bytes.
func WithMaxLine(n int) Option { return func(c *Conn) { c.maxLine = n } }

// WithProblems sets the function told about unusable lines.
func WithProblems(f ProblemFunc) Option { return func(c *Conn) { c.problem = f } }

// WithWriteTimeout sets how long a write may make no progress before it
// fails with ErrStalled (DefaultWriteTimeout unless set): shorter to find a
// stalled peer quickly, longer for a peer that may pause to take in a huge
// line on a loaded machine, as a test's stand-in editor feeding a race-built
// sidecar does.
func WithWriteTimeout(d time.Duration) Option { return func(c *Conn) { c.writeTimeout = d } }

// WithBatching makes the Conn read a fast stream of the notifications
// batch says yes to (an editor's cursor reports) in batches: after one of
// them, when nothing more is buffered and the previous read was less than
// interval ago, the next read waits until interval has passed since it.
// The lines that came meanwhile are then read with one wake-up of the
// process instead of one each. A message after such a notification may so
// be read up to interval later; one after a pause is read at once.
func WithBatching(interval time.Duration, batch func(method string) bool) Option {
	return func(c *Conn) {
		if interval > 0 && batch != nil {
			c.paced, c.batch = &pacedReader{interval: interval}, batch
		}
	}
}

// New returns a Conn that reads messages from r, writes to w and hands what
// it reads to h.
func New(r io.Reader, w io.Writer, h Handler, opts ...Option) *Conn {
	c := &Conn{
		r:       r,
		w:       w,
		h:       h,
		maxLine: DefaultMaxLine,
		problem: func(error) {},
		pending: make(map[int64]pendingCall),

		writeTimeout: DefaultWriteTimeout,
		lines:        make(chan *outLine),
		quit:         make(chan struct{}),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Serve reads until the reader ends (io.EOF gives a nil error), the reader
// fails, or ctx is done. It then fails every outstanding Call with ErrClosed.
// Cancelling ctx does not interrupt a blocked Read; close the reader for that.
//
// While Serve runs, lines go out through a writer goroutine, so that no
// write waits past its deadline for a peer that stopped reading. A line the
// peer never takes keeps that goroutine in its Write until the peer reads
// or closes its end.
func (c *Conn) Serve(ctx context.Context) error {
	defer c.shutdown()
	c.serving.Store(true)
	go c.writer()
	r := c.r
	if c.paced != nil {
		c.paced.r = r
		r = c.paced
	}
	lr := newMessageReader(r, c.framing, c.maxLine)
	what := "line"
	if c.framing == LSP {
		what = "message"
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lr.next()
		if errors.Is(err, errTooLong) {
			c.problem(fmt.Errorf("%s over %d bytes skipped", what, c.maxLine))
			c.writeError(json.RawMessage("null"), Errorf(CodeInvalidRequest, "%s longer than %d bytes", what, c.maxLine))
			continue
		}
		var bh *errBadHeader
		if errors.As(err, &bh) {
			c.problem(bh)
			c.writeError(json.RawMessage("null"), Errorf(CodeParseError, "%v", bh))
			continue
		}
		if len(line) > 0 && c.dispatch(ctx, line) {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read editor link: %w", err)
		}
	}
}

func (c *Conn) shutdown() {
	c.mu.Lock()
	c.closed = true
	pending := c.pending
	c.pending = make(map[int64]pendingCall)
	c.mu.Unlock()
	for _, p := range pending {
		close(p.ch)
	}
	close(c.quit)
}

// dispatch handles one line and reports whether the Conn must stop.
func (c *Conn) dispatch(ctx context.Context, line []byte) (stop bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	var m wireMessage
	if !c.decodeFast(line, &m) {
		m = wireMessage{}
		if err := json.Unmarshal(line, &m); err != nil {
			c.problem(fmt.Errorf("malformed line: %w", err))
			code := CodeParseError
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) || (json.Valid(line) && line[0] != '{') {
				code = CodeInvalidRequest
			}
			c.writeError(json.RawMessage("null"), Errorf(code, "cannot use line: %v", err))
			return false
		}
	}
	k, perr := m.classify()
	m.Params = emptyParams(m.Params)
	if c.paced != nil {
		c.paced.armed = k == kindNotification && c.batch(*m.Method)
	}
	switch k {
	case kindInvalid:
		c.problem(fmt.Errorf("invalid message: %s", perr.Message))
		id := json.RawMessage("null")
		if m.Method != nil && validID(m.ID) {
			id = m.ID
		}
		c.writeError(id, perr)
	case kindNotification:
		c.notify(ctx, *m.Method, m.Params)
	case kindRequest:
		result, err := c.request(ctx, *m.Method, m.Params)
		if err != nil {
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				rpcErr = Errorf(CodeInternalError, "%v", err)
			}
			c.writeError(m.ID, rpcErr)
			return false
		}
		if f, ok := result.(Final); ok {
			result, stop = f.Result, true
		}
		data, merr := json.Marshal(result)
		if merr != nil {
			c.writeError(m.ID, Errorf(CodeInternalError, "encode result: %v", merr))
			return stop
		}
		if err := c.writeLine(ctx, outResponse{JSONRPC: Version, ID: m.ID, Result: data}, true); err != nil {
			c.problem(err)
		}
	case kindResponse:
		c.deliver(&m)
	}
	return stop
}

// request runs the handler for one request; a panic in it answers that
// request with an internal error instead of ending the process.
func (c *Conn) request(ctx context.Context, method string, params json.RawMessage) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.problem(fmt.Errorf("internal error handling %s: %v", method, v))
			result, err = nil, Errorf(CodeInternalError, "internal error handling %s: %v", method, v)
		}
	}()
	return c.h.HandleRequest(ctx, method, params)
}

// notify runs the handler for one notification; a panic in it is reported
// as a problem and the link goes on.
func (c *Conn) notify(ctx context.Context, method string, params json.RawMessage) {
	defer func() {
		if v := recover(); v != nil {
			c.problem(fmt.Errorf("internal error handling %s: %v", method, v))
		}
	}()
	c.h.HandleNotification(ctx, method, params)
}

// pendingCall is a request waiting for its answer.
type pendingCall struct {
	ch   chan *wireMessage // buffered: deliver never waits on it
	then func()            // see CallThen; nil for Call
}

func (c *Conn) deliver(m *wireMessage) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	p, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if err != nil || !ok {
		c.problem(fmt.Errorf("response to unknown request id %s ignored", m.ID))
		return
	}
	if p.then != nil && m.Error == nil {
		c.runThen(m, p.then)
	}
	p.ch <- m
}

// runThen runs a CallThen hook; a panic in it is reported as a problem and
// the link goes on.
func (c *Conn) runThen(m *wireMessage, then func()) {
	defer func() {
		if v := recover(); v != nil {
			c.problem(fmt.Errorf("internal error after the answer to request %s: %v", m.ID, v))
		}
	}()
	then()
}

func (c *Conn) writeError(id json.RawMessage, e *Error) {
	if err := c.writeLine(context.Background(), outResponse{JSONRPC: Version, ID: id, Error: e}, true); err != nil {
		c.problem(err)
	}
}

// outLine is one message on its way to the writer goroutine.
type outLine struct {
	msg  *message
	done chan error // buffered: the writer never waits on it
}

// writer writes lines handed to it until Serve ends, counting progress so
// that waiting writers can tell a slow peer from one that stopped reading.
func (c *Conn) writer() {
	for {
		select {
		case l := <-c.lines:
			c.wmu.Lock()
			c.lastProgress.Store(time.Now().UnixNano())
			c.busy.Store(true)
			err := c.writeMessage(l.msg)
			c.busy.Store(false)
			c.wmu.Unlock()
			l.done <- err
		case <-c.quit:
			return
		}
	}
}

// stalled reports whether the writer is stuck: in the middle of a line that
// has made no progress for the write timeout.
func (c *Conn) stalled() bool {
	return c.busy.Load() && time.Since(time.Unix(0, c.lastProgress.Load())) >= c.writeTimeout
}

// writeAll writes data in chunks, noting the time of each in
// c.lastProgress.
func (c *Conn) writeAll(data []byte) error {
	const chunk = 64 << 10
	for len(data) > 0 {
		n := min(len(data), chunk)
		_, err := c.w.Write(data[:n])
		c.lastProgress.Store(time.Now().UnixNano())
		if err != nil {
			return fmt.Errorf("write editor link: %w", err)
		}
		data = data[n:]
	}
	return nil
}

// progressWriter writes to the peer through writeAll.
type progressWriter struct{ c *Conn }

func (p progressWriter) Write(b []byte) (int, error) {
	if err := p.c.writeAll(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// writeMessage writes one framed message through the Conn's reusable
// buffer: a small message in one write, a large one in pieces of the
// buffer's size, its large strings escaped on the way (ObjectStreamer). The
// LSP framing first counts the body's length for its header. The caller
// holds wmu.
func (c *Conn) writeMessage(m *message) error {
	if c.out == nil {
		c.out = newJSONWriter(progressWriter{c})
	}
	j := c.out
	j.err, j.n = nil, 0
	if c.framing == LSP {
		n, err := m.size()
		if err != nil {
			return err
		}
		j.raw("Content-Length: " + strconv.FormatInt(n, 10) + "\r\n\r\n")
		m.writeTo(j)
	} else {
		m.writeTo(j)
		j.raw("\n")
	}
	return j.flush()
}

// writeLine writes v as one line, giving up when ctx ends or the peer makes
// no progress reading for the write timeout. A line is written whole or
// not at all, so lines never interleave; a line given up on after it
// started goes out whole once the peer reads again. The encoder does not
// escape <, > and & (editors read the JSON, not a browser), which keeps big
// proposals small.
//
// A request or notification of ours fails at once while the writer is
// stalled; a reply (reply true) waits its turn all the same, since the peer
// that just sent the request may be reading again.
func (c *Conn) writeLine(ctx context.Context, v any, reply bool) error {
	m, err := encodeMessage(v)
	if err != nil {
		return err
	}
	if !c.serving.Load() {
		// Before Serve: no writer goroutine yet; write directly.
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.writeMessage(m)
	}
	if !reply && c.stalled() {
		return ErrStalled
	}
	l := &outLine{msg: m, done: make(chan error, 1)}
	timer := time.NewTimer(c.writeTimeout)
	defer timer.Stop()
	send := c.lines
	for {
		select {
		case send <- l:
			send = nil
		case err := <-l.done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("write editor link: %w", ctx.Err())
		case <-c.quit:
			if send != nil {
				return ErrClosed
			}
			return <-l.done
		case <-timer.C:
			if c.stalled() {
				return ErrStalled
			}
			timer.Reset(c.writeTimeout / 4)
		}
	}
}

// Notify sends a notification to the peer.
func (c *Conn) Notify(method string, params any) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.writeLine(context.Background(), outRequest{JSONRPC: Version, Method: method, Params: params}, false)
}

// Call sends a request and waits for its response, decoding the result into
// result (which may be nil). It returns the peer's *Error if the peer
// answered with one, ctx's error if ctx ends first, or ErrClosed.
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	return c.CallThen(ctx, method, params, result, nil)
}

// CallThen is Call that also runs then, on the goroutine reading the link,
// when a result (not an error) is read for the request: before any message
// read after it is handled. A handler of the peer's notifications can so
// tell which of its own requests the peer had answered when it sent them,
// which a caller woken by Call's return cannot promise. then must not
// block. When ctx ends first, the answer is dropped and then does not run,
// unless the answer was being read at that very moment.
func (c *Conn) CallThen(ctx context.Context, method string, params any, result any, then func()) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := c.nextID
	ch := make(chan *wireMessage, 1)
	c.pending[id] = pendingCall{ch: ch, then: then}
	c.mu.Unlock()

	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.writeLine(ctx, outRequest{JSONRPC: Version, ID: &id, Method: method, Params: params}, false); err != nil {
		forget()
		return err
	}
	select {
	case <-ctx.Done():
		forget()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case m, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	}
}

// pacedReader is the reading side of WithBatching: while armed (the last
// message read was one to batch), a read that comes less than interval
// after the start of the previous one waits for the rest of interval
// first. A previous read that waited for data (the stream was quiet)
// started long ago, so the first message after a pause is read at once.
// It is used from the reading goroutine only.
type pacedReader struct {
	r        io.Reader
	interval time.Duration
	armed    bool
	began    time.Time // when the previous Read began
}

// pauser is a reader that can wait between two reads more cheaply than
// time.Sleep (osproc.QuietReader).
type pauser interface {
	Pause(d time.Duration)
}

func (p *pacedReader) Read(b []byte) (int, error) {
	now := time.Now()
	if p.armed {
		if wait := p.interval - now.Sub(p.began); wait > 0 {
			if ps, ok := p.r.(pauser); ok {
				ps.Pause(wait)
			} else {
				time.Sleep(wait)
			}
			now = time.Now()
		}
	}
	p.began = now
	return p.r.Read(b)
}

// lineReader splits a stream into lines of at most max bytes without ever
// holding more than max bytes of one line.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. At the end of the stream
// it returns the last unterminated line (if any) together with io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not pin a huge buffer after one big line
	}
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(chunk) > l.max+1 {
			// Skip the rest of this line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.br.ReadSlice('\n')
			}
			l.buf = l.buf[:0]
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errTooLong
		}
		l.buf = append(l.buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(l.buf, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return l.buf, err
		}
	}
}
