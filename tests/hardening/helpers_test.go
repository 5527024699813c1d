// Package hardening attacks the real gemini-ide-companion binary from the
// outside: hostile HTTP requests, unsafe discovery folders, bad openDiff
// paths, CLIs that vanish mid-diff, and a minute of session churn. Each test
// sends the attack and asserts what a user (or an attacker) would observe.
package hardening

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

const wait = 10 * time.Second

// protocolVersion is what Gemini CLI 0.61 negotiates.
const protocolVersion = "2025-06-18"

// sidecar is a started sidecar with the editor that drives it.
type sidecar struct {
	sb  *testkit.Sandbox
	ed  *testkit.Editor
	res protocol.InitializeResult
}

func start(t *testing.T) *sidecar {
	t.Helper()
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, nil)
	return &sidecar{sb: sb, ed: ed, res: res}
}

// status is what status/get reports.
type status struct {
	ConnectedClients int      `json:"connectedClients"`
	Sessions         int      `json:"sessions"`
	Goroutines       int      `json:"goroutines"`
	HeapInuse        uint64   `json:"heapInuse"`
	Port             int      `json:"port"`
	DiscoveryFile    string   `json:"discoveryFile"`
	OpenDiffs        []string `json:"openDiffs"`
}

func (s *sidecar) status(t testing.TB) status {
	t.Helper()
	var st status
	if err := s.ed.Call(wait, "status/get", nil, &st); err != nil {
		t.Fatalf("status/get: %v\nsidecar stderr:\n%s", err, s.ed.Stderr())
	}
	return st
}

// pollStatus waits until cond holds for the sidecar's status and returns
// the last status read.
func (s *sidecar) pollStatus(t testing.TB, timeout time.Duration, what string, cond func(status) bool) status {
	t.Helper()
	var st status
	if !testkit.Poll(timeout, func() bool { st = s.status(t); return cond(st) }) {
		t.Fatalf("%s: not reached within %s; last status %+v", what, timeout, st)
	}
	return st
}

// noCrash fails the test if the sidecar died or reported a panic, a fatal
// runtime error or a data race.
func (s *sidecar) noCrash(t testing.TB) {
	t.Helper()
	select {
	case <-s.ed.Exited():
		t.Fatalf("sidecar exited\n%s", s.ed.Stderr())
	default:
	}
	for _, bad := range []string{"panic:", "fatal error:", "DATA RACE", "http: panic serving"} {
		if strings.Contains(s.ed.Stderr(), bad) {
			t.Fatalf("sidecar stderr reports %q:\n%s", bad, s.ed.Stderr())
		}
	}
}

func (s *sidecar) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", s.res.Port) }
func (s *sidecar) host() string {
	return fmt.Sprintf("127.0.0.1:%d", s.res.Port)
}

// rpcMessage is any JSON-RPC message read from the sidecar's MCP side.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// rawClient speaks MCP over plain HTTP requests, so a test controls
// exactly which requests are sent: in particular it can drop an event
// stream without ever sending DELETE, as Gemini CLI does when it exits.
type rawClient struct {
	port  int
	token string
	hc    *http.Client
}

func newRawClient(t testing.TB, s *sidecar) *rawClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &rawClient{port: s.res.Port, token: s.res.AuthToken, hc: &http.Client{Transport: tr}}
}

func (c *rawClient) request(ctx context.Context, method, sid string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://127.0.0.1:%d/mcp", c.port), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	return req, nil
}

// post sends one JSON-RPC message and returns the HTTP status, the session
// ID header and the messages in the answer (JSON or an event stream).
func (c *rawClient) post(ctx context.Context, sid string, msg any) (int, string, []rpcMessage, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return 0, "", nil, err
	}
	req, err := c.request(ctx, http.MethodPost, sid, body)
	if err != nil {
		return 0, "", nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	var msgs []rpcMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = readEvents(resp.Body, func(data []byte) bool {
			var m rpcMessage
			if json.Unmarshal(data, &m) == nil {
				msgs = append(msgs, m)
			}
			return true
		})
		if errors.Is(err, io.EOF) {
			err = nil
		}
	} else {
		var data []byte
		data, err = io.ReadAll(resp.Body)
		var m rpcMessage
		if len(bytes.TrimSpace(data)) > 0 && json.Unmarshal(data, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msgs, err
}

// connect starts a session the way Gemini CLI does (initialize, then
// notifications/initialized) and returns its ID.
func (c *rawClient) connect(ctx context.Context) (string, error) {
	code, sid, _, err := c.post(ctx, "", map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{
			"protocolVersion": protocolVersion,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]string{"name": "raw-cli", "version": "1"},
		},
	})
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if code != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: status %d, session %q", code, sid)
	}
	if code, _, _, err := c.post(ctx, sid, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil || code != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: status %d, %v", code, err)
	}
	return sid, nil
}

