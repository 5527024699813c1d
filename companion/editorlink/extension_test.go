package editorlink

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
)

// agentStub is an extension's handler: agent/ping answers and sends an
// agent/event to the plugin through the peer it was given.
type agentStub struct {
	peer   Peer
	server *companion.Server
}

func (a *agentStub) HandleRequest(_ context.Context, method string, _ json.RawMessage) (any, error) {
	if method != "agent/ping" {
		return nil, link.Errorf(link.CodeMethodNotFound, "agent has no %s", method)
	}
	if err := a.peer.Notify("agent/event", map[string]any{"kind": "pong", "clients": a.server.Status().ConnectedClients}); err != nil {
		return nil, err
	}
	return map[string]bool{"pong": true}, nil
}

func (a *agentStub) HandleNotification(context.Context, string, json.RawMessage) {}

// TestExtensionsAddANamespace registers an agent/ extension: it turns on
// capabilities.agent, its requests are refused before initialize like any
// other, and afterwards they reach it and it can notify the plugin.
func TestExtensionsAddANamespace(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), inR, outW, Config{
			Options: companion.Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()},
			Extensions: []Extension{{Pattern: "agent/", Capability: "agent", New: func(peer Peer, s *companion.Server) link.Handler {
				return &agentStub{peer: peer, server: s}
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
		"processId": os.Getpid(), "workspaceFolders": []string{t.TempDir()}})
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":` + string(params) + `}`)
	var res struct {
		Capabilities struct {
			Agent bool `json:"agent"`
		} `json:"capabilities"`
	}
	if m := next(byID("2")); json.Unmarshal(m["result"], &res) != nil || !res.Capabilities.Agent {
		t.Fatalf("initialize with an agent extension: %s %s", m["result"], m["error"])
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"agent/ping"}`)
	if m := next(byID("3")); string(m["result"]) != `{"pong":true}` {
		t.Fatalf("agent/ping: %s %s", m["result"], m["error"])
	}
	next(func(m map[string]json.RawMessage) bool {
		return string(m["method"]) == `"agent/event"` && string(m["params"]) == `{"clients":0,"kind":"pong"}`
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
}
