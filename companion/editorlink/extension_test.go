package editorlink

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
)

// agentStub is an extension's handler: agent/ping answers and sends an
// agent/event to the plugin through the peer it was given; it takes the
// decisions on its own proposals (diffId from 2^40) and notes its Close.
type agentStub struct {
	peer    Peer
	server  *companion.Companion
	mu      sync.Mutex
	decided []string
	closed  int
}

const agentDiffs = 1 << 40

func (a *agentStub) Decide(path string, diffID uint64, accepted bool, content string) bool {
	if diffID < agentDiffs {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decided = append(a.decided, fmt.Sprintf("%s %d %v %q", path, diffID, accepted, content))
	return true
}

func (a *agentStub) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed++
	return nil
}

func (a *agentStub) HandleRequest(_ context.Context, method string, _ json.RawMessage) (any, error) {
	if method != "agent/ping" {
		return nil, link.Errorf(link.CodeMethodNotFound, "agent has no %s", method)
	}
	a.mu.Lock()
	decided := append([]string(nil), a.decided...)
	a.mu.Unlock()
	caps := a.peer.PluginCapabilities()
	if err := a.peer.Notify("agent/event", map[string]any{"kind": "pong", "clients": a.server.Status().ConnectedClients,
		"showsDiffs": caps.Diff == nil || *caps.Diff, "decided": decided}); err != nil {
		return nil, err
	}
	return map[string]bool{"pong": true}, nil
}

func (a *agentStub) HandleNotification(context.Context, string, json.RawMessage) {}

// Register implements ExtensionHandler: the stub takes the agent/
// namespace.
func (a *agentStub) Register(m *link.Mux) { m.Register("agent/", a) }

// TestExtensionsAddANamespace registers an agent/ extension: it turns on
// capabilities.agent, its requests are refused before initialize like any
// other, and afterwards they reach it; it can notify the plugin, sees the
// plugin's capabilities, takes the decisions on its own proposals (and only
// those), and is closed when the link ends.
func TestExtensionsAddANamespace(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	stub := &agentStub{}
	go func() {
		served <- Serve(context.Background(), inR, outW, Config{
			Options: companion.Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()},
			Extensions: []Extension{{Capability: "agent", New: func(peer Peer, s *companion.Companion) ExtensionHandler {
				stub.peer, stub.server = peer, s
				return stub
			}}},
		})
		outW.Close()
	}()
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// next returns the first message, received or to come, that matches;
	// messages it passes over stay for later calls.
	var backlog []map[string]json.RawMessage
	next := func(match func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
		t.Helper()
		for i, m := range backlog {
			if match(m) {
				backlog = append(backlog[:i:i], backlog[i+1:]...)
				return m
			}
		}
		timeout := time.After(10 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatal("the link ended")
				}
				if match(m) {
					return m
				}
				backlog = append(backlog, m)
			case <-timeout:
				t.Fatal("no matching message within 10 s")
			}
		}
	}
	byID := func(id string) func(map[string]json.RawMessage) bool {
		return func(m map[string]json.RawMessage) bool { return string(m["id"]) == id }
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"agent/ping"}`)
	if m := next(byID("1")); string(m["error"]) != `{"code":-32600,"message":"not initialized"}` {
		t.Fatalf("agent/ping before initialize: %s", m["error"])
	}
	params, _ := json.Marshal(map[string]any{"protocolVersion": 2, "ide": map[string]string{"name": "t", "displayName": "T"},
		"processId": os.Getpid(), "workspaceFolders": []string{t.TempDir()}, "capabilities": map[string]bool{"diff": false}})
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":` + string(params) + `}`)
	var res struct {
		Capabilities struct {
			Agent bool `json:"agent"`
		} `json:"capabilities"`
	}
	if m := next(byID("2")); json.Unmarshal(m["result"], &res) != nil || !res.Capabilities.Agent {
		t.Fatalf("initialize with an agent extension: %s %s", m["result"], m["error"])
	}
	// A decision on the agent's proposal goes to it; one on any other
	// proposal goes to the server (which has none open: expired).
	send(`{"jsonrpc":"2.0","method":"diff/accepted","params":{"filePath":"/w/a.txt","content":"A\n","diffId":1099511627777}}`)
	send(`{"jsonrpc":"2.0","method":"diff/accepted","params":{"filePath":"/w/b.txt","content":"B\n","diffId":7}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"agent/ping"}`)
	if m := next(byID("3")); string(m["result"]) != `{"pong":true}` {
		t.Fatalf("agent/ping: %s %s", m["result"], m["error"])
	}
	next(func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"agent/event"` &&
			string(m["params"]) == `{"clients":0,"decided":["/w/a.txt 1099511627777 true \"A\\n\""],"kind":"pong","showsDiffs":false}`
	})
	next(func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"log"` && string(m["params"]) == `{"level":"warn","message":"This proposal for b.txt expired; nothing was written."}`
	})
	send(`{"jsonrpc":"2.0","id":4,"method":"agent/other"}`)
	if m := next(byID("4")); string(m["error"]) != `{"code":-32601,"message":"agent has no agent/other"}` {
		t.Fatalf("agent/other: %s", m["error"])
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`)
	next(byID("5"))
	inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after shutdown")
	}
	if stub.closed != 1 {
		t.Fatalf("the extension was closed %d times, want once", stub.closed)
	}
}
