package acp

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
)

// JSON-RPC 2.0 error codes, as ACP uses them.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	CodeNotFound       = -32002 // ACP's "resource not found"
)

// maxLine bounds one incoming message (a prompt with embedded files can be
// large; an endless line is refused). A variable for the tests.
var maxLine = 64 << 20

// Error is a JSON-RPC error answer.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// errorf returns an *Error with code and a formatted message.
func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is any JSON-RPC message, as read.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// handler serves the peer's requests and notifications. A request's answer
// is its result, or an error (an *Error keeps its code; any other error is
// an internal error). A result of type afterAnswer also runs its Then once
// the answer is written.
type handler interface {
	request(ctx context.Context, method string, params json.RawMessage) (any, error)
	notification(ctx context.Context, method string, params json.RawMessage)
}

// afterAnswer is a result whose Then runs right after the answer is
// written (ACP's available_commands_update must follow session/new's
// answer, which names the session).
type afterAnswer struct {
	Result any
	Then   func()
}

// conn is one JSON-RPC 2.0 connection over newline-delimited JSON: it
// serves the peer's requests (each in its own goroutine, so that a
// session/cancel reaches a running session/prompt) and makes requests of
// the peer.
type conn struct {
	w    io.Writer
	logf func(string, ...any)

	wmu sync.Mutex // one message at a time on w

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message
	closed  bool
}

func newConn(w io.Writer, logf func(string, ...any)) *conn {
	return &conn{w: w, logf: logf, pending: map[string]chan *message{}}
}

// errClosed is returned by calls made after the peer went away.
var errClosed = errors.New("the client closed the connection")

func (c *conn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(b)
	return err
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call makes a request of the peer and decodes its result into out.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params}); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m == nil {
			return errClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("%s: malformed result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serve reads messages from r until it ends, and returns once every request
// read has been answered. ctx is passed to the handler and ends the
// requests still running when the input ends.
func (c *conn) serve(ctx context.Context, r io.Reader, h handler) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// When the input ends the client is gone: calls to it fail, what runs
	// for it is stopped, and its requests end before serve returns.
	defer func() {
		c.mu.Lock()
		c.closed = true
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
		cancel()
		wg.Wait()
	}()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(ctx, line, h, &wg)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, errLineTooLong) {
				_ = c.write(map[string]any{"jsonrpc": "2.0", "id": nil, "error": errorf(CodeParseError, "message longer than %d bytes: skipped", maxLine)})
				continue
			}
			return err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line up to maxLine bytes; a longer one is skipped to
// its end and reported as errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			if len(line) > maxLine {
				long, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			if err == nil {
				err = errLineTooLong
			}
			return nil, err
		}
		return line, err
	}
}

func (c *conn) dispatch(ctx context.Context, line []byte, h handler, wg *sync.WaitGroup) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		c.logf("malformed message: %v", err)
		_ = c.write(map[string]any{"jsonrpc": "2.0", "id": nil, "error": errorf(CodeParseError, "parse error: %v", err)})
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method == "" && hasID && (m.Result != nil || m.Error != nil):
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- &m
		} else {
			c.logf("answer to no request of ours: id %s", m.ID)
		}
	case m.Method == "":
		id := any(nil)
		if hasID {
			id = m.ID
		}
		_ = c.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": errorf(CodeInvalidRequest, "invalid request: no method")})
	case !hasID:
		h.notification(ctx, m.Method, m.Params)
	default:
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := h.request(ctx, m.Method, m.Params)
			c.answer(m.ID, m.Method, res, err)
		}()
	}
}

func (c *conn) answer(id json.RawMessage, method string, res any, err error) {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		if werr := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": e}); werr != nil {
			c.logf("%s: answer not sent: %v", method, werr)
		}
		return
	}
	var then func()
	if a, ok := res.(afterAnswer); ok {
		res, then = a.Result, a.Then
	}
	if res == nil {
		res = struct{}{}
	}
	if werr := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": res}); werr != nil {
		c.logf("%s: answer not sent: %v", method, werr)
		return
	}
	if then != nil {
		then()
	}
}
