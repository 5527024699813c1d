package link

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/wirecheck"
)

// fuzzHandler answers like a small sidecar: echo, an error of its choice,
// a plain error, a null result, and -32601 for anything else.
type fuzzHandler struct{ notes int }

func (h *fuzzHandler) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "echo":
		var v any
		if len(params) > 0 {
			if err := json.Unmarshal(params, &v); err != nil {
				return nil, Errorf(CodeInvalidParams, "params: %v", err)
			}
		}
		return v, nil
	case "fail":
		return nil, Errorf(CodeInvalidParams, "bad %s", params)
	case "boom":
		return nil, errors.New("plain failure")
	case "null":
		return nil, nil
	}
	return nil, Errorf(CodeMethodNotFound, "unknown method %q", method)
}

func (h *fuzzHandler) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	h.notes++
}

// FuzzConn feeds arbitrary bytes to a Conn that has a request of its own
// outstanding, then one well-formed request. The Conn must not panic,
// must write only well-formed JSON-RPC lines, must still answer that last
// request, and must end cleanly at the end of its input.
func FuzzConn(f *testing.F) {
	f.Fuzz(func(t *testing.T, input []byte, maxLine uint16) {
		limit := 128 + int(maxLine)%4096 // room for the final request
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		c := New(inR, outW, &fuzzHandler{}, WithMaxLine(limit))
		served := make(chan error, 1)
		go func() {
			served <- c.Serve(context.Background())
			outW.Close()
		}()

		// Everything the Conn writes is read and checked as it comes, so
		// the Conn never blocks on its output.
		const probe = `{"jsonrpc":"2.0","id":"probe-7d1c","method":"echo","params":{"still":"here"}}`
		requested := make(chan struct{})
		answered := make(chan struct{})
		checked := make(chan struct{})
		var bad []string
		go func() {
			defer close(checked)
			br := bufio.NewReader(outR)
			seen := false
			for n := 0; ; n++ {
				line, err := br.ReadBytes('\n')
				if n == 0 {
					close(requested) // the Call's request, written before any input
				}
				if len(line) > 0 {
					if err := wirecheck.CheckLine(bytes.TrimSuffix(line, []byte("\n"))); err != nil {
						bad = append(bad, fmt.Sprintf("%v: %q", err, line))
					}
					if !seen && bytes.Contains(line, []byte(`"id":"probe-7d1c","result":{"still":"here"}`)) {
						seen = true
						close(answered)
					}
				}
				if err != nil {
					return
				}
			}
		}()

		// A request of the Conn's own, which the input may or may not
		// answer (its id is 1).
		called := make(chan error, 1)
		go func() { called <- c.Call(context.Background(), "diff/open", map[string]string{"filePath": "/x"}, nil) }()
		<-requested

		wrote := make(chan error, 1)
		go func() {
			_, err := inW.Write(input)
			if err == nil {
				_, err = io.WriteString(inW, "\n"+probe+"\n")
			}
			wrote <- err
		}()
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			inW.Close()
			t.Fatal("the Conn did not answer a well-formed request after the input")
		}
		if err := <-wrote; err != nil {
			t.Fatalf("write input: %v", err)
		}
		inW.Close()
		if err := <-served; err != nil {
			t.Fatalf("Serve at the end of input: %v", err)
		}
		<-checked
		// The input may have answered the call, with a result or an error;
		// otherwise the end of the link fails it.
		if err := <-called; err != nil && !errors.Is(err, ErrClosed) {
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("outstanding call ended with %v", err)
			}
		}
		if len(bad) > 0 {
			t.Fatalf("malformed output:\n%s", bad)
		}
	})
}
