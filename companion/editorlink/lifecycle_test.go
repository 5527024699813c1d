package editorlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// TestInitializeCanBeRetriedAfterAFailedOne has the editor retry an
// initialize that failed (its processId names no process): the retry is
// served, not refused as "already initialized", and the link still shuts
// down cleanly.
func TestInitializeCanBeRetriedAfterAFailedOne(t *testing.T) {
	dir := t.TempDir()
	ws := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, outW, Config{Options: companion.Options{
			DiscoveryDir: dir, Logger: zerolog.Nop(),
		}})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	send := func(line string) {
		t.Helper()
		if _, err := inW.Write([]byte(line + "\n")); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	// read returns the answer to id, skipping notifications.
	read := func(id string) map[string]json.RawMessage {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("read answer %s: %v", id, err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("bad line %q: %v", line, err)
			}
			if string(m["id"]) == id {
				return m
			}
		}
	}
	bad, _ := json.Marshal(map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "test", "displayName": "Test"},
		"processId": 1 << 30, "workspaceFolders": []string{ws},
	})
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "test", "displayName": "Test"},
		"processId": os.Getpid(), "workspaceFolders": []string{ws},
	})
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + string(bad) + `}`)
	if m := read("1"); m["error"] == nil || !strings.Contains(string(m["error"]), "processId") {
		t.Fatalf("first initialize: %s %s, want an error naming processId", m["result"], m["error"])
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":` + string(params) + `}`)
	m := read("2")
	var res protocol.InitializeResult
	if m["error"] != nil || json.Unmarshal(m["result"], &res) != nil || res.Port == 0 || res.DiscoveryFile == "" {
		t.Fatalf("retried initialize: %s %s", m["result"], m["error"])
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	read("3")
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the link did not end after shutdown")
	}
	inW.Close()
	if _, err := os.Stat(res.DiscoveryFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("discovery file after shutdown: %v", err)
	}
}
