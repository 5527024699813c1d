package link

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a Handler that records what it is given.
type recorder struct {
	mu    sync.Mutex
	notes []string
}

func (r *recorder) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "echo":
		return params, nil
	case "fail":
		return nil, Errorf(CodeInvalidParams, "bad thing")
	case "boom":
		return nil, errors.New("plain error")
	case "bye":
		return Final{Result: "ok"}, nil
	}
	return nil, Errorf(CodeMethodNotFound, "unknown %s", method)
}

func (r *recorder) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	r.mu.Lock()
	r.notes = append(r.notes, method+" "+string(params))
	r.mu.Unlock()
}

// pipePeer runs a Conn on one end of two pipes and returns the other ends.
func pipePeer(t *testing.T, h Handler, opts ...Option) (*Conn, io.WriteCloser, *bufio.Reader, chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := New(inR, outW, h, opts...)
	done := make(chan error, 1)
	served := make(chan struct{})
	go func() {
		defer close(served)
		err := c.Serve(context.Background())
		outW.Close()
		done <- err
	}()
	// At the end, what the Conn still writes is read and dropped: a pipe
	// holds nothing, and a write nobody reads would keep Serve from ending.
	t.Cleanup(func() { inW.Close(); _, _ = io.Copy(io.Discard, outR); <-served })
	return c, inW, bufio.NewReader(outR), done
}

func readMsg(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("peer wrote invalid JSON %q: %v", line, err)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func TestBadLinesGetErrorsAndTheLinkStaysUp(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{})
	cases := []struct {
		line string
		code float64
		id   any
	}{
		{"not json", CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError, nil},
		{`[1,2]`, CodeInvalidRequest, nil},
		{`"str"`, CodeInvalidRequest, nil},
		{`{"jsonrpc":"1.0","id":1,"method":"echo"}`, CodeInvalidRequest, 1.0},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"echo"}`, CodeInvalidRequest, nil},
		{`{"jsonrpc":"2.0","id":7,"method":"echo","params":5}`, CodeInvalidRequest, 7.0},
		{`{"jsonrpc":"2.0","id":7,"method":""}`, CodeInvalidRequest, 7.0},
		{`{"jsonrpc":"2.0","id":8,"method":"nope"}`, CodeMethodNotFound, 8.0},
		{`{"jsonrpc":"2.0","id":"s","method":"fail"}`, CodeInvalidParams, "s"},
		{`{"jsonrpc":"2.0","id":9,"method":"boom"}`, CodeInternalError, 9.0},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"s\":\"\xff\"}}", 0, nil},
	}
	for _, c := range cases {
		if _, err := io.WriteString(in, c.line+"\n"); err != nil {
			t.Fatal(err)
		}
		if c.code == 0 {
			continue
		}
		m := readMsg(t, out)
		if errCode(m) != c.code || m["id"] != c.id {
			t.Fatalf("line %q: got %v, want code %v id %v", c.line, m, c.code, c.id)
		}
	}
	// Still answering.
	io.WriteString(in, `{"jsonrpc":"2.0","id":11,"method":"echo","params":{"a":[1]}}`+"\n")
	m := readMsg(t, out)
	if m["id"] != 11.0 || m["result"].(map[string]any)["a"] == nil {
		t.Fatalf("got %v", m)
	}
}

func TestNotificationsArriveInOrderAndUnknownResponsesAreIgnored(t *testing.T) {
	rec := &recorder{}
	_, in, out, _ := pipePeer(t, rec)
	io.WriteString(in, `{"jsonrpc":"2.0","id":99,"result":{}}`+"\n") // never asked
	for i := 0; i < 5; i++ {
		io.WriteString(in, `{"jsonrpc":"2.0","method":"n","params":[`+string(rune('0'+i))+`]}`+"\n")
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`+"\n")
	readMsg(t, out) // the echo: everything before it has been handled
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if strings.Join(rec.notes, ",") != "n [0],n [1],n [2],n [3],n [4]" {
		t.Fatalf("got %v", rec.notes)
	}
}

func TestLongLineIsSkippedWhole(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{}, WithMaxLine(1024))
	go func() {
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`+strings.Repeat("x", 5000)+`"}}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"echo","params":{"s":"ok"}}`+"\n")
	}()
	m := readMsg(t, out)
	if errCode(m) != CodeInvalidRequest || m["id"] != nil {
		t.Fatalf("got %v", m)
	}
	m = readMsg(t, out)
	if m["id"] != 2.0 {
		t.Fatalf("next line lost: %v", m)
	}
}

func TestLargeLineWithinLimit(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{})
	big := strings.Repeat("y", 20<<20)
	go io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`+big+`"}}`+"\n")
	m := readMsg(t, out)
	if s, _ := m["result"].(map[string]any)["s"].(string); len(s) != len(big) {
		t.Fatalf("got %d bytes back", len(s))
	}
}

