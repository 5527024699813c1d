package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// linkRec serves a few of the link's methods and records what it got;
// the others are never called here.
type linkRec struct {
	LinkHandler
	init   []protocol.InitializeParams
	closed []string
}

func (r *linkRec) Initialize(_ context.Context, p protocol.InitializeParams) (protocol.InitializeResult, error) {
	r.init = append(r.init, p)
	return protocol.InitializeResult{Port: 7}, nil
}

func (r *linkRec) Shutdown(context.Context) error { return nil }

func (r *linkRec) ContextFileClosed(_ context.Context, p protocol.FileClosedParams) error {
	r.closed = append(r.closed, p.Path)
	if p.Path == "" {
		return errors.New("no path")
	}
	return nil
}

type agentRec struct {
	AgentHandler
	starts []protocol.AgentStartParams
}

func (r *agentRec) AgentStart(_ context.Context, p protocol.AgentStartParams) (protocol.AgentStartResult, error) {
	r.starts = append(r.starts, p)
	return protocol.AgentStartResult{Status: "starting"}, nil
}

func code(err error) int {
	var le *link.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return 0
}

// TestRegisteredMethodsDecodeTheirParams: each method gets its params
// typed; absent params are refused unless the method's are optional, a
// field of the wrong type is refused naming it, a notification that
// cannot be taken goes to dropped, a Final method's answer ends the link,
// and a method nobody registered is unknown.
func TestRegisteredMethodsDecodeTheirParams(t *testing.T) {
	m := link.NewMux()
	lr, ar := &linkRec{}, &agentRec{}
	var dropped []string
	report := func(method string, err error) { dropped = append(dropped, method+": "+err.Error()) }
	RegisterLink(m, lr, report)
	RegisterAgent(m, ar, report)
	ctx := context.Background()

	res, err := m.HandleRequest(ctx, "initialize", json.RawMessage(`{"protocolVersion":2,"ide":{"name":"n","displayName":"N"}}`))
	if err != nil || res.(protocol.InitializeResult).Port != 7 || len(lr.init) != 1 || *lr.init[0].ProtocolVersion != 2 || lr.init[0].IDE.Name != "n" {
		t.Fatalf("initialize: %v %v %+v", res, err, lr.init)
	}
	for _, raw := range []string{"", "null"} {
		if _, err := m.HandleRequest(ctx, "initialize", json.RawMessage(raw)); code(err) != link.CodeInvalidParams || !strings.Contains(err.Error(), "params are required") {
			t.Fatalf("initialize with params %q: %v", raw, err)
		}
	}
	if _, err := m.HandleRequest(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2"}`)); code(err) != link.CodeInvalidParams || !strings.Contains(err.Error(), "protocolVersion: expected int") {
		t.Fatalf("initialize with a string version: %v", err)
	}
	if len(lr.init) != 1 {
		t.Fatalf("refused params reached the handler: %+v", lr.init)
	}
	if res, err := m.HandleRequest(ctx, "shutdown", nil); err != nil || res != (link.Final{}) {
		t.Fatalf("shutdown: %#v %v", res, err)
	}

	for _, raw := range []string{"", "null", "{}"} {
		if res, err := m.HandleRequest(ctx, "agent/start", json.RawMessage(raw)); err != nil || res.(protocol.AgentStartResult).Status != "starting" {
			t.Fatalf("agent/start with params %q: %v %v", raw, res, err)
		}
	}
	if _, err := m.HandleRequest(ctx, "agent/start", json.RawMessage(`{"pid":"12"}`)); code(err) != link.CodeInvalidParams || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("agent/start with a string pid: %v", err)
	}
	if len(ar.starts) != 3 {
		t.Fatalf("agent/start reached the handler %d times, want 3", len(ar.starts))
	}

	m.HandleNotification(ctx, "context/fileClosed", json.RawMessage(`{"path":"/w/a"}`))
	m.HandleNotification(ctx, "context/fileClosed", json.RawMessage(`{"path":5}`))
	m.HandleNotification(ctx, "context/fileClosed", json.RawMessage(`{"path":""}`))
	if strings.Join(lr.closed, ",") != "/w/a," {
		t.Fatalf("fileClosed got %q", lr.closed)
	}
	if len(dropped) != 2 || !strings.HasPrefix(dropped[0], "context/fileClosed: ") || !strings.Contains(dropped[0], "path: expected string") ||
		!strings.Contains(dropped[1], "no path") {
		t.Fatalf("dropped %q", dropped)
	}

	for _, method := range []string{"editor/unknown", "agent/nope"} {
		if _, err := m.HandleRequest(ctx, method, nil); code(err) != link.CodeMethodNotFound || !strings.Contains(err.Error(), method) {
			t.Fatalf("%s: %v", method, err)
		}
	}
	if _, err := m.HandleRequest(ctx, "context/fileClosed", json.RawMessage(`{"path":"/w/a"}`)); code(err) != link.CodeMethodNotFound {
		t.Fatalf("a notification sent as a request: %v", err)
	}
}
