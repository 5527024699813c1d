package companion_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
)

// benchPlugin is the far end of an editor link served in-process: it answers
// diff/open and diff/close at once, as the benchmark driver's editor does.
type benchPlugin struct {
	toSidecar *io.PipeWriter
	wmu       sync.Mutex
	initDone  chan json.RawMessage
	done      chan struct{}
}

// readLoop reads the sidecar's lines. It looks only at the head of each line
// (id and method), so a large diff/open costs the plugin next to nothing.
func (p *benchPlugin) readLoop(r io.Reader) {
	defer close(p.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			p.handle(line)
		}
		if err != nil {
			return
		}
	}
}

func (p *benchPlugin) handle(line []byte) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var id json.RawMessage
	var method string
	if _, err := dec.Token(); err != nil { // {
		return
	}
	for dec.More() && (id == nil || method == "") {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := tok.(string)
		switch key {
		case "id":
			if err := dec.Decode(&id); err != nil {
				return
			}
		case "method":
			if err := dec.Decode(&method); err != nil {
				return
			}
		case "result":
			// The answer to initialize (the only request the plugin sends
			// that has a result worth reading).
			var res json.RawMessage
			if err := dec.Decode(&res); err == nil {
				select {
				case p.initDone <- res:
				default:
				}
			}
			return
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return
			}
		}
	}
	if id == nil || method == "" {
		return
	}
	result := `{}`
	if method == "diff/close" {
		result = `{"content":null}`
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

func (p *benchPlugin) send(line string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = io.WriteString(p.toSidecar, line+"\n")
}

// bearer adds the companion's token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(req)
}

// startLinked runs the sidecar in-process behind an editor link and
// connects one MCP client session to it, the way Gemini CLI does.
func startLinked(b *testing.B, workspace string) *mcp.ClientSession {
	b.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &benchPlugin{toSidecar: inW, initDone: make(chan json.RawMessage, 1), done: make(chan struct{})}
	go p.readLoop(outR)

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		err := editorlink.Serve(ctx, inR, outW, editorlink.Config{Options: companion.Options{
			Version:      "bench",
			DiscoveryDir: b.TempDir(),
			Logger:       zerolog.Nop(),
		}})
		_ = outW.Close()
		served <- err
	}()

	init := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "bench", "displayName": "Bench"},
		"processId": os.Getpid(), "workspaceFolders": []string{workspace},
	}}
	line, _ := json.Marshal(init)
	p.send(string(line))
	var res struct {
		Port      int    `json:"port"`
		AuthToken string `json:"authToken"`
	}
	if err := json.Unmarshal(<-p.initDone, &res); err != nil || res.Port == 0 {
		b.Fatalf("initialize: %v (%+v)", err, res)
	}

	hc := &http.Client{Transport: bearer{token: res.AuthToken, base: http.DefaultTransport.(*http.Transport).Clone()}}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   fmt.Sprintf("http://127.0.0.1:%d/mcp", res.Port),
		HTTPClient: hc,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		p.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
		_ = inW.Close()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("sidecar: %v", err)
		}
		cancel()
		<-p.done
	})
	return cs
}

// benchFile writes about size bytes of numbered lines to dir and returns its
// path and a proposal with one line changed in the middle.
func benchFile(b *testing.B, dir string, size int) (string, string) {
	b.Helper()
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "line %07d: the quick brown fox jumps over the lazy dog, again.\n", i)
	}
	original := sb.String()[:size]
	path := filepath.Join(dir, fmt.Sprintf("f-%d.txt", size))
	if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
		b.Fatal(err)
	}
	mid := strings.LastIndexByte(original[:size/2], '\n') + 1
	end := mid + strings.IndexByte(original[mid:], '\n')
	return path, original[:mid] + "this line was changed by the proposed edit" + original[end:]
}

// BenchmarkOpenDiff is one openDiff tool call through the whole sidecar: HTTP
// and MCP decoding, reading the original, the unified diff, diff/open over
// the editor link and the answer. The client runs in the same process, so
// allocations include its side (encoding the request).
func BenchmarkOpenDiff(b *testing.B) {
	sizes := []int{1 << 10, 1 << 20, 16 << 20}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			dir := b.TempDir()
			cs := startLinked(b, dir)
			path, proposed := benchFile(b, dir, size)
			args := map[string]any{"filePath": path, "newContent": proposed}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "openDiff", Arguments: args})
				if err != nil {
					b.Fatal(err)
				}
				if res.IsError {
					b.Fatalf("openDiff failed: %v", res.Content)
				}
			}
		})
	}
}
