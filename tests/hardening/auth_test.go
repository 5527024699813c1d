package hardening

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`

// oneShot sends each request on a new connection and keeps none open, so
// these tests leave nothing behind in the sidecar or in the test process.
var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func goodHeaders(token, sid string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set("Mcp-Protocol-Version", protocolVersion)
	}
	return h
}

// reply is what an attacker learns from one request.
type reply struct {
	status int
	header http.Header
	body   string
}

// send makes one request to the sidecar's endpoint with exactly the given
// Host, query and headers.
func (s *sidecar) send(t testing.TB, method, host, query string, h http.Header, body string) reply {
	t.Helper()
	u := s.url()
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header = h
	resp, err := oneShot.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return reply{resp.StatusCode, resp.Header, string(data)}
}

// authAttack is a way of not quite presenting the token.
type authAttack struct {
	name  string
	query string
	// auth returns the Authorization values to send (none if empty).
	auth  func(tok string) []string
	extra http.Header
}

func (a authAttack) headers(tok, sid string) http.Header {
	h := goodHeaders(tok, sid)
	h.Del("Authorization")
	for _, v := range a.auth(tok) {
		h.Add("Authorization", v)
	}
	for k, vs := range a.extra {
		h[k] = vs
	}
	return h
}

func authAttacks(tok string) []authAttack {
	none := func(string) []string { return nil }
	wrong := hex.EncodeToString(bytes.Repeat([]byte{0xab}, 32))
	return []authAttack{
		{name: "no token", auth: none},
		{name: "wrong token", auth: func(string) []string { return []string{"Bearer " + wrong} }},
		{name: "token in upper case", auth: func(t string) []string { return []string{"Bearer " + strings.ToUpper(t)} }},
		{name: "Bearer missing", auth: func(t string) []string { return []string{t} }},
		{name: "Bearer without space", auth: func(t string) []string { return []string{"Bearer" + t} }},
		{name: "Basic scheme", auth: func(t string) []string { return []string{"Basic " + t} }},
		{name: "token cut short", auth: func(t string) []string { return []string{"Bearer " + t[:len(t)-1]} }},
		{name: "token with one more character", auth: func(t string) []string { return []string{"Bearer " + t + "0"} }},
		{name: "wrong and right token", auth: func(t string) []string { return []string{"Bearer " + wrong, "Bearer " + t} }},
		{name: "token in the query", query: "token=" + tok, auth: none},
		{name: "token in the query as authToken", query: "authToken=" + url.QueryEscape(tok), auth: none},
		{name: "token in the query as access_token", query: "access_token=" + tok, auth: none},
		{name: "token in a cookie", auth: none, extra: http.Header{"Cookie": {"token=" + tok}}},
		{name: "token in another header", auth: none, extra: http.Header{"X-Auth-Token": {tok}}},
	}
}

// TestRequestsWithoutTheTokenReachNothing sends every way of not quite
// presenting the token, on POST, GET and DELETE, before and after a real
// CLI has a session: each gets 401 and nothing reaches the MCP server.
func TestRequestsWithoutTheTokenReachNothing(t *testing.T) {
	t.Parallel()
	s := start(t)
	tok := s.res.AuthToken
	attacks := authAttacks(tok)

	// No session yet: nothing may start one.
	for _, a := range attacks {
		for _, method := range []string{"POST", "GET", "DELETE"} {
			r := s.send(t, method, s.host(), a.query, a.headers(tok, ""), initBody)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s, %s: status %d, want 401", a.name, method, r.status)
			}
			if strings.Contains(r.body, tok) || r.header.Get("Mcp-Session-Id") != "" {
				t.Errorf("%s, %s: the answer gives something away: %q %v", a.name, method, r.body, r.header)
			}
		}
	}
	if st := s.status(t); st.Sessions != 0 || st.ConnectedClients != 0 {
		t.Fatalf("refused requests created sessions: %+v", st)
	}

	// A real CLI's session: refused requests naming it must not touch it.
	cli := testkit.ConnectCLI(t, s.res.Port, tok)
	cli.WaitFor(t, "ide/contextUpdate", wait, nil)
	sid := cli.Session.ID()
	path := filepath.Join(s.sb.Workspace, "target.txt")
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"openDiff","arguments":{"filePath":%q,"newContent":"pwned"}}}`, path)
	for _, a := range attacks {
		for _, method := range []string{"POST", "GET", "DELETE"} {
			if r := s.send(t, method, s.host(), a.query, a.headers(tok, sid), call); r.status != http.StatusUnauthorized {
				t.Errorf("%s, %s on a live session: status %d, want 401", a.name, method, r.status)
			}
		}
	}
	st := s.status(t)
	if st.Sessions != 1 || st.ConnectedClients != 1 || len(st.OpenDiffs) != 0 {
		t.Fatalf("refused requests changed the sidecar: %+v", st)
	}
	if reqs := s.ed.Requests(); len(reqs) != 0 {
		t.Fatalf("a refused openDiff reached the editor: %v", reqs)
	}
	if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("the CLI's session was harmed: %v", err)
	}
	s.noCrash(t)
}

