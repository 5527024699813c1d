package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is what the Gemini CLI's TypeScript SDK offers; it keeps
// the Go client from trying the newer stateless handshake first.
const protocolVersion = "2025-06-18"

// contextSeen is one ide/contextUpdate as a CLI session received it.
type contextSeen struct {
	at         time.Time
	activePath string
	cursorLine int
}

// cliSession plays one Gemini CLI session: an MCP client over Streamable
// HTTP with the Bearer token, recording every ide/* notification.
type cliSession struct {
	cs            *mcp.ClientSession
	httpTransport *sniffingTransport
	base          *http.Transport
	lean          *leanCaller // plain HTTP tool calls on this session
	useSDK        bool        // make openDiff calls through the SDK client instead

	mu       sync.Mutex
	contexts []contextSeen
	accepted []string // filePaths of ide/diffAccepted
	changed  chan struct{}
}

// connectCLI connects one session to the companion and waits for the
// context update the companion sends when the session's stream opens.
func connectCLI(ctx context.Context, c *companion) (*cliSession, error) {
	base := &http.Transport{
		MaxIdleConns:        8,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	s := &cliSession{changed: make(chan struct{}, 1), base: base}
	s.httpTransport = &sniffingTransport{base: base, token: c.init.AuthToken, on: s.onNotification}
	hc := &http.Client{Transport: s.httpTransport}
	transport := &mcp.StreamableClientTransport{
		Endpoint:   fmt.Sprintf("http://127.0.0.1:%d/mcp", c.init.Port),
		HTTPClient: hc,
		MaxRetries: -1,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "companionbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		base.CloseIdleConnections()
		return nil, fmt.Errorf("connect a CLI session to %s: %w", c.kind, err)
	}
	s.cs = cs
	s.useSDK = c.sdkCalls
	if s.lean, err = newLeanCaller(s, c); err != nil {
		_ = cs.Close()
		return nil, err
	}
	if err := s.waitContext(ctx, 5*time.Second, func(contextSeen) bool { return true }); err != nil {
		_ = cs.Close()
		return nil, fmt.Errorf("%s sent no context update when the session's stream opened: %w", c.kind, err)
	}
	return s, nil
}

// close ends the session (the SDK sends DELETE) and drops its connections.
func (s *cliSession) close() {
	_ = s.cs.Close()
	s.base.CloseIdleConnections()
}

func (s *cliSession) onNotification(method string, params json.RawMessage, at time.Time) {
	switch method {
	case "ide/contextUpdate":
		seen := parseContext(params)
		seen.at = at
		s.mu.Lock()
		s.contexts = append(s.contexts, seen)
		s.mu.Unlock()
	case "ide/diffAccepted":
		var p struct {
			FilePath string `json:"filePath"`
		}
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		s.accepted = append(s.accepted, p.FilePath)
		s.mu.Unlock()
	default:
		return
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func parseContext(params json.RawMessage) contextSeen {
	var p struct {
		WorkspaceState struct {
			OpenFiles []struct {
				Path     string `json:"path"`
				IsActive bool   `json:"isActive"`
				Cursor   *struct {
					Line int `json:"line"`
				} `json:"cursor"`
			} `json:"openFiles"`
		} `json:"workspaceState"`
	}
	var seen contextSeen
	if err := json.Unmarshal(params, &p); err != nil {
		return seen
	}
	for _, f := range p.WorkspaceState.OpenFiles {
		if f.IsActive {
			seen.activePath = f.Path
			if f.Cursor != nil {
				seen.cursorLine = f.Cursor.Line
			}
			break
		}
	}
	return seen
}

// contextsSince returns the context updates received at or after t.
func (s *cliSession) contextsSince(t time.Time) []contextSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []contextSeen
	for _, c := range s.contexts {
		if !c.at.Before(t) {
			out = append(out, c)
		}
	}
	return out
}

// forgetContexts drops what was recorded so far (keeps memory flat in long
// runs).
func (s *cliSession) forgetContexts() {
	s.mu.Lock()
	s.contexts = nil
	s.accepted = nil
	s.mu.Unlock()
}

// waitContext waits until a recorded context update satisfies ok.
func (s *cliSession) waitContext(ctx context.Context, timeout time.Duration, ok func(contextSeen) bool) error {
	_, err := s.waitContextAt(ctx, timeout, ok)
	return err
}

// waitContextAt is waitContext returning when the first matching update arrived.
func (s *cliSession) waitContextAt(ctx context.Context, timeout time.Duration, ok func(contextSeen) bool) (time.Time, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		for _, c := range s.contexts {
			if ok(c) {
				s.mu.Unlock()
				return c.at, nil
			}
		}
		s.mu.Unlock()
		select {
		case <-s.changed:
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("no matching ide/contextUpdate within %v", timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// waitAccepted waits for ide/diffAccepted for path.
func (s *cliSession) waitAccepted(ctx context.Context, timeout time.Duration, path string) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		for _, p := range s.accepted {
			if p == path {
				s.mu.Unlock()
				return nil
			}
		}
		s.mu.Unlock()
		select {
		case <-s.changed:
		case <-deadline.C:
			return fmt.Errorf("no ide/diffAccepted for %s within %v", path, timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// openDiff calls the openDiff tool and returns its round-trip time.
func (s *cliSession) openDiff(ctx context.Context, path, content string) (time.Duration, error) {
	if s.useSDK {
		args := map[string]any{"filePath": path, "newContent": content}
		t0 := time.Now()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "openDiff", Arguments: args})
		d := time.Since(t0)
		if err != nil {
			return 0, fmt.Errorf("openDiff %s: %w", path, err)
		}
		if res.IsError {
			return 0, fmt.Errorf("openDiff %s: tool error: %s", path, toolText(res))
		}
		return d, nil
	}
	t0 := time.Now()
	if err := s.lean.openDiff(ctx, path, content); err != nil {
		return 0, fmt.Errorf("openDiff %s: %w", path, err)
	}
	return time.Since(t0), nil
}

// closeDiff calls the closeDiff tool and checks its JSON answer.
func (s *cliSession) closeDiff(ctx context.Context, path string) error {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      "closeDiff",
		Arguments: map[string]any{"filePath": path},
	})
	if err != nil {
		return fmt.Errorf("closeDiff %s: %w", path, err)
	}
	if res.IsError {
		return fmt.Errorf("closeDiff %s: tool error: %s", path, toolText(res))
	}
	text := toolText(res)
	var body map[string]any
	if err := json.Unmarshal([]byte(text), &body); err != nil {
		return fmt.Errorf("closeDiff %s: answer is not JSON {\"content\": ...}: %q", path, text)
	}
	return nil
}

func toolText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// sniffingTransport adds the Bearer token to every request and watches
// server-sent events for ide/* notifications: the SDK client drops methods it
// does not know, so they are read off the wire before it sees them.
type sniffingTransport struct {
	base  http.RoundTripper
	token string
	on    func(method string, params json.RawMessage, at time.Time)
}

func (t *sniffingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseSniffer{body: resp.Body, on: t.on}
	}
	return resp, nil
}

// maxSniffedEvent bounds what the sniffer buffers for one event; larger
// events pass through unexamined.
const maxSniffedEvent = 1 << 20

// sseSniffer passes an event stream through unchanged and reports the ide/*
// notifications in it.
type sseSniffer struct {
	body     io.ReadCloser
	on       func(method string, params json.RawMessage, at time.Time)
	line     []byte
	data     []byte
	overflow bool
}

func (s *sseSniffer) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if n > 0 {
		s.feed(p[:n], time.Now())
	}
	return n, err
}

func (s *sseSniffer) Close() error { return s.body.Close() }

func (s *sseSniffer) feed(b []byte, at time.Time) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.appendLine(b)
			return
		}
		s.appendLine(b[:i])
		s.endLine(at)
		b = b[i+1:]
	}
}

func (s *sseSniffer) appendLine(b []byte) {
	if len(s.line)+len(b) > maxSniffedEvent {
		s.overflow = true
		return
	}
	s.line = append(s.line, b...)
}

func (s *sseSniffer) endLine(at time.Time) {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	s.line = s.line[:0]
	switch {
	case len(line) == 0:
		if !s.overflow && len(s.data) > 0 {
			s.dispatch(s.data, at)
		}
		s.data = s.data[:0]
		s.overflow = false
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(v) > maxSniffedEvent {
			s.overflow = true
			return
		}
		s.data = append(s.data, v...)
	}
}

func (s *sseSniffer) dispatch(data []byte, at time.Time) {
	if !bytes.Contains(data, []byte(`"ide/`)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.ID) > 0 || !strings.HasPrefix(m.Method, "ide/") {
		return
	}
	s.on(m.Method, m.Params, at)
}
