package link

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestWritesToAPeerThatStoppedReadingHaveDeadlines plays an editor that
// stops reading the sidecar's output: a Call gives up when its context
// ends, a Notify fails with ErrStalled after the write timeout, later
// writes fail at once, and once the peer reads again every line arrives
// whole and in order and writing works again.
func TestWritesToAPeerThatStoppedReadingHaveDeadlines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := New(inR, outW, &recorder{}, WithWriteTimeout(200*time.Millisecond))
	served := make(chan struct{})
	go func() { defer close(served); _ = c.Serve(context.Background()) }()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-served })
	br := bufio.NewReader(outR)
	// One exchange while the peer reads: the link is up.
	go inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}` + "\n"))
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("echo: %q, %v", line, err)
	}

	// Nobody reads outR: the first write blocks in the pipe.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "diff/open", map[string]string{"filePath": "/w/a"}, nil) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Call to a peer that reads nothing succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call to a peer that reads nothing did not return after its context ended")
	}
	start := time.Now()
	if err := c.Notify("log", map[string]string{"message": "one"}); !errors.Is(err, ErrStalled) {
		t.Fatalf("Notify while the peer reads nothing: %v, want ErrStalled", err)
	}
	if err := c.Notify("log", map[string]string{"message": "two"}); !errors.Is(err, ErrStalled) {
		t.Fatalf("second Notify: %v, want ErrStalled at once", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stalled writes took %s", d)
	}

	// The peer reads again: the request that was under way arrives whole,
	// and new lines follow it.
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"diff/open"`) || !json.Valid([]byte(line)) {
		t.Fatalf("first line after the stall: %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Notify("log", map[string]string{"message": "three"}) }()
	line, err = br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"three"`) {
		t.Fatalf("line after recovery: %q, %v", line, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Notify after the peer reads again: %v", err)
	}
}

type panicky struct{ recorder }

func (p *panicky) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == "explode" {
		panic("kaboom")
	}
	return p.recorder.HandleRequest(ctx, method, params)
}

func (p *panicky) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	if method == "explode" {
		panic("kaboom")
	}
}

// TestPanicInAHandlerAnswersThatRequest: a handler that panics gets its
// request answered with an internal error, and the link goes on.
func TestPanicInAHandlerAnswersThatRequest(t *testing.T) {
	_, in, out, _ := pipePeer(t, &panicky{})
	io.WriteString(in, `{"jsonrpc":"2.0","method":"explode"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"explode"}`+"\n")
	m := readMsg(t, out)
	e, _ := m["error"].(map[string]any)
	if m["id"] != 7.0 || e == nil || e["code"] != float64(CodeInternalError) || !strings.Contains(e["message"].(string), "kaboom") {
		t.Fatalf("answer to a request whose handler panicked: %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":8,"method":"echo","params":[1]}`+"\n")
	if m := readMsg(t, out); m["id"] != 8.0 || m["result"] == nil {
		t.Fatalf("the link after a panic: %v", m)
	}
}
