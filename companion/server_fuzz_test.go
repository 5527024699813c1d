package companion_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// quickEditor shows every diff at once.
type quickEditor struct{}

func (quickEditor) OpenDiff(ctx context.Context, req protocol.DiffOpenParams) error { return nil }
func (quickEditor) CloseDiff(ctx context.Context, path string) (*string, error) {
	return nil, nil
}

// panicWatch receives the standard logger's output, where net/http reports
// a panic in a handler it recovered from.
type panicWatch struct {
	mu   sync.Mutex
	seen []string
}

func (p *panicWatch) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("panic")) {
		p.mu.Lock()
		p.seen = append(p.seen, string(b))
		p.mu.Unlock()
	}
	return len(b), nil
}

func (p *panicWatch) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.seen
	p.seen = nil
	return s
}

// endpoint is the server under fuzzing, started once per fuzz process.
type endpoint struct {
	port  int
	token string
	hc    *http.Client
}

func (e endpoint) host() string { return fmt.Sprintf("127.0.0.1:%d", e.port) }

// roundTrip writes one raw HTTP request on a new connection and returns
// the status, the session header and up to 64 KiB of the body. An event
// stream answering a GET is not read: it stays open until the connection
// closes.
func (e endpoint) roundTrip(req []byte) (int, string, []byte, error) {
	conn, err := net.Dial("tcp", e.host())
	if err != nil {
		return 0, "", nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(req); err != nil {
		return 0, "", nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", nil, err
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if bytes.HasPrefix(req, []byte("GET ")) && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Closing the body would read the endless stream: closing the
		// connection (deferred) ends it.
		return resp.StatusCode, sid, nil, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, sid, body, nil
}

// post sends a well-formed JSON-RPC message to the endpoint, on a kept-alive
// connection.
func (e endpoint) post(sid, body string) (int, string, []byte, error) {
	req, err := http.NewRequest("POST", "http://"+e.host()+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), out, err
}

func (e endpoint) remove(sid string) {
	req, err := http.NewRequest("DELETE", "http://"+e.host()+"/mcp", nil)
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if resp, err := e.hc.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

const fuzzInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`

// session starts a session as the CLI does and returns its ID.
func (e endpoint) session() (string, error) {
	code, sid, body, err := e.post("", fuzzInit)
	if err != nil || code != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: status %d, session %q, %v: %s", code, sid, err, body)
	}
	if code, _, body, err := e.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || code != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: status %d, %v: %s", code, err, body)
	}
	return sid, nil
}

// token keeps the characters an HTTP method or path may have.
func token(s string, keep func(rune) bool, fallback string) string {
	s = strings.Map(func(r rune) rune {
		if keep(r) {
			return r
		}
		return -1
	}, s)
	if s == "" {
		return fallback
	}
	return s
}

// FuzzMCPEndpoint sends arbitrary requests to the MCP endpoint of one
// companion: any method, path, headers and body, with the right token or
// not, addressed to a live session or not. The companion must not panic,
// and a well-formed session (initialize, tools/list) must still work after
// each of them.
func FuzzMCPEndpoint(f *testing.F) {
	watch := &panicWatch{}
	log.SetOutput(watch)
	f.Cleanup(func() { log.SetOutput(io.Discard) })
	dir := f.TempDir()
	ws := f.TempDir()
	srv := companion.New(companion.Options{
		Version: "fuzz", DiscoveryDir: dir, Logger: zerolog.Nop(),
		MaxSessions: 100000, StreamGrace: 200 * time.Millisecond, KeepAlive: -1,
	})
	srv.SetEditor(quickEditor{})
	info, err := srv.Start(context.Background(), companion.Identity{
		IDE:       discovery.IDEInfo{Name: "fuzz", DisplayName: "Fuzz"},
		Workspace: []string{ws},
		IDEPID:    1,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	f.Cleanup(tr.CloseIdleConnections)
	e := endpoint{port: info.Port, token: info.AuthToken, hc: &http.Client{Transport: tr, Timeout: 10 * time.Second}}

	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte, sel byte) {
		sid, err := e.session()
		if err != nil {
			t.Fatalf("before the request: %v", err)
		}
		defer e.remove(sid)

		method = token(method, func(r rune) bool { return r > ' ' && r < 0x7f && r != ':' }, "POST")
		path = token(path, func(r rune) bool { return r > ' ' && r < 0x7f }, "/mcp")
		if !strings.HasPrefix(path, "/") && path != "*" {
			path = "/" + path
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, path)
		switch sel >> 4 & 3 {
		case 0:
			fmt.Fprintf(&b, "Host: %s\r\n", e.host())
		case 1:
			fmt.Fprintf(&b, "Host: localhost:%d\r\n", e.port)
		case 2:
			fmt.Fprintf(&b, "Host: evil.example:%d\r\n", e.port)
		}
		switch sel & 3 {
		case 0:
			fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", e.token)
		case 1:
			fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", strings.ToUpper(e.token))
		case 2:
			fmt.Fprintf(&b, "Authorization: %s\r\n", e.token)
		}
		if sel>>2&3 == 0 {
			fmt.Fprintf(&b, "Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n", sid)
		}
		set := map[string]bool{}
		for _, line := range strings.Split(headers, "\n") {
			line = strings.Map(func(r rune) rune {
				if r == '\r' || r == 0 {
					return -1
				}
				return r
			}, line)
			name, value, ok := strings.Cut(line, ":")
			name = strings.TrimSpace(name)
			if !ok || name == "" {
				continue
			}
			switch strings.ToLower(name) {
			case "host", "content-length", "transfer-encoding", "connection", "expect", "te", "trailer", "upgrade":
				continue // framing stays the harness's
			}
			set[strings.ToLower(name)] = true
			fmt.Fprintf(&b, "%s:%s\r\n", name, value)
		}
		if !set["content-type"] {
			b.WriteString("Content-Type: application/json\r\n")
		}
		if !set["accept"] {
			b.WriteString("Accept: application/json, text/event-stream\r\n")
		}
		fmt.Fprintf(&b, "Connection: close\r\nContent-Length: %d\r\n\r\n", len(body))
		req := append([]byte(b.String()), body...)

		_, newSID, _, err := e.roundTrip(req)
		if err != nil && !isTimeout(err) {
			// A request the server cannot parse may end the connection
			// without an answer; what matters is what follows.
			t.Logf("request: %v", err)
		}
		if newSID != "" && newSID != sid {
			e.remove(newSID)
		}
		if p := watch.take(); len(p) > 0 {
			t.Fatalf("a handler panicked:\n%s", p)
		}

		// A well-formed session still works.
		check, err := e.session()
		if err != nil {
			t.Fatalf("after the request: %v", err)
		}
		defer e.remove(check)
		code, _, out, err := e.post(check, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if err != nil || code != http.StatusOK || !bytes.Contains(out, []byte(`"openDiff"`)) || !bytes.Contains(out, []byte(`"closeDiff"`)) {
			t.Fatalf("tools/list after the request: status %d, %v: %s", code, err, out)
		}
		if st := srv.Status(); st.Port != e.port {
			t.Fatalf("status %+v", st)
		}
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
