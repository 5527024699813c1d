package companion

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// failFirstListen makes the first loopback listen fail, as it does on a
// machine without a loopback interface or out of file descriptors.
func failFirstListen() func(string, string) (net.Listener, error) {
	var calls atomic.Int32
	return func(network, address string) (net.Listener, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("no loopback interface")
		}
		return net.Listen(network, address)
	}
}

// TestLifecycleCallsAreSafeInAnyOrder calls Close after a failed Start
// (it panicked), Close twice, Start again after the failure, and Start
// after Close.
func TestLifecycleCallsAreSafeInAnyOrder(t *testing.T) {
	dir := t.TempDir()
	id := Identity{IDE: discovery.IDEInfo{Name: "test", DisplayName: "Test"}, Workspace: []string{t.TempDir()}, IDEPID: os.Getpid()}
	s := New(Options{DiscoveryDir: dir, Logger: zerolog.Nop(), listen: failFirstListen()})
	if _, err := s.Start(context.Background(), id); err == nil {
		t.Fatal("Start with a failing listen succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after a failed Start: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Start(context.Background(), id); err == nil {
		t.Fatal("Start after Close succeeded")
	}

	// A failed Start can be retried.
	s = New(Options{DiscoveryDir: dir, Logger: zerolog.Nop(), listen: failFirstListen()})
	if _, err := s.Start(context.Background(), id); err == nil {
		t.Fatal("Start with a failing listen succeeded")
	}
	info, err := s.Start(context.Background(), id)
	if err != nil {
		t.Fatalf("Start after a failed one: %v", err)
	}
	if _, err := os.Stat(info.DiscoveryFile); err != nil {
		t.Fatalf("no discovery file after the retried Start: %v", err)
	}
	if _, err := s.Start(context.Background(), id); err == nil {
		t.Fatal("a second Start of a started server succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(info.DiscoveryFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("discovery file after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after Close: %v", err)
	}

	// Close before Start, and a Start with a context already ended.
	s = New(Options{DiscoveryDir: dir, Logger: zerolog.Nop()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Start(ctx, id); err == nil {
		t.Fatal("Start with an ended context succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestInitializeCanBeRetriedAfterAFailedOne has the editor retry an
// initialize whose start failed: the retry is served (it was refused as
// "already initialized"), and the link still shuts down cleanly.
func TestInitializeCanBeRetriedAfterAFailedOne(t *testing.T) {
	dir := t.TempDir()
	ws := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- ServeEditorLink(context.Background(), inR, outW, Options{
			DiscoveryDir: dir, Logger: zerolog.Nop(), listen: failFirstListen(),
		})
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
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "test", "displayName": "Test"},
		"processId": os.Getpid(), "workspaceFolders": []string{ws},
	})
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + string(params) + `}`)
	if m := read("1"); m["error"] == nil || !strings.Contains(string(m["error"]), "loopback") {
		t.Fatalf("first initialize: %s %s, want an error naming the listen failure", m["result"], m["error"])
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":` + string(params) + `}`)
	m := read("2")
	var res InitializeResult
	if m["error"] != nil || json.Unmarshal(m["result"], &res) != nil || res.Port == 0 || res.DiscoveryFile == "" {
		t.Fatalf("retried initialize: %s %s", m["result"], m["error"])
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	read("3")
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeEditorLink: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the link did not end after shutdown")
	}
	inW.Close()
	if _, err := os.Stat(res.DiscoveryFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("discovery file after shutdown: %v", err)
	}
}

// TestPanicInARequestAnswersThatRequest has an MCP method handler panic:
// the request gets an error answer (a tool call an isError result) and
// the process goes on.
func TestPanicInARequestAnswersThatRequest(t *testing.T) {
	s := New(Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()})
	boom := func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") }
	h := s.recoverPanics(boom)
	res, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{})
	tr, ok := res.(*mcp.CallToolResult)
	if err != nil || !ok || !tr.IsError || !strings.Contains(tr.Content[0].(*mcp.TextContent).Text, "boom") {
		t.Fatalf("tools/call that panicked: %#v, %v", res, err)
	}
	if _, err := h(context.Background(), "tools/list", &mcp.ListToolsRequest{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("tools/list that panicked: %v", err)
	}
}
