package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"
)

// SlowLSMain runs the calling test binary as a slow language server when
// the environment variable logEnv names a log file, and exits; it returns
// at once when logEnv is not set. Call it first thing in TestMain; the
// editor under test starts the test binary (os.Executable) as its
// language server, with logEnv in its environment.
//
// The server speaks LSP on stdin and stdout: it answers initialize
// (definitions, full text sync), answers textDocument/definition on the
// first line only once the document changed after the request (the user
// typed), and never answers it elsewhere. It logs "definition <line> <id>",
// "change" and "cancel <id>" lines to the log file, so that a test sees
// what reached it.
func SlowLSMain(logEnv string) {
	logPath := os.Getenv(logEnv)
	if logPath == "" {
		return
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		os.Exit(2)
	}
	note := func(format string, args ...any) { fmt.Fprintf(logf, format+"\n", args...) }
	r := textproto.NewReader(bufio.NewReader(os.Stdin))
	send := func(msg map[string]any) {
		msg["jsonrpc"] = "2.0"
		body, _ := json.Marshal(msg)
		fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	type waiting struct {
		id  json.RawMessage
		uri string
	}
	var held []waiting
	for {
		head, err := r.ReadMIMEHeader()
		if err != nil {
			os.Exit(0)
		}
		var n int
		fmt.Sscan(head.Get("Content-Length"), &n)
		body := make([]byte, n)
		if _, err := io.ReadFull(r.R, body); err != nil {
			os.Exit(0)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ID           json.RawMessage `json:"id"`
				TextDocument struct {
					URI string `json:"uri"`
				} `json:"textDocument"`
				Position struct {
					Line int `json:"line"`
				} `json:"position"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil {
			continue
		}
		switch msg.Method {
		case "initialize":
			send(map[string]any{"id": msg.ID, "result": map[string]any{
				"capabilities": map[string]any{"definitionProvider": true, "textDocumentSync": 1},
				"serverInfo":   map[string]any{"name": "slowls"},
			}})
		case "textDocument/definition":
			note("definition %d %s", msg.Params.Position.Line+1, msg.ID)
			if msg.Params.Position.Line == 0 {
				held = append(held, waiting{msg.ID, msg.Params.TextDocument.URI})
			}
		case "textDocument/didChange":
			note("change")
			for _, w := range held {
				send(map[string]any{"id": w.id, "result": []any{map[string]any{
					"uri":   w.uri,
					"range": map[string]any{"start": map[string]any{"line": 2, "character": 0}, "end": map[string]any{"line": 2, "character": 5}},
				}}})
			}
			held = nil
		case "$/cancelRequest":
			note("cancel %s", msg.Params.ID)
		case "exit":
			os.Exit(0)
		default:
			if len(msg.ID) > 0 {
				send(map[string]any{"id": msg.ID, "result": nil})
			}
		}
	}
}

// CheckSlowLSLocation checks that a, a getDefinition answered by the slow
// language server of SlowLSMain for the file at path, is the one location
// it answers with, as the model reads it: path, line 3, character 1, the
// text "gamma" (the third line of the tests' file); more() says more on
// failure.
func CheckSlowLSLocation(t testing.TB, a ToolAnswer, path string, more func() string) {
	t.Helper()
	var res struct {
		Locations []struct {
			Path  string `json:"path"`
			Range struct {
				Start struct{ Line, Character int }
			} `json:"range"`
			Text string `json:"text"`
		} `json:"locations"`
	}
	if a.IsErr || json.Unmarshal([]byte(a.Text), &res) != nil || len(res.Locations) != 1 {
		t.Fatalf("getDefinition answered %q (error %v), want the server's one location\n%s", a.Text, a.IsErr, more())
	}
	l := res.Locations[0]
	if l.Path != path || l.Range.Start.Line != 3 || l.Range.Start.Character != 1 || l.Text != "gamma" {
		t.Errorf("getDefinition answered %+v, want %s 3:1 \"gamma\"", l, path)
	}
}

// CheckDeadlineError checks that a is the error an agent gets when the
// language server called name did not answer textDocument/definition
// within the editor's deadline.
func CheckDeadlineError(t testing.TB, a ToolAnswer, name string) {
	t.Helper()
	want := name + " did not answer textDocument/definition in time; it may still be loading the workspace: try again"
	if !a.IsErr || a.Text != want {
		t.Errorf("getDefinition answered %q (error %v), want the error %q", a.Text, a.IsErr, want)
	}
}

// WaitFileHas waits until the file at path (a log a test's stand-in
// writes) contains what; if it does not within timeout, the test fails
// with the file and more().
func WaitFileHas(t testing.TB, path, what string, timeout time.Duration, more func() string) {
	t.Helper()
	if !Poll(timeout, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), what)
	}) {
		b, _ := os.ReadFile(path)
		t.Fatalf("%s never had %q; it has:\n%s\n%s", path, what, b, more())
	}
}
