package link

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// readLSP reads one Content-Length framed message from r.
func readLSP(t *testing.T, r *bufio.Reader) map[string]any {
	t.Helper()
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read header: %v", err)
		}
		if !strings.HasSuffix(line, "\r\n") {
			t.Fatalf("header line %q does not end in CRLF", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "" {
			break
		}
		name, value, _ := strings.Cut(line, ":")
		if name != "Content-Length" {
			t.Fatalf("unexpected header %q", line)
		}
		length, err = strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			t.Fatalf("bad Content-Length %q", value)
		}
	}
	if length < 0 {
		t.Fatal("no Content-Length header")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("read body: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	return m
}

func lspFrame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

func TestLSPFramingRequestAndReply(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{}, WithFraming(LSP))
	// Extra headers are ignored; header names are case-insensitive; the
	// body may hold newlines and non-ASCII text.
	body := "{\"jsonrpc\":\"2.0\",\"id\":7,\n\"method\":\"echo\",\"params\":{\"s\":\"héllo <&>\"}}"
	go io.WriteString(in, fmt.Sprintf("content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s", len(body), body))
	m := readLSP(t, out)
	if m["id"] != float64(7) {
		t.Fatalf("reply id = %v, want 7: %v", m["id"], m)
	}
	if got := m["result"].(map[string]any)["s"]; got != "héllo <&>" {
		t.Fatalf("echoed %q", got)
	}
}

func TestLSPFramingBadHeaderIsAnsweredAndTheLinkGoesOn(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{}, WithFraming(LSP))
	go func() {
		io.WriteString(in, "Content-Type: text/plain\r\n\r\n")
		io.WriteString(in, "Content-Length: many\r\n\r\n")
		io.WriteString(in, lspFrame(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`))
	}()
	for i, want := range []string{"no Content-Length", "is not a length"} {
		m := readLSP(t, out)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(CodeParseError) || !strings.Contains(e["message"].(string), want) || m["id"] != nil {
			t.Fatalf("message %d: want a parse error naming %q with id null, got %v", i, want, m)
		}
	}
	if m := readLSP(t, out); m["id"] != float64(1) {
		t.Fatalf("the link did not go on after bad headers: %v", m)
	}
}

func TestLSPFramingOversizedBodyIsSkipped(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{}, WithFraming(LSP), WithMaxLine(64))
	big := `{"jsonrpc":"2.0","id":2,"method":"echo","params":"` + strings.Repeat("x", 200) + `"}`
	go func() {
		io.WriteString(in, lspFrame(big))
		io.WriteString(in, lspFrame(`{"jsonrpc":"2.0","id":3,"method":"echo","params":[]}`))
	}()
	m := readLSP(t, out)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(CodeInvalidRequest) || !strings.Contains(e["message"].(string), "longer than 64 bytes") {
		t.Fatalf("want an invalid-request error for the big message, got %v", m)
	}
	if m := readLSP(t, out); m["id"] != float64(3) {
		t.Fatalf("the message after the big one was lost: %v", m)
	}
}

func TestLSPFramingTruncatedBodyEndsTheLinkCleanly(t *testing.T) {
	_, in, _, done := pipePeer(t, &recorder{}, WithFraming(LSP))
	io.WriteString(in, "Content-Length: 100\r\n\r\n{\"jsonrpc\"")
	in.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("Serve = %v, want an unexpected EOF error", err)
	}
}

func TestLSPFramingNotifyAndCallFromOurSide(t *testing.T) {
	c, in, out, _ := pipePeer(t, &recorder{}, WithFraming(LSP))
	sent := make(chan error, 1)
	go func() { sent <- c.Notify("status", map[string]int{"connectedClients": 2}) }()
	if m := readLSP(t, out); m["method"] != "status" {
		t.Fatalf("want the status notification, got %v", m)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	var got struct{ Content string }
	go func() { res <- c.Call(context.Background(), "diff/close", map[string]string{"filePath": "/x"}, &got) }()
	req := readLSP(t, out)
	if req["method"] != "diff/close" {
		t.Fatalf("want diff/close, got %v", req)
	}
	io.WriteString(in, lspFrame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"content":"kept"}}`, req["id"])))
	if err := <-res; err != nil || got.Content != "kept" {
		t.Fatalf("Call = %v, %+v", err, got)
	}
}

func TestParseFraming(t *testing.T) {
	for in, want := range map[string]Framing{"": NDJSON, "ndjson": NDJSON, "LSP": LSP} {
		if got, err := ParseFraming(in); err != nil || got != want {
			t.Errorf("ParseFraming(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFraming("xml"); err == nil {
		t.Error("ParseFraming(xml) gave no error")
	}
}

func FuzzLSPReader(f *testing.F) {
	f.Add([]byte(lspFrame(`{"jsonrpc":"2.0","id":1,"method":"x"}`)))
	f.Add([]byte("Content-Length: 5\r\n\r\n{}"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("\r\n\r\nContent-Length: 2\r\nX: y\r\n\r\n{}Content-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newMessageReader(strings.NewReader(string(data)), LSP, 1024)
		for i := 0; i < 10000; i++ {
			msg, err := r.next()
			if len(msg) > 1024 {
				t.Fatalf("message of %d bytes over the limit", len(msg))
			}
			if err != nil && err != errTooLong {
				if _, ok := err.(*errBadHeader); !ok {
					return
				}
			}
		}
	})
}
