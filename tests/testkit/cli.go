package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Note is a notification a peer received, with its arrival time.
type Note struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

// Recorder keeps notifications in arrival order and lets tests wait for
// them.
type Recorder struct {
	mu     sync.Mutex
	notes  []Note
	signal chan struct{} // closed and replaced on every new note
}

func newRecorder() *Recorder {
	return &Recorder{signal: make(chan struct{})}
}

func (r *Recorder) add(method string, params json.RawMessage) {
	r.mu.Lock()
	r.notes = append(r.notes, Note{Method: method, Params: append(json.RawMessage(nil), params...), At: time.Now()})
	close(r.signal)
	r.signal = make(chan struct{})
	r.mu.Unlock()
}

// All returns the notes of method (all methods if ""), oldest first.
func (r *Recorder) All(method string) []Note {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Note
	for _, n := range r.notes {
		if method == "" || n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// Len is the number of notes received so far, of any method; use it with
// WaitFrom to wait only for notes that arrive after a point.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notes)
}

// WaitFrom waits for the first note at index ≥ from that has method and
// matches (match may be nil), and returns it with its index.
func (r *Recorder) WaitFrom(t testing.TB, from int, method string, timeout time.Duration, match func(json.RawMessage) bool) (Note, int) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		notes := r.notes[:len(r.notes):len(r.notes)]
		sig := r.signal
		r.mu.Unlock()
		// match runs without the lock, so it may use the recorder.
		for i := from; i < len(notes); i++ {
			n := notes[i]
			if n.Method == method && (match == nil || match(n.Params)) {
				return n, i
			}
		}
		from = max(from, len(notes))
		select {
		case <-sig:
		case <-deadline.C:
			t.Fatalf("no matching %s within %s; received: %s", method, timeout, r.describe())
			return Note{}, -1
		}
	}
}

// WaitFor waits for the first note (already received or future) that has
// method and matches (match may be nil), and returns its params.
func (r *Recorder) WaitFor(t testing.TB, method string, timeout time.Duration, match func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	n, _ := r.WaitFrom(t, 0, method, timeout, match)
	return n.Params
}

func (r *Recorder) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for i, n := range r.notes {
		if i >= 20 {
			fmt.Fprintf(&b, "… %d more", len(r.notes)-i)
			break
		}
		p := string(n.Params)
		if len(p) > 300 {
			p = p[:300] + "…"
		}
		fmt.Fprintf(&b, "\n  %s %s", n.Method, p)
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

// CLI is an MCP client that connects to the sidecar the way Gemini CLI
// does, and records every ide/* notification it receives.
type CLI struct {
	*Recorder
	Session *mcp.ClientSession
}

// ConnectCLI connects a CLI to the sidecar at port with token; the session
// closes when the test ends.
func ConnectCLI(t testing.TB, port int, token string) *CLI {
	t.Helper()
	cli, err := DialCLI(context.Background(), port, token)
	if err != nil {
		t.Fatalf("connect CLI: %v", err)
	}
	t.Cleanup(func() { cli.Session.Close() })
	return cli
}

// DialCLI is ConnectCLI without a test: the caller closes cli.Session.
func DialCLI(ctx context.Context, port int, token string) (*CLI, error) {
	rec := newRecorder()
	base := &mcp.StreamableClientTransport{
		Endpoint:     fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
		HTTPClient:   &http.Client{Transport: tapTransport{token: token, rec: rec, next: http.DefaultTransport}},
		MaxRetries:   -1,
		MaxEventSize: 256 << 20,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "testkit-cli", Version: "1.0.0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sess, err := client.Connect(cctx, base, nil)
	if err != nil {
		return nil, fmt.Errorf("MCP connect to port %d: %w", port, err)
	}
	return &CLI{Recorder: rec, Session: sess}, nil
}

// OpenDiff calls the openDiff tool.
func (c *CLI) OpenDiff(ctx context.Context, path, newContent string) (*mcp.CallToolResult, error) {
	return c.Session.CallTool(ctx, &mcp.CallToolParams{
		Name:      "openDiff",
		Arguments: map[string]any{"filePath": path, "newContent": newContent},
	})
}

// CloseDiff calls the closeDiff tool with suppressNotification set, as the
// CLI does when the user answers in the terminal.
func (c *CLI) CloseDiff(ctx context.Context, path string) (*mcp.CallToolResult, error) {
	return c.Session.CallTool(ctx, &mcp.CallToolParams{
		Name:      "closeDiff",
		Arguments: map[string]any{"filePath": path, "suppressNotification": true},
	})
}

// CloseDiffContent calls closeDiff and decodes the content the CLI would
// use: the JSON {"content": …} in the first text block (nil for null).
func (c *CLI) CloseDiffContent(t testing.TB, ctx context.Context, path string) *string {
	t.Helper()
	res, err := c.CloseDiff(ctx, path)
	if err != nil {
		t.Fatalf("closeDiff: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("closeDiff: want one text block, got error=%v %d blocks", res.IsError, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("closeDiff: block is %T, not text", res.Content[0])
	}
	var body struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal([]byte(tc.Text), &body); err != nil {
		t.Fatalf("closeDiff: text %q is not JSON: %v", tc.Text, err)
	}
	return body.Content
}

// tapTransport adds the bearer token to every request and reads along the
// server-sent event streams, recording the ide/* notifications in them
// (the SDK's client does not hand notifications it does not know to user
// code). The bytes reach the SDK unchanged.
type tapTransport struct {
	token string
	rec   *Recorder
	next  http.RoundTripper
}

func (tt tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tt.token)
	resp, err := tt.next.RoundTrip(r)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &sseTap{ReadCloser: resp.Body, rec: tt.rec}
	return resp, nil
}

// sseTap parses the event stream it passes through.
type sseTap struct {
	io.ReadCloser
	rec     *Recorder
	partial []byte // bytes of an unfinished line
	data    []byte // data lines of the current event
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.scan(p[:n])
	return n, err
}

func (s *sseTap) scan(b []byte) {
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(s.partial[:i], []byte("\r"))
		switch {
		case len(line) == 0:
			s.event()
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, d...)
		}
		s.partial = s.partial[i+1:]
	}
}

func (s *sseTap) event() {
	defer func() { s.data = s.data[:0] }()
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(s.data, &msg) != nil || len(msg.ID) > 0 || !strings.HasPrefix(msg.Method, "ide/") {
		return
	}
	s.rec.add(msg.Method, msg.Params)
}
