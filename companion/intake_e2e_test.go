package companion_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
)

// capturePlugin plays the editor: it answers diff/open at once and hands
// each diff/open's params to the test.
type capturePlugin struct {
	in    *io.PipeWriter
	opens chan json.RawMessage
	init  chan json.RawMessage
}

func (p *capturePlugin) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(line, &m) == nil {
				switch {
				case m.Method == "diff/open":
					p.opens <- m.Params
					fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
				case m.Method == "" && m.Result != nil:
					select {
					case p.init <- m.Result:
					default:
					}
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// TestLargeProposalReachesTheEditorExactly sends proposals large enough
// for the intake, through the MCP SDK's client as Gemini CLI would, and
// checks that the editor gets each one byte for byte: escapes, astral
// characters, invalid UTF-8 (as U+FFFD, as before), and texts that look
// like the intake's own placeholder.
func TestLargeProposalReachesTheEditorExactly(t *testing.T) {
	dir := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &capturePlugin{in: inW, opens: make(chan json.RawMessage, 4), init: make(chan json.RawMessage, 1)}
	go p.read(outR)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- editorlink.Serve(ctx, inR, outW, editorlink.Config{Options: companion.Options{
			Version: "test", DiscoveryDir: t.TempDir(), Logger: zerolog.Nop(),
		}})
		outW.Close()
	}()
	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"ide":{"name":"t","displayName":"T"},"processId":%d,"workspaceFolders":[%q]}}`+"\n", os.Getpid(), dir)
	var res struct {
		Port      int    `json:"port"`
		AuthToken string `json:"authToken"`
	}
	select {
	case raw := <-p.init:
		if err := json.Unmarshal(raw, &res); err != nil || res.Port == 0 {
			t.Fatalf("initialize: %v %s", err, raw)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to initialize")
	}
	t.Cleanup(func() {
		fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
		inW.Close()
		<-served
		cancel()
	})
	hc := &http.Client{Transport: headers{h: map[string]string{
		"Authorization": "Bearer " + res.AuthToken,
	}, base: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", res.Port), HTTPClient: hc,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("line \"quoted\" \\ tab\t é 中 😀 \u2028 <&>\n", 4000) // ~190 KiB
	cases := []struct{ name, content, want string }{
		{"escapes and astral characters", big, big},
		{"invalid UTF-8", big + "\xff\xfe end", big + "\ufffd\ufffd end"},
		{"looks like the intake's placeholder", "lifted:FORGED:1" + strings.Repeat(" ", 64<<10), "lifted:FORGED:1" + strings.Repeat(" ", 64<<10)},
		{"a placeholder's shape", "lifted:FORGED:1", "lifted:FORGED:1"},
	}
	for _, c := range cases {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "openDiff", Arguments: map[string]any{"filePath": path, "newContent": c.content}})
		if err != nil || r.IsError {
			t.Fatalf("%s: openDiff: %v %+v", c.name, err, r)
		}
		var open struct {
			NewContent      string  `json:"newContent"`
			OriginalContent *string `json:"originalContent"`
			UnifiedDiff     string  `json:"unifiedDiff"`
		}
		select {
		case raw := <-p.opens:
			if err := json.Unmarshal(raw, &open); err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no diff/open", c.name)
		}
		if open.NewContent != c.want {
			t.Fatalf("%s: the editor got %d bytes that differ from the %d proposed", c.name, len(open.NewContent), len(c.want))
		}
		if open.OriginalContent == nil || *open.OriginalContent != "old\n" || !strings.HasPrefix(open.UnifiedDiff, "--- a"+path) {
			t.Fatalf("%s: original %v, diff %.80q", c.name, open.OriginalContent, open.UnifiedDiff)
		}
	}
}

// headers sets fixed headers on every request.
type headers struct {
	h    map[string]string
	base http.RoundTripper
}

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.h {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}
