package link

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/wirecheck"
)

// contentLengths finds every Content-Length value in an input, so the fuzz
// target can tell when the input itself announces a body so big that it
// swallows whatever follows.
var contentLengths = regexp.MustCompile(`(?i)content-length\s*:\s*\+?([0-9]+)`)

// readLSPFrame reads one frame as the sidecar must write it: exactly
// "Content-Length: N\r\n\r\n" and N bytes.
func readLSPFrame(br *bufio.Reader) ([]byte, error) {
	h, err := br.ReadString('\n')
	if err != nil {
		if h == "" && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("header: %q: %w", h, err)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(h, "Content-Length: "), "\r\n"))
	if err != nil || !strings.HasPrefix(h, "Content-Length: ") || !strings.HasSuffix(h, "\r\n") {
		return nil, fmt.Errorf("bad header line %q", h)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		return nil, fmt.Errorf("no blank line after the header: %q %v", blank, err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("body of %d bytes: %w", n, err)
	}
	return body, nil
}

// FuzzConnLSP feeds arbitrary bytes to a Conn in LSP framing (headers in
// any state, bodies cut short, lengths over the limit), then enough blank
// lines to finish any body the input left open, then one well-formed
// request. The Conn must not panic, must write only well-formed frames
// whose bodies are JSON-RPC messages, must answer that request unless the
// input announced a body over the limit (which is skipped by its announced
// length and so may swallow it), and must end cleanly at the end of input.
func FuzzConnLSP(f *testing.F) {
	for _, seed := range []string{
		lspFrame(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}`),
		"Content-Length: 5\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n",
		"content-length:2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
		"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ",
		"\r\n\r\nContent-Length: 2\r\nX: y\r\n\r\n{}Content-Length: 99999999999\r\n\r\n",
		"Content-Length 12\r\n\r\n",
		"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}",
		lspFrame(`{"jsonrpc":"2.0","method":"note"}`) + lspFrame(`not json`) + lspFrame(`[]`),
		strings.Repeat("X-Long: "+strings.Repeat("a", 100), 100) + "\r\n\r\n",
	} {
		f.Add([]byte(seed), uint16(0))
	}
	f.Fuzz(func(t *testing.T, input []byte, maxBody uint16) {
		limit := 128 + int(maxBody)%4096
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		c := New(inR, outW, &fuzzHandler{}, WithFraming(LSP), WithMaxLine(limit))
		served := make(chan error, 1)
		go func() {
			served <- c.Serve(context.Background())
			outW.Close()
		}()

		const probe = `{"jsonrpc":"2.0","id":"probe-lsp","method":"echo","params":{"still":"here"}}`
		answered := make(chan struct{})
		checked := make(chan struct{})
		var bad []string
		go func() {
			defer close(checked)
			br := bufio.NewReader(outR)
			seen := false
			for {
				body, err := readLSPFrame(br)
				if err != nil {
					if !errors.Is(err, io.EOF) {
						bad = append(bad, err.Error())
						_, _ = io.Copy(io.Discard, br)
					}
					return
				}
				if err := wirecheck.CheckLine(body); err != nil {
					bad = append(bad, fmt.Sprintf("%v: %q", err, body))
				}
				if !seen && strings.Contains(string(body), `"id":"probe-lsp","result":{"still":"here"}`) {
					seen = true
					close(answered)
				}
			}
		}()

		swallows := false
		for _, m := range contentLengths.FindAllSubmatch(input, -1) {
			if n, err := strconv.Atoi(string(m[1])); err != nil || n > limit {
				swallows = true
			}
		}
		wrote := make(chan error, 1)
		go func() {
			_, err := inW.Write(input)
			if err == nil {
				// Finish a header block or a body the input left open;
				// blank lines between messages are skipped.
				_, err = io.WriteString(inW, strings.Repeat("\n", limit+2)+lspFrame(probe))
			}
			wrote <- err
		}()
		if !swallows {
			select {
			case <-answered:
			case <-time.After(10 * time.Second):
				inW.Close()
				t.Fatalf("the Conn did not answer a well-formed request after the input; output problems: %v", bad)
			}
		}
		if err := <-wrote; err != nil {
			t.Fatalf("write input: %v", err)
		}
		inW.Close()
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Serve at the end of input: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not end at the end of its input")
		}
		<-checked
		if len(bad) > 0 {
			t.Fatalf("malformed output:\n%s", strings.Join(bad, "\n"))
		}
	})
}
