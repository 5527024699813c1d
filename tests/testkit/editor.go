package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// DiffHandler answers one request from the sidecar (diff/open, diff/close)
// on behalf of the editor. It runs on the link's reading goroutine.
type DiffHandler func(method string, params json.RawMessage) (any, error)

// EditorOptions configures StartEditor.
type EditorOptions struct {
	// Args are extra command-line arguments for the sidecar.
	Args []string
	// Env overrides the sandbox's environment when set.
	Env []string
	// Framing is the editor link framing; LSP adds --framing=lsp.
	Framing link.Framing
	// Handle answers the sidecar's requests; by default diff/open answers
	// {} and diff/close answers {"content": <newContent of the last
	// diff/open for that path>}.
	Handle DiffHandler
}

// Editor plays an editor plugin: it runs the real sidecar with --stdio and
// speaks the editor link to it.
type Editor struct {
	*Recorder
	Cmd  *exec.Cmd
	Conn *link.Conn

	stdin  io.WriteCloser
	stderr *SyncBuffer
	served chan struct{}
	exited chan struct{}

	mu       sync.Mutex
	requests []Note
	proposed map[string]string
	handle   DiffHandler
}

// StartEditor starts the sidecar in the sandbox and connects an Editor to
// it. The sidecar is stopped (stdin closed, then killed if it lingers) when
// the test ends.
func StartEditor(t testing.TB, sb *Sandbox, opts EditorOptions) *Editor {
	t.Helper()
	bin := Binary(t)
	args := append([]string{"--stdio", "--log-level", "debug"}, opts.Args...)
	if opts.Framing == link.LSP {
		args = append(args, "--framing=lsp")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = sb.Workspace
	cmd.Env = sb.Env()
	if opts.Env != nil {
		cmd.Env = opts.Env
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("stdin pipe: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	e := &Editor{
		Recorder: newRecorder(),
		Cmd:      cmd,
		stdin:    stdin,
		stderr:   &SyncBuffer{},
		served:   make(chan struct{}),
		exited:   make(chan struct{}),
		proposed: map[string]string{},
		handle:   opts.Handle,
	}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sidecar: %v", err)
	}
	// The tests feed the sidecar lines of many MiB; a race-built sidecar
	// on a loaded machine may take longer than the default to read one,
	// which is slowness, not the stall the default is there to find.
	e.Conn = link.New(stdout, stdin, (*editorHandler)(e), link.WithFraming(opts.Framing), link.WithWriteTimeout(time.Minute))
	go func() {
		defer close(e.served)
		_ = e.Conn.Serve(context.Background())
	}()
	go func() {
		defer close(e.exited)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		e.stdin.Close()
		select {
		case <-e.exited:
		// The shutdown lets requests in flight end, each bounded by the
		// sidecar's 10 s editor and body timeouts; past those it is stuck.
		// (A race-built sidecar also sleeps at exit unless GORACE says
		// atexit_sleep_ms=0, as scripts/test.sh does.)
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-e.exited
			t.Errorf("sidecar did not exit within 15 s of its stdin closing")
		}
		<-e.served
		if t.Failed() {
			t.Logf("sidecar stderr:\n%s", e.Stderr())
		}
	})
	return e
}

// Stderr is what the sidecar logged so far.
func (e *Editor) Stderr() string { return e.stderr.String() }

// Exited is closed when the sidecar process has exited.
func (e *Editor) Exited() <-chan struct{} { return e.exited }

// CloseStdin ends the editor link from the editor's side.
func (e *Editor) CloseStdin() error { return e.stdin.Close() }

// ExitCode waits up to timeout for the sidecar to exit and returns its code.
func (e *Editor) ExitCode(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-e.exited:
		return e.Cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("sidecar still running after %s", timeout)
		return -1
	}
}

// Initialize sends initialize and returns the result. Zero fields of params
// get defaults: protocol 1, ide Neovim, the test process as editor, the
// sandbox workspace.
func (e *Editor) Initialize(t testing.TB, sb *Sandbox, params map[string]any) protocol.InitializeResult {
	t.Helper()
	p := map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "neovim", "displayName": "Neovim"},
		"processId":        os.Getpid(),
		"workspaceFolders": []string{sb.Workspace},
		"isTrusted":        true,
	}
	for k, v := range params {
		p[k] = v
	}
	var res protocol.InitializeResult
	if err := e.Call(10*time.Second, "initialize", p, &res); err != nil {
		t.Fatalf("initialize: %v\nsidecar stderr:\n%s", err, e.Stderr())
	}
	return res
}

// Call sends a request to the sidecar and waits for the answer.
func (e *Editor) Call(timeout time.Duration, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return e.Conn.Call(ctx, method, params, result)
}

// Notify sends a notification to the sidecar.
func (e *Editor) Notify(t testing.TB, method string, params any) {
	t.Helper()
	if err := e.Conn.Notify(method, params); err != nil {
		t.Fatalf("notify %s: %v", method, err)
	}
}

// WriteRaw writes bytes to the sidecar's stdin as they are (for malformed
// input).
func (e *Editor) WriteRaw(t testing.TB, data []byte) {
	t.Helper()
	if _, err := e.stdin.Write(data); err != nil {
		t.Fatalf("write to sidecar: %v", err)
	}
}

// Requests returns the requests the sidecar sent, oldest first.
func (e *Editor) Requests() []Note {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Note(nil), e.requests...)
}

// SetHandler replaces how the editor answers the sidecar's requests.
func (e *Editor) SetHandler(h DiffHandler) {
	e.mu.Lock()
	e.handle = h
	e.mu.Unlock()
}

// editorHandler is the link.Handler side of an Editor.
type editorHandler Editor

func (h *editorHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	e := (*Editor)(h)
	e.mu.Lock()
	e.requests = append(e.requests, Note{Method: method, Params: append(json.RawMessage(nil), params...), At: time.Now()})
	handle := e.handle
	e.mu.Unlock()
	e.Recorder.add("request:"+method, params)
	if handle != nil {
		return handle(method, params)
	}
	var p struct {
		FilePath   string `json:"filePath"`
		NewContent string `json:"newContent"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, link.Errorf(link.CodeInvalidParams, "%v", err)
	}
	switch method {
	case "diff/open":
		e.mu.Lock()
		e.proposed[p.FilePath] = p.NewContent
		e.mu.Unlock()
		return struct{}{}, nil
	case "diff/close":
		e.mu.Lock()
		c, ok := e.proposed[p.FilePath]
		delete(e.proposed, p.FilePath)
		e.mu.Unlock()
		if !ok {
			return map[string]any{"content": nil}, nil
		}
		return map[string]any{"content": c}, nil
	}
	return nil, link.Errorf(link.CodeMethodNotFound, "editor does not know %s", method)
}

func (h *editorHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	(*Editor)(h).Recorder.add(method, params)
}

// Kill sends sig to the sidecar.
func (e *Editor) Kill(sig syscall.Signal) error {
	if err := e.Cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal sidecar: %w", err)
	}
	return nil
}

// SyncBuffer is a bytes.Buffer that goroutines may write and read at once,
// for a child process's output that a test reads while it runs.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// SetProposal sets what the default diff/close answer returns for path, as
// if the user had edited the proposal in the diff view.
func (e *Editor) SetProposal(path, text string) {
	e.mu.Lock()
	e.proposed[path] = text
	e.mu.Unlock()
}
