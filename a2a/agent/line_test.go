package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer behaves as Gemini CLI's A2A server does in what a Line relies
// on: a message with text starts a turn whose shell command waits for
// approval (the turn's stream then ends), the approval runs the command
// (its stream stays open), the turn belongs to the connection that started
// it and is aborted when that connection closes, tasks/cancel cancels the
// task, and idle connections are closed after a short time, as Node does
// after 5 s.
type fakeServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	changed  chan struct{}
	turnConn string          // remote address of the turn's connection
	closed   map[string]bool // connections the server saw closed
	gets     map[string]int  // GET requests per connection
	aborted  bool            // the turn's connection closed while the turn ran
	ended    bool            // the turn ended
	cancels  int
	// closeTurnConn makes the server close the turn's connection right
	// after its stream, as it does after 5 s idle.
	closeTurnConn bool
	// auth, when set, is the Authorization every request must carry, as the
	// preload of a2a/launch makes the server demand; refused counts the
	// requests answered 401.
	auth    string
	refused int
}

func newFakeServer(t *testing.T, idle time.Duration) *fakeServer {
	f := &fakeServer{closed: map[string]bool{}, gets: map[string]int{}, changed: make(chan struct{})}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.IdleTimeout = idle
	f.srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed || s == http.StateHijacked {
			f.mu.Lock()
			addr := c.RemoteAddr().String()
			f.closed[addr] = true
			if addr == f.turnConn && !f.ended {
				f.aborted = true
			}
			f.notify()
			f.mu.Unlock()
		}
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// notify wakes waiters; f.mu held.
func (f *fakeServer) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait waits until cond holds (checked with f.mu held).
func (f *fakeServer) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

const toolEvent = `{"kind":"status-update","taskId":"t1","contextId":"c1","final":%t,"status":{"state":"%s","message":{"kind":"message","messageId":"m%d","role":"agent","parts":[{"kind":"data","data":{"request":{"callId":"call1","name":"run_shell_command","args":{"command":"sleep 9; touch late"}},"status":"%s","confirmationDetails":{"type":"exec","command":"sleep 9; touch late"}}}]}},"metadata":{"coderAgent":{"kind":"tool-call-update"}}}`

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	refuse := f.auth != "" && r.Header.Get("Authorization") != f.auth
	if refuse {
		f.refused++
		f.notify()
	}
	f.mu.Unlock()
	if refuse {
		w.Header().Set("Connection", "close")
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodGet {
		f.mu.Lock()
		f.gets[r.RemoteAddr]++
		f.notify()
		f.mu.Unlock()
		fmt.Fprint(w, `{"name":"fake","url":"http://127.0.0.1","protocolVersion":"0.3.0","capabilities":{"streaming":true}}`)
		return
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Message struct {
				Parts []map[string]any `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	send := func(final bool, state, status string, n int) {
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":"+toolEvent+"}\n\n", final, state, n, status)
		w.(http.Flusher).Flush()
	}
	switch {
	case req.Method == "tasks/cancel":
		f.mu.Lock()
		f.cancels++
		f.notify()
		f.mu.Unlock()
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"canceled"}}}`)
	case len(req.Params.Message.Parts) > 0 && req.Params.Message.Parts[0]["kind"] == "text":
		f.mu.Lock()
		f.turnConn, f.ended, f.aborted = r.RemoteAddr, false, false
		closeIt := f.closeTurnConn
		f.mu.Unlock()
		if closeIt {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send(false, "working", "validating", 1)
		send(true, "input-required", "awaiting_approval", 2)
		// The server ends the answer a little after its final event (it
		// saves the task first): a client that stops reading at the final
		// event must not close the connection meanwhile.
		time.Sleep(50 * time.Millisecond)
	case len(req.Params.Message.Parts) > 0 && fmt.Sprint(req.Params.Message.Parts[0]["data"]) == "map[callId:call1 outcome:cancel]":
		// Denied: the turn ends.
		w.Header().Set("Content-Type", "text/event-stream")
		f.mu.Lock()
		f.ended = true
		f.mu.Unlock()
		send(true, "input-required", "cancelled", 3)
	default: // approved: the command runs until the turn is aborted
		w.Header().Set("Content-Type", "text/event-stream")
		send(false, "working", "executing", 3)
		<-r.Context().Done()
	}
}

func fastKeepAlive(t *testing.T) {
	old := keepAliveEvery
	keepAliveEvery = 20 * time.Millisecond
	t.Cleanup(func() { keepAliveEvery = old })
}

func load(t *testing.T, f *fakeServer) *Agent {
	t.Helper()
	ag, err := Load(context.Background(), f.srv.URL, NewHTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	return ag
}

// runUntilExecuting starts a turn, approves its command and returns once the
// command runs, with the approval's stream still open.
func runUntilExecuting(t *testing.T, line *Line) (stopStream func()) {
	t.Helper()
	ctx := context.Background()
	for u, err := range line.Send(ctx, TextMessage("", "", "run it")) {
		if err != nil {
			t.Fatal(err)
		}
		if u.Final {
			break // stopping at the final event must not close the turn's connection
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	executing := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for u, err := range line.Send(sctx, ConfirmMessage("t1", "c1", "call1", "proceed_once")) {
			if err != nil {
				return
			}
			if u.Tool != nil && u.Tool.Status == "executing" {
				close(executing)
			}
		}
	}()
	select {
	case <-executing:
	case <-time.After(10 * time.Second):
		t.Fatal("the approved command never ran")
	}
	return func() { cancel(); <-done }
}

// The turn's connection outlives the server's idle timeout while the turn
// waits on the user, and Cancel closes it: the server aborts the running
// command, and Cancel says it stopped it.
func TestLineCancelStopsTheRunningTurn(t *testing.T) {
	fastKeepAlive(t)
	f := newFakeServer(t, 500*time.Millisecond)
	ag := load(t, f)
	line := ag.NewLine()
	defer line.Close()
	stopStream := runUntilExecuting(t, line)
	defer stopStream()
	// The turn's connection is kept in use, on and on, far longer than the
	// server leaves an idle one open.
	f.wait(t, "the turn's connection to be kept in use", func() bool { return f.gets[f.turnConn] >= 50 || f.closed[f.turnConn] })
	f.mu.Lock()
	gone := f.closed[f.turnConn]
	f.mu.Unlock()
	if gone || !line.Holding() {
		t.Fatal("the turn's connection was closed while the turn ran")
	}
	st := line.Cancel(context.Background(), "t1")
	f.wait(t, "the turn to be aborted and the task cancelled", func() bool { return f.aborted && f.cancels == 1 })
	if len(st.Stopped) != 1 || len(st.StillRunning) != 0 || st.Err != nil {
		t.Fatalf("Cancel = %+v; want the command stopped", st)
	}
	if note := st.Note(); !strings.Contains(note, "stopped `sleep 9; touch late`") {
		t.Fatalf("note %q", note)
	}
}

// When the server has already closed the turn's connection, nothing can
// stop the command: Cancel says it still runs instead of claiming it stopped.
func TestLineCancelSaysWhatStillRuns(t *testing.T) {
	fastKeepAlive(t)
	f := newFakeServer(t, time.Minute)
	f.closeTurnConn = true
	ag := load(t, f)
	line := ag.NewLine()
	defer line.Close()
	stopStream := runUntilExecuting(t, line)
	defer stopStream()
	f.wait(t, "the server to close the turn's connection", func() bool { return f.closed[f.turnConn] })
	if !testPoll(func() bool { return !line.Holding() }) {
		t.Fatal("the line did not notice its connection closed")
	}
	st := line.Cancel(context.Background(), "t1")
	if len(st.StillRunning) != 1 || len(st.Stopped) != 0 {
		t.Fatalf("Cancel = %+v; want the command reported still running", st)
	}
	if note := st.Note(); !strings.Contains(note, "`sleep 9; touch late` is still running and cannot be stopped") {
		t.Fatalf("note %q", note)
	}
}

// A turn waiting on the user is held across its stream's end; once it has
// ended (the call denied) it is let go: its connection is closed.
func TestLineLetsAnEndedTurnGo(t *testing.T) {
	fastKeepAlive(t)
	f := newFakeServer(t, time.Minute)
	ag := load(t, f)
	line := ag.NewLine()
	defer line.Close()
	for u, err := range line.Send(context.Background(), TextMessage("", "", "run it")) {
		if err != nil {
			t.Fatal(err)
		}
		if u.Final {
			break
		}
	}
	if !line.Holding() {
		t.Fatal("the line let go of a turn that waits on the user")
	}
	for _, err := range line.Send(context.Background(), ConfirmMessage("t1", "c1", "call1", "cancel")) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if line.Holding() {
		t.Fatal("the line still holds a turn that ended")
	}
	f.wait(t, "the ended turn's connection to close", func() bool { return f.closed[f.turnConn] })
}

func testPoll(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// With WithHeader, every request carries the header: the card, the turn's
// message on its own connection, the requests that keep that connection in
// use, the approval, tasks/cancel and the caller's own requests (Do). The
// server refuses anything else, and closes the connection it came on,
// which would abort the turn.
func TestEveryRequestCarriesTheHeader(t *testing.T) {
	fastKeepAlive(t)
	f := newFakeServer(t, time.Minute)
	f.auth = "Bearer k3y"
	if _, err := Load(context.Background(), f.srv.URL, NewHTTPClient()); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("Load without the header: %v; want a refusal that asks for credentials", err)
	}
	if _, err := Load(context.Background(), f.srv.URL, NewHTTPClient(), WithHeader(BearerHeader("wrong"))); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("Load with a wrong header: %v; want a refusal of the credentials", err)
	}
	f.mu.Lock()
	f.refused = 0
	f.mu.Unlock()
	ag, err := Load(context.Background(), f.srv.URL, NewHTTPClient(), WithHeader(BearerHeader("k3y")))
	if err != nil {
		t.Fatal(err)
	}
	line := ag.NewLine()
	defer line.Close()
	stopStream := runUntilExecuting(t, line)
	defer stopStream()
	f.wait(t, "the turn's connection to be kept in use", func() bool { return f.gets[f.turnConn] >= 5 || f.closed[f.turnConn] || f.refused > 0 })
	req, err := http.NewRequest(http.MethodGet, ag.URL+"/listCommands", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ag.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	st := line.Cancel(context.Background(), "t1")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refused != 0 || resp.StatusCode != http.StatusOK || st.Err != nil || len(st.Stopped) != 1 {
		t.Fatalf("%d requests refused, Do: %s, Cancel: %+v; want every request taken", f.refused, resp.Status, st)
	}
}

func TestReadHeaderFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("# for the agent\nAuthorization: Bearer abc\r\n\nX-Team:  blue \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeaderFile(good)
	if err != nil || h.Get("Authorization") != "Bearer abc" || h.Get("X-Team") != "blue" || len(h) != 2 {
		t.Fatalf("ReadHeaderFile = %v, %v", h, err)
	}
	for name, content := range map[string]string{"bare": "abc\n", "empty": "# nothing\n", "badname": "Bad Name: x\n", "novalue": "X-Team:\n"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadHeaderFile(p); err == nil {
			t.Errorf("ReadHeaderFile(%q) succeeded", content)
		}
	}
	if _, err := ReadHeaderFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReadHeaderFile of a missing file succeeded")
	}
}