// TestBrowsersAndRebindingAreRefused plays a web page: one that reaches
// the port through a rebound DNS name (its Host is not the loopback
// address), and one that sends a cross-origin request or a CORS preflight
// (it carries Origin). Both get 403 with a good token and without, and no
// CORS header that would let a page read the answer.
func TestBrowsersAndRebindingAreRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	tok := s.res.AuthToken
	port := strconv.Itoa(s.res.Port)
	hosts := []string{
		"evil.example:" + port, "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost",
		"localhost.evil.example:" + port, "127.0.0.1.nip.io:" + port, "[::1]:" + port,
		"0.0.0.0:" + port, "127.0.0.2:" + port, "127.1:" + port, "2130706433:" + port,
	}
	origins := []string{
		"https://evil.example", "null", "http://127.0.0.1:" + port, "http://localhost:" + port, "", "file://",
	}
	type attempt struct {
		what   string
		host   string
		header http.Header
	}
	var attempts []attempt
	for _, withToken := range []bool{true, false} {
		h := goodHeaders(tok, "")
		if !withToken {
			h.Set("Authorization", "Bearer "+strings.Repeat("0", 64))
		}
		for _, host := range hosts {
			attempts = append(attempts, attempt{fmt.Sprintf("Host %q (token %v)", host, withToken), host, h})
		}
		for _, o := range origins {
			oh := h.Clone()
			oh["Origin"] = []string{o}
			attempts = append(attempts, attempt{fmt.Sprintf("Origin %q (token %v)", o, withToken), s.host(), oh})
		}
	}
	for _, a := range attempts {
		for _, method := range []string{"POST", "GET", "DELETE", "OPTIONS", "PUT"} {
			h := a.header.Clone()
			if method == "OPTIONS" {
				h.Set("Access-Control-Request-Method", "POST")
				h.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id")
			}
			r := s.send(t, method, a.host, "", h, initBody)
			if r.status != http.StatusForbidden {
				t.Errorf("%s, %s: status %d, want 403", a.what, method, r.status)
			}
			for k := range r.header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("%s, %s: CORS header %s in the answer", a.what, method, k)
				}
			}
		}
	}
	// An HTTP/1.0 request may leave Host out altogether.
	if got := rawStatus(t, s, "POST /mcp HTTP/1.0\r\nAuthorization: Bearer "+tok+"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"); got != http.StatusForbidden {
		t.Errorf("no Host: status %d, want 403", got)
	}
	if st := s.status(t); st.Sessions != 0 {
		t.Fatalf("refused requests created sessions: %+v", st)
	}
	s.noCrash(t)
}

// rawStatus writes req as is on a new connection and returns the status.
func rawStatus(t *testing.T, s *sidecar, req string) int {
	t.Helper()
	conn, err := net.Dial("tcp", s.host())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestListensOnLoopbackOnly reads the sidecar's own sockets from /proc:
// every socket it listens on is 127.0.0.1, so nothing on the network can
// reach it. (No packet is sent to a non-loopback address.)
func TestListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	s := start(t)
	pid := s.res.PID
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("cannot read the sidecar's descriptors: %v", err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var listening []string
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			isTCP := strings.HasPrefix(table, "tcp")
			if isTCP && f[3] != "0A" { // not LISTEN: an accepted or outgoing connection
				continue
			}
			listening = append(listening, table+" "+f[1])
		}
	}
	want := fmt.Sprintf("tcp 0100007F:%04X", s.res.Port)
	if len(listening) != 1 || listening[0] != want {
		t.Fatalf("the sidecar listens on %v; want only %s (127.0.0.1:%d)", listening, want, s.res.Port)
	}
}

// TestUnauthenticatedPeersCannotHoldConnections: after a refusal the
// sidecar closes the connection, and a peer that never finishes its
// request headers is cut off, so other local users cannot pile up open
// connections. Meanwhile a real CLI works.
func TestUnauthenticatedPeersCannotHoldConnections(t *testing.T) {
	t.Parallel()
	s := start(t)
	// A refused request: the answer, then the end of the connection.
	conn, err := net.Dial("tcp", s.host())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(wait))
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", s.host())
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("the connection stays open after a refusal (read: %v)", err)
	}

	// Peers that send half a request and stall.
	const stalled = 20
	var conns []net.Conn
	for i := range stalled {
		c, err := net.Dial("tcp", s.host())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 {
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nX-Slow: ", s.host())
		}
		conns = append(conns, c)
	}
	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("a CLI cannot work next to stalled peers: %v", err)
	}
	// The sidecar gives a peer 10 s to send its headers.
	cut := time.Now().Add(20 * time.Second)
	for i, c := range conns {
		c.SetReadDeadline(cut)
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("stalled connection %d still open after 20 s (read: %v)", i, err)
		}
	}
	s.noCrash(t)
}

// TestOversizedHeadersAreRefused: a megabyte of headers is refused before
// any of it is used.
func TestOversizedHeadersAreRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	h := goodHeaders(s.res.AuthToken, "")
	h.Set("X-Padding", strings.Repeat("a", 2<<20))
	if r := s.send(t, "POST", s.host(), "", h, initBody); r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("2 MiB of headers: status %d", r.status)
	}
	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s.noCrash(t)
}