// callTool calls a tool and returns its result.
func (c *rawClient) callTool(ctx context.Context, sid string, id int, name string, args any) (toolResult, error) {
	code, _, msgs, err := c.post(ctx, sid, map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args},
	})
	if err != nil {
		return toolResult{}, err
	}
	for _, m := range msgs {
		if string(m.ID) != fmt.Sprint(id) {
			continue
		}
		if m.Error != nil {
			return toolResult{}, fmt.Errorf("tools/call %s: error %d %s", name, m.Error.Code, m.Error.Message)
		}
		var r toolResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			return toolResult{}, fmt.Errorf("tools/call %s: result %s: %w", name, m.Result, err)
		}
		return r, nil
	}
	return toolResult{}, fmt.Errorf("tools/call %s: status %d, no answer in %v", name, code, msgs)
}

type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// stream is a session's event stream (the GET). It answers the server's
// pings, as the real CLI does, and records every notification.
type stream struct {
	notes  *notes
	cancel context.CancelFunc
	done   chan struct{}
	local  int // the client's port of the stream's connection
}

// openStream opens the event stream of session sid. The stream ends when
// drop is called or the server ends it.
func (c *rawClient) openStream(ctx context.Context, sid string) (*stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	var local int
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if a, ok := info.Conn.LocalAddr().(*net.TCPAddr); ok {
			local = a.Port
		}
	}})
	req, err := c.request(ctx, http.MethodGet, sid, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET stream: status %d", resp.StatusCode)
	}
	st := &stream{notes: newNotes(), cancel: cancel, done: make(chan struct{}), local: local}
	go func() {
		defer close(st.done)
		defer resp.Body.Close()
		_ = readEvents(resp.Body, func(data []byte) bool {
			var m rpcMessage
			if json.Unmarshal(data, &m) != nil {
				return true
			}
			switch {
			case m.Method == "ping" && len(m.ID) > 0:
				_, _, _, _ = c.post(ctx, sid, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{}})
			case m.Method != "" && len(m.ID) == 0:
				st.notes.add(m.Method, m.Params)
			}
			return true
		})
	}()
	return st, nil
}

// drop closes the stream from the client's side (no DELETE) and waits for
// its reader to end.
func (st *stream) drop() {
	st.cancel()
	<-st.done
}

// waitStreamClosed waits until the sidecar has closed its end of a dropped
// stream's connection: it has then seen the stream end (the handler has
// returned), so what it does next happens in the session's grace period.
// It reads the sidecar's sockets from /proc.
func (s *sidecar) waitStreamClosed(t *testing.T, st *stream) {
	t.Helper()
	table := fmt.Sprintf("/proc/%d/net/tcp", s.res.PID)
	if _, err := os.Stat(table); err != nil {
		t.Skipf("needs %s: %v", table, err)
	}
	local := fmt.Sprintf(":%04X", s.res.Port)
	remote := fmt.Sprintf(":%04X", st.local)
	open := func() bool {
		data, _ := os.ReadFile(table)
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			// Established (01) or waiting for the sidecar to close (08).
			if len(f) > 3 && strings.HasSuffix(f[1], local) && strings.HasSuffix(f[2], remote) && (f[3] == "01" || f[3] == "08") {
				return true
			}
		}
		return false
	}
	if !testkit.Poll(wait, func() bool { return !open() }) {
		t.Fatalf("the sidecar still holds the dropped stream's connection after %s", wait)
	}
}

// readEvents calls fn with the data of each server-sent event in r until r
// ends or fn returns false.
func readEvents(r io.Reader, fn func(data []byte) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && err == nil:
			if len(data) > 0 && !fn(data) {
				return nil
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
		if err != nil {
			return err
		}
	}
}

// notes records notifications in arrival order and lets a test wait for
// them.
type notes struct {
	mu     sync.Mutex
	list   []note
	signal chan struct{}
}

type note struct {
	Method string
	Params json.RawMessage
}

func newNotes() *notes { return &notes{signal: make(chan struct{})} }

func (n *notes) add(method string, params json.RawMessage) {
	n.mu.Lock()
	n.list = append(n.list, note{method, append(json.RawMessage(nil), params...)})
	close(n.signal)
	n.signal = make(chan struct{})
	n.mu.Unlock()
}

func (n *notes) all() []note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]note(nil), n.list...)
}

// wait returns the first note of method matching match (nil: any), or
// false after timeout.
func (n *notes) wait(method string, timeout time.Duration, match func(json.RawMessage) bool) (json.RawMessage, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	from := 0
	for {
		n.mu.Lock()
		list, sig := n.list, n.signal
		n.mu.Unlock()
		for ; from < len(list); from++ {
			if list[from].Method == method && (match == nil || match(list[from].Params)) {
				return list[from].Params, true
			}
		}
		select {
		case <-sig:
		case <-deadline.C:
			return nil, false
		}
	}
}

func has(sub string) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool { return strings.Contains(string(p), sub) }
}
