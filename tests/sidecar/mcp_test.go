package sidecar

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// started is a sidecar after initialize, with its editor.
type started struct {
	sb  *testkit.Sandbox
	ed  *testkit.Editor
	res protocol.InitializeResult
}

func start(t *testing.T) started {
	t.Helper()
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, nil)
	return started{sb, ed, res}
}

// cli connects a Gemini CLI session to the started sidecar.
func (s started) cli(t *testing.T) *testkit.CLI {
	t.Helper()
	return testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
}

// file writes content to a new file name in the workspace and returns its
// path.
func (s started) file(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(s.sb.Workspace, name)
	write(t, path, content)
	return path
}

// write puts content in the file at path, as another tool would.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawPOST sends one HTTP request by hand (so headers are exactly as given)
// and returns the status code.
func rawRequest(t *testing.T, port int, method, host string, headers map[string]string, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestRequestsAreGuarded(t *testing.T) {
	s := start(t)
	port, tok := s.res.Port, s.res.AuthToken
	host := fmt.Sprintf("127.0.0.1:%d", port)
	good := map[string]string{
		"Authorization": "Bearer " + tok,
		"Content-Type":  "application/json",
		"Accept":        "application/json, text/event-stream",
	}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	cases := []struct {
		name    string
		method  string
		host    string
		headers map[string]string
		want    int
	}{
		{"no token", "POST", host, with("Authorization", ""), 401},
		{"wrong token", "POST", host, with("Authorization", "Bearer "+strings.Repeat("0", 64)), 401},
		{"token in other case", "POST", host, with("Authorization", "Bearer "+strings.ToUpper(tok)), 401},
		{"no Bearer", "POST", host, with("Authorization", tok), 401},
		{"GET without token", "GET", host, with("Authorization", ""), 401},
		{"DELETE without token", "DELETE", host, with("Authorization", ""), 401},
		{"rebinding host", "POST", fmt.Sprintf("evil.example:%d", port), good, 403},
		{"other port in host", "POST", "127.0.0.1:1", good, 403},
		{"origin", "POST", host, with("Origin", "https://evil.example"), 403},
		{"preflight", "OPTIONS", host, with("Origin", "https://evil.example"), 403},
		{"good, localhost", "POST", fmt.Sprintf("localhost:%d", port), good, 200},
	}
	for _, c := range cases {
		if got := rawRequest(t, port, c.method, c.host, c.headers, initBody); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	// The token in the query string does not count.
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp?token=%s", port, tok), strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("token in query: %d", resp.StatusCode)
	}
	// Refusals are logged with the reason, never with the token.
	if !strings.Contains(s.ed.Stderr(), "request refused") || strings.Contains(s.ed.Stderr(), tok) {
		t.Errorf("refusals not logged, or the token leaked into logs")
	}
}

func TestHugeBodiesGet413(t *testing.T) {
	s := start(t)
	// Declared too large: refused before reading.
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.res.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{",
		s.res.Port, s.res.AuthToken, int64(1)<<40)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 {
		t.Fatalf("declared 1 TiB body: %d", resp.StatusCode)
	}
	// Streamed without a length: cut while reading.
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`))
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = 'a'
		}
		for i := 0; i < 200; i++ {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/mcp", s.res.Port), pr)
	req.Header.Set("Authorization", "Bearer "+s.res.AuthToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	r2, err := http.DefaultClient.Do(req)
	pr.Close()
	if err != nil {
		t.Fatalf("chunked: %v", err)
	}
	r2.Body.Close()
	if r2.StatusCode != 413 {
		t.Fatalf("chunked 200 MiB body: %d", r2.StatusCode)
	}
	// The sidecar is still fine.
	cli := s.cli(t)
	if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("after huge bodies: %v", err)
	}
}

func TestToolsListed(t *testing.T) {
	s := start(t)
	cli := s.cli(t)
	res, err := cli.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	// The diff tools the CLI uses itself, and the editor tools
	// (docs/editor-tools.md) for any MCP client with the token.
	if strings.Join(names, ",") != "closeDiff,getDefinition,getDiagnostics,getDocumentSymbols,getHover,getOpenEditors,getReferences,openDiff,openFile,searchWorkspaceSymbols" {
		t.Fatalf("tools %v", names)
	}
	// The editor hears that a CLI connected.
	s.ed.WaitFor(t, "status", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), `"connectedClients":1`) })
	s.ed.WaitFor(t, "log", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "connected") })
}

func TestUnknownSessionAndMethods(t *testing.T) {
	s := start(t)
	h := map[string]string{
		"Authorization":  "Bearer " + s.res.AuthToken,
		"Content-Type":   "application/json",
		"Accept":         "application/json, text/event-stream",
		"Mcp-Session-Id": "nope",
	}
	host := fmt.Sprintf("127.0.0.1:%d", s.res.Port)
	if got := rawRequest(t, s.res.Port, "POST", host, h, initBody); got != 404 {
		t.Errorf("unknown session POST: %d", got)
	}
	if got := rawRequest(t, s.res.Port, "GET", host, h, ""); got != 404 {
		t.Errorf("unknown session GET: %d", got)
	}
	if got := rawRequest(t, s.res.Port, "PUT", host, h, ""); got != 405 {
		t.Errorf("PUT: %d", got)
	}
	delete(h, "Mcp-Session-Id")
	h["Content-Type"] = "text/plain"
	if got := rawRequest(t, s.res.Port, "POST", host, h, initBody); got != 415 {
		t.Errorf("text/plain POST: %d", got)
	}
}

// sessionRequest is a request to the MCP endpoint with the headers a
// Streamable HTTP client sends: a GET opens the event stream, a POST
// carries body. sid is "" for the POST that starts a session.
func sessionRequest(t *testing.T, ctx context.Context, method string, port int, token, sid, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, fmt.Sprintf("http://127.0.0.1:%d/mcp", port), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// rawSession starts an MCP session by hand and returns its ID.
func rawSession(t *testing.T, port int, token string) string {
	t.Helper()
	post := func(sid, body string) *http.Response {
		req := sessionRequest(t, context.Background(), http.MethodPost, port, token, sid, body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	sid := post("", initBody).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

func TestCLIThatDropsItsStreamIsGone(t *testing.T) {
	// Gemini CLI never sends DELETE: leaving only drops the event stream.
	s := start(t)
	sid := rawSession(t, s.res.Port, s.res.AuthToken)
	ctx, cancel := context.WithCancel(context.Background())
	req := sessionRequest(t, ctx, http.MethodGet, s.res.Port, s.res.AuthToken, sid, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The stream carries the current context as soon as it opens.
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	for err == nil && !strings.Contains(line, "ide/contextUpdate") {
		line, err = br.ReadString('\n')
	}
	if err != nil {
		t.Fatalf("no contextUpdate on the new stream: %v", err)
	}
	s.ed.WaitFor(t, "status", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), `"connectedClients":1`) })
	cancel()
	resp.Body.Close()
	mark := s.ed.Len()
	s.ed.WaitFrom(t, mark, "status", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), `"connectedClients":0`) })
}

func TestAToolAnswerComesInOnePiece(t *testing.T) {
	// The answer to a tool call is one event: it goes out whole, with its
	// length, rather than as a chunked stream flushed event by event.
	s := start(t)
	sid := rawSession(t, s.res.Port, s.res.AuthToken)
	path := s.file(t, "a.txt", "old\n")
	args, _ := json.Marshal(map[string]string{"filePath": path, "newContent": "new\n"})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"openDiff","arguments":` + string(args) + `}}`
	req := sessionRequest(t, context.Background(), http.MethodPost, s.res.Port, s.res.AuthToken, sid, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"id":7,"result"`) {
		t.Fatalf("openDiff answer: HTTP %d %q", resp.StatusCode, answer)
	}
	if resp.ContentLength != int64(len(answer)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("answer sent in pieces: Content-Length %d, Transfer-Encoding %v, %d bytes", resp.ContentLength, resp.TransferEncoding, len(answer))
	}
	s.ed.WaitFor(t, "request:diff/open", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "a.txt") })
}
