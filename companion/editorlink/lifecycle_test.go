package editorlink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
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

// initializeLine is an initialize request for a workspace, with processId
// when pid is not 0.
func initializeLine(t *testing.T, id int, ws string, pid int) string {
	t.Helper()
	p := map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "test", "displayName": "Test"},
		"workspaceFolders": []string{ws},
	}
	if pid != 0 {
		p["processId"] = pid
	}
	params, _ := json.Marshal(p)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":%s}`+"\n", id, params)
}

// TestInitializeWithoutAParentSaysWhatToPass: with no processId and no
// parent process to take for the editor (a Windows program started by a
// process that is not one, or whose parent has exited), initialize fails
// saying what to pass, and a retry with processId works.
func TestInitializeWithoutAParentSaysWhatToPass(t *testing.T) {
	saved := getppid
	t.Cleanup(func() { getppid = saved })
	getppid = func() int { return 0 }
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, outW, Config{Options: companion.Options{
			DiscoveryDir: t.TempDir(), Logger: zerolog.Nop(),
		}})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	ws := t.TempDir()
	inW.Write([]byte(initializeLine(t, 1, ws, 0)))
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"error"`) || !strings.Contains(line, "pass processId, the PID of the editor process") {
		t.Fatalf("initialize without processId and without a parent: %s", line)
	}
	inW.Write([]byte(initializeLine(t, 2, ws, os.Getpid())))
	if line, err = br.ReadString('\n'); err != nil || !strings.Contains(line, `"port"`) {
		t.Fatalf("initialize with processId: %q, %v", line, err)
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// TestEditorDeathEndsServeWhileAReadIsPending: the editor process dies
// while the sidecar's stdin, a pipe whose write end lives on elsewhere,
// has a read pending. Serve removes the discovery file and returns: on
// Windows closing such a pipe waits for the read, which never ends.
func TestEditorDeathEndsServeWhileAReadIsPending(t *testing.T) {
	editor := testproc.Command("sleep")
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { editor.Process.Kill(); editor.Wait() })
	inR, inW := stdinPipe(t)
	// The write end outlives the editor (as when the editor's terminal
	// children inherited it); closed only when the test ends.
	t.Cleanup(func() { inW.Close() })
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, outW, Config{Options: companion.Options{
			DiscoveryDir: t.TempDir(), Logger: zerolog.Nop(),
		}})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	ws := t.TempDir()
	if _, err := inW.Write([]byte(initializeLine(t, 1, ws, editor.Process.Pid))); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	var answer struct {
		Result protocol.InitializeResult `json:"result"`
	}
	if err != nil || json.Unmarshal([]byte(line), &answer) != nil || answer.Result.DiscoveryFile == "" {
		t.Fatalf("initialize: %q, %v", line, err)
	}
	go io.Copy(io.Discard, br)
	editor.Process.Kill()
	editor.Wait()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the sidecar outlived its editor: Serve did not return while its stdin read was pending")
	}
	if _, err := os.Stat(answer.Result.DiscoveryFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("discovery file after the editor died: %v", err)
	}
}
