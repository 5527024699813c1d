package testkit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
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
