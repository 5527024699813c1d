package link

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

type recordingHandler struct {
	name  string
	got   []string
	notes []string
}

func (h *recordingHandler) HandleRequest(_ context.Context, method string, _ json.RawMessage) (any, error) {
	h.got = append(h.got, method)
	return h.name, nil
}

func (h *recordingHandler) HandleNotification(_ context.Context, method string, _ json.RawMessage) {
	h.notes = append(h.notes, method)
}

// TestMuxRoutesExactNamesThenLongestNamespace registers exact methods and
// nested namespaces and checks where each method goes, what an unknown
// request gets, and that unknown notifications are reported, not answered.
func TestMuxRoutesExactNamesThenLongestNamespace(t *testing.T) {
	m := NewMux()
	var unhandled []string
	m.Unhandled = func(method string) { unhandled = append(unhandled, method) }
	agent := &recordingHandler{name: "agent"}
	tasks := &recordingHandler{name: "tasks"}
	m.Register("agent/", agent)
	m.Register("agent/tasks/", tasks)
	m.HandleFunc("agent/exact", func(context.Context, json.RawMessage) (any, error) { return "exact", nil })
	var noted int
	m.NotifyFunc("context/fileFocused", func(context.Context, json.RawMessage) { noted++ })

	ctx := context.Background()
	for method, want := range map[string]string{
		"agent/send":       "agent",
		"agent/tasks/list": "tasks",
		"agent/exact":      "exact",
	} {
		got, err := m.HandleRequest(ctx, method, nil)
		if err != nil || got != want {
			t.Errorf("%s went to %v (%v), want %s", method, got, err, want)
		}
	}
	_, err := m.HandleRequest(ctx, "agentx", nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeMethodNotFound || rpcErr.Message != `unknown method "agentx"` {
		t.Errorf("unknown request: %v, want -32601 naming it", err)
	}
	if _, err := m.HandleRequest(ctx, "context/fileFocused", nil); !errors.As(err, &rpcErr) || rpcErr.Code != CodeMethodNotFound {
		t.Errorf("a notification method called as a request: %v, want -32601", err)
	}
	m.HandleNotification(ctx, "context/fileFocused", nil)
	m.HandleNotification(ctx, "agent/event", nil)
	m.HandleNotification(ctx, "nobody/knows", nil)
	if noted != 1 || len(agent.notes) != 1 || len(unhandled) != 1 || unhandled[0] != "nobody/knows" {
		t.Errorf("notifications: fileFocused %d, agent %v, unhandled %v", noted, agent.notes, unhandled)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering agent/ twice did not panic")
		}
	}()
	m.Register("agent/", agent)
}
