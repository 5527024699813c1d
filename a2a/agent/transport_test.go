package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// The SSE reader takes events far over a2a-go's 64 KiB line limit, joins
// multi-line data, and ignores comments and other fields.
func TestReadSSE(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	in := ": comment\nevent: message\ndata: {\"a\":\"" + big + "\"}\n\ndata: one\ndata: two\r\n\r\ndata: last"
	var got []string
	for data, err := range readSSE(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if len(got) != 3 || got[0] != `{"a":"`+big+`"}` || got[1] != "one\ntwo" || got[2] != "last" {
		t.Fatalf("events: %d, sizes %v", len(got), func() (n []int) {
			for _, g := range got {
				n = append(n, len(g))
			}
			return
		}())
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4000":                             "http://127.0.0.1:4000",
		"http://127.0.0.1:4000/":                            "http://127.0.0.1:4000",
		"http://127.0.0.1:4000/.well-known/agent-card.json": "http://127.0.0.1:4000",
	} {
		if got, err := BaseURL(in); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x", "127.0.0.1:4000", "http://"} {
		if _, err := BaseURL(bad); err == nil {
			t.Errorf("BaseURL(%q) succeeded", bad)
		}
	}
}

// A request with one answer: its result decoded, a JSON-RPC error, an HTTP
// error and a malformed answer each come back as a clear error.
func TestCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch req.Method {
		case "tasks/get":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"input-required"},"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}]}}`)
		case "tasks/cancel":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`)
		case "broken":
			fmt.Fprintf(w, `{"jsonrpc":`)
		default:
			http.Error(w, "no", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := &rpcClient{url: srv.URL, hc: srv.Client()}
	ctx := context.Background()
	var task a2a.Task
	if err := c.call(ctx, "tasks/get", &a2a.TaskQueryParams{ID: "t1"}, &task); err != nil {
		t.Fatal(err)
	}
	if task.ID != "t1" || task.Status.State != a2a.TaskStateInputRequired || len(task.History) != 1 {
		t.Fatalf("task = %+v", task)
	}
	if tp, ok := task.History[0].Parts[0].(a2a.TextPart); !ok || tp.Text != "hi" {
		t.Fatalf("history part = %#v", task.History[0].Parts[0])
	}
	for method, want := range map[string]string{"tasks/cancel": "Task not found (code -32001)", "broken": "malformed answer", "other": "HTTP 503"} {
		err := c.call(ctx, method, nil, &task)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v; want %q", method, err, want)
		}
	}
}
