package companion

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// TestLifecycleCallsAreSafeInAnyOrder calls Close after a failed Start
// (it panicked), Close twice, Start again after the failure, and Start
// after Close. A Start fails here because its context has ended, which
// takes the same way back as a failing listen.
func TestLifecycleCallsAreSafeInAnyOrder(t *testing.T) {
	dir := t.TempDir()
	id := Identity{IDE: discovery.IDEInfo{Name: "test", DisplayName: "Test"}, Workspace: []string{t.TempDir()}, IDEPID: os.Getpid()}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	s := New(Options{DiscoveryDir: dir, Logger: zerolog.Nop()})
	if _, err := s.Start(ended, id); err == nil {
		t.Fatal("Start with an ended context succeeded")
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
	s = New(Options{DiscoveryDir: dir, Logger: zerolog.Nop()})
	if _, err := s.Start(ended, id); err == nil {
		t.Fatal("Start with an ended context succeeded")
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

// TestPanicInARequestAnswersThatRequest has an MCP method handler panic:
// the request gets an error answer (a tool call an isError result) and
// the process goes on.
func TestPanicInARequestAnswersThatRequest(t *testing.T) {
	s := New(Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()})
	boom := func(context.Context, string, mcp.Request) (mcp.Result, error) { panic("boom") }
	h := s.server.recoverPanics(boom)
	res, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{})
	tr, ok := res.(*mcp.CallToolResult)
	if err != nil || !ok || !tr.IsError || !strings.Contains(tr.Content[0].(*mcp.TextContent).Text, "boom") {
		t.Fatalf("tools/call that panicked: %#v, %v", res, err)
	}
	if _, err := h(context.Background(), "tools/list", &mcp.ListToolsRequest{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("tools/list that panicked: %v", err)
	}
}
