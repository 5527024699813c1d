package editorlink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/wirecheck"
)

// stepWait bounds each of the fuzz function's three waits.
const stepWait = 3 * time.Second

// asksShutdown reports whether input holds a line that could be a shutdown
// request, the one thing after which the sidecar may stop answering.
func asksShutdown(input []byte) bool {
	for _, line := range bytes.Split(input, []byte("\n")) {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(bytes.TrimSpace(line), &m) == nil && m.Method == "shutdown" {
			return true
		}
	}
	return false
}

// FuzzEditorLink runs the sidecar in-process behind an editor link, has
// the editor initialize it properly, then sends arbitrary bytes (malformed
// JSON, wrong types, unknown methods, answers to requests never made,
// events with absurd values) followed by a status/get. The sidecar must
// not panic, must write only well-formed JSON-RPC lines, must answer the
// status/get (unless the input asked it to shut down), and must stop
// cleanly when the editor closes the link.
//
// Each wait is bounded by stepWait, and the three together stay under the
// 10 s after which Go's fuzzing engine kills a worker without saying why:
// a sidecar that hangs fails here with what it was waiting for.
func FuzzEditorLink(f *testing.F) {
	dir := f.TempDir()
	ws := f.TempDir()
	initLine, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": "init-5b2e", "method": "initialize",
		"params": map[string]any{
			"protocolVersion":  1,
			"ide":              map[string]string{"name": "fuzz", "displayName": "Fuzz"},
			"processId":        os.Getpid(),
			"workspaceFolders": []string{ws},
		},
	})
	const probe = `{"jsonrpc":"2.0","id":"probe-5b2e","method":"status/get"}`
	f.Fuzz(func(t *testing.T, input []byte) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() {
			served <- editorlink.Serve(context.Background(), inR, outW, editorlink.Config{Options: companion.Options{
				Version: "fuzz", DiscoveryDir: dir, Logger: zerolog.Nop(), EditorTimeout: time.Second,
			}})
			outW.Close()
		}()

		initialized := make(chan struct{})
		answered := make(chan struct{})
		checked := make(chan struct{})
		var bad []string
		go func() {
			defer close(checked)
			br := bufio.NewReader(outR)
			var sawInit, sawProbe bool
			for {
				line, err := br.ReadBytes('\n')
				if len(line) > 0 {
					if err := wirecheck.CheckLine(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
						bad = append(bad, fmt.Sprintf("%v: %q", err, line))
					}
					if !sawInit && bytes.Contains(line, []byte(`"id":"init-5b2e","result":{"port":`)) {
						sawInit = true
						close(initialized)
					}
					if !sawProbe && bytes.Contains(line, []byte(`"id":"probe-5b2e","result":{`)) && bytes.Contains(line, []byte(`"port":`)) {
						sawProbe = true
						close(answered)
					}
				}
				if err != nil {
					return
				}
			}
		}()
		finish := func() {
			inW.Close()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("ServeEditorLink: %v", err)
				}
			case <-time.After(stepWait):
				t.Fatalf("the sidecar did not stop within %s of its input closing", stepWait)
			}
			<-checked
		}

		if _, err := inW.Write(append(initLine, '\n')); err != nil {
			t.Fatal(err)
		}
		select {
		case <-initialized:
		case <-time.After(stepWait):
			finish()
			t.Fatalf("no answer to initialize within %s: %v", stepWait, bad)
		}
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			if _, err := inW.Write(input); err == nil {
				_, _ = io.WriteString(inW, "\n"+probe+"\n")
			}
		}()
		select {
		case <-answered:
		case <-checked:
			// The link ended: only a shutdown request may do that.
			if !asksShutdown(input) {
				t.Fatalf("the sidecar stopped without being asked to; output problems: %v", bad)
			}
		case <-time.After(stepWait):
			finish()
			t.Fatalf("no answer to status/get within %s after the input", stepWait)
		}
		finish()
		<-wrote
		if len(bad) > 0 {
			t.Fatalf("malformed output:\n%s", bad)
		}
	})
}