func TestCallRoundTripTimeoutAndClose(t *testing.T) {
	c, in, out, done := pipePeer(t, &recorder{})
	// One goroutine reads everything the Conn writes (pipe writes block
	// until read); the test answers from here.
	msgs := make(chan map[string]any, 10)
	go func() {
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				close(msgs)
				return
			}
			var m map[string]any
			json.Unmarshal([]byte(line), &m)
			msgs <- m
		}
	}()
	answer := func(body string) {
		m := <-msgs
		id, _ := json.Marshal(m["id"])
		io.WriteString(in, `{"jsonrpc":"2.0","id":`+string(id)+`,`+body+`}`+"\n")
	}
	go answer(`"result":{"content":"hi"}`)
	var res struct{ Content string }
	if err := c.Call(context.Background(), "diff/close", map[string]string{"filePath": "/x"}, &res); err != nil || res.Content != "hi" {
		t.Fatalf("call: %v %+v", err, res)
	}
	go answer(`"error":{"code":-32000,"message":"no view"}`)
	err := c.Call(context.Background(), "diff/open", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Message != "no view" {
		t.Fatalf("want peer error, got %v", err)
	}
	// The peer never answers.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "diff/open", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want deadline, got %v", err)
	}
	<-msgs
	// A call outstanding when the link ends fails with ErrClosed.
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "diff/open", nil, nil) }()
	<-msgs
	in.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("want ErrClosed, got %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
	if err := c.Notify("x", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("notify after close: %v", err)
	}
}

func TestFinalStopsAfterReply(t *testing.T) {
	_, in, out, done := pipePeer(t, &recorder{})
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"bye"}`+"\n")
	m := readMsg(t, out)
	if m["result"] != "ok" {
		t.Fatalf("got %v", m)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop after a Final result")
	}
}

// orderHandler notes, for each notification, whether a CallThen hook had
// run by the time it was handled.
type orderHandler struct {
	recorder
	hooked *atomic.Bool
	seen   chan bool
}

func (h *orderHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	h.seen <- h.hooked.Load()
}

func TestCallThenRunsBeforeTheNextMessage(t *testing.T) {
	var hooked atomic.Bool
	h := &orderHandler{hooked: &hooked, seen: make(chan bool, 2)}
	c, in, out, _ := pipePeer(t, h)
	// The peer answers and, in the same write, sends a notification: its
	// handler must see the hook as run, whatever the caller is doing.
	answerThenNotify := func(body string) {
		m := readMsg(t, out)
		id, _ := json.Marshal(m["id"])
		io.WriteString(in, `{"jsonrpc":"2.0","id":`+string(id)+`,`+body+`}`+"\n"+`{"jsonrpc":"2.0","method":"after"}`+"\n")
	}
	errc := make(chan error, 1)
	go func() { errc <- c.CallThen(context.Background(), "diff/open", nil, nil, func() { hooked.Store(true) }) }()
	answerThenNotify(`"result":{}`)
	if !<-h.seen {
		t.Fatal("the notification after the answer was handled before the hook ran")
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// An error answer runs no hook.
	hooked.Store(false)
	go func() { errc <- c.CallThen(context.Background(), "diff/open", nil, nil, func() { hooked.Store(true) }) }()
	answerThenNotify(`"error":{"code":-32000,"message":"no view"}`)
	if <-h.seen {
		t.Fatal("the hook ran for an error answer")
	}
	if err := <-errc; err == nil {
		t.Fatal("want the peer's error")
	}
}

// A plugin whose JSON encoder turns an empty table into [] (Lua's, for
// one), or that sends null, means "no params": every handler gets the one
// form, in requests and notifications alike.
func TestEmptyParamsHaveOneForm(t *testing.T) {
	r := &recorder{}
	_, in, out, _ := pipePeer(t, r)
	for _, c := range []struct{ params, want string }{
		{`,"params":[]`, `{}`},
		{`,"params":[ ]`, `{}`},
		{`,"params":{}`, `{}`},
		{`,"params":null`, `null`},
		{``, `null`},
		{`,"params":[1]`, `[1]`},
		{`,"params":{"a":[]}`, `{"a":[]}`},
	} {
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"echo"`+c.params+"}\n")
		m := readMsg(t, out)
		got, _ := json.Marshal(m["result"])
		if string(got) != c.want {
			t.Fatalf("params%s reached the handler as %s; want %s", c.params, got, c.want)
		}
		io.WriteString(in, `{"jsonrpc":"2.0","method":"note"`+c.params+"}\n")
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}`+"\n")
	readMsg(t, out)
	r.mu.Lock()
	defer r.mu.Unlock()
	want := "note {}|note {}|note {}|note |note |note [1]|note {\"a\":[]}"
	if got := strings.Join(r.notes, "|"); got != want {
		t.Fatalf("notifications got %q; want %q", got, want)
	}
}
