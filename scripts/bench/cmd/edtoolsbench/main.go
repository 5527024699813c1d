// Command edtoolsbench measures what the companion and the editor tools'
// stdio server (`gemini-ide-companion tools`) add to a tool call over the
// editor's own answer, and the cost of a large getDiagnostics, and prints a
// Markdown table. It asserts nothing about speed; it fails only when a call
// fails.
//
// The path measured is the one an agent uses: an MCP client calls
// getDiagnostics on `gemini-ide-companion tools` (stdio), which forwards it
// to the sidecar (HTTP on 127.0.0.1), which asks the editor (editor/*
// request on the editor link) and caps the answer. The editor is a
// stand-in plugin in this process that answers at once from a prepared
// result. The reference, measured in the same run with the same client and
// interleaved with it, is the same tool answered by an MCP stdio server
// that holds the answer itself: an editor whose own MCP server answers at
// once. Their difference is what the companion adds.
//
//	go run ./scripts/bench/cmd/edtoolsbench --binary /path/to/gemini-ide-companion [--calls N]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve-reference" {
		if err := serveReference(); err != nil {
			fmt.Fprintln(os.Stderr, "edtoolsbench reference:", err)
			os.Exit(1)
		}
		return
	}
	binary := flag.String("binary", "", "the gemini-ide-companion to measure")
	calls := flag.Int("calls", 400, "calls of each kind (small answers)")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "edtoolsbench: --binary is required")
		os.Exit(2)
	}
	if err := run(*binary, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "edtoolsbench:", err)
		os.Exit(1)
	}
}

// diagnostics returns n diagnostics of path, as a language server reports
// them.
func diagnostics(path string, n int) protocol.DiagnosticsResult {
	res := protocol.DiagnosticsResult{Diagnostics: make([]protocol.Diagnostic, n)}
	for i := range res.Diagnostics {
		sev := protocol.SeverityWarning
		if i%7 == 0 {
			sev = protocol.SeverityError
		}
		res.Diagnostics[i] = protocol.Diagnostic{Path: path, Severity: sev, Source: "compiler", Code: "UnusedVar",
			Range:   protocol.Range{Start: protocol.Position{Line: i + 1, Character: 2}, End: protocol.Position{Line: i + 1, Character: 9}},
			Message: fmt.Sprintf("declared and not used: v%d", i)}
	}
	return res
}

// standIn is the editor: it answers editor/getDiagnostics at once with a
// prepared answer, by the path asked: a few diagnostics; 10,000 cut to
// maxResults, most severe first, as the protocol lets a plugin do; or all
// 10,000 (a plugin that ignores maxResults).
type standIn struct {
	small, cut, all  json.RawMessage
	cutPath, allPath string
}

func (s *standIn) HandleRequest(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method != protocol.MethodEditorGetDiagnostics {
		return nil, link.Errorf(link.CodeMethodNotFound, "no %s here", method)
	}
	var p protocol.DiagnosticsParams
	_ = json.Unmarshal(params, &p)
	switch p.Path {
	case s.cutPath:
		return s.cut, nil
	case s.allPath:
		return s.all, nil
	}
	return s.small, nil
}

func (s *standIn) HandleNotification(context.Context, string, json.RawMessage) {}

// serveReference is the reference: an MCP stdio server that answers
// getDiagnostics at once with the answer in the file named by
// EDTOOLSBENCH_ANSWER.
func serveReference() error {
	answer, err := os.ReadFile(os.Getenv("EDTOOLSBENCH_ANSWER"))
	if err != nil {
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "reference", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "getDiagnostics", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(answer)}}}, nil
		})
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

func connect(ctx context.Context, cmd *exec.Cmd) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "edtoolsbench", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
}

// callOnce calls getDiagnostics and returns how long it took and the
// answer's size.
func callOnce(ctx context.Context, cs *mcp.ClientSession, path string) (time.Duration, int, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getDiagnostics", Arguments: map[string]any{"path": path}})
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if res.IsError || len(res.Content) != 1 {
		return 0, 0, fmt.Errorf("getDiagnostics failed: %+v", res.Content)
	}
	return d, len(res.Content[0].(*mcp.TextContent).Text), nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func run(binary string, calls int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "edtoolsbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ws := filepath.Join(work, "workspace")
	tmp := filepath.Join(work, "tmp")
	for _, d := range []string{ws, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	small, cut, large := filepath.Join(ws, "main.go"), filepath.Join(ws, "cut.go"), filepath.Join(ws, "big.go")
	for _, f := range []string{small, cut, large} {
		if err := os.WriteFile(f, []byte("package main\n"), 0o600); err != nil {
			return err
		}
	}
	smallRes, _ := json.Marshal(diagnostics(small, 3))
	largeRes, _ := json.Marshal(diagnostics(large, 10000))
	most := diagnostics(cut, 10000).Diagnostics
	sort.SliceStable(most, func(i, j int) bool {
		return most[i].Severity == protocol.SeverityError && most[j].Severity != protocol.SeverityError
	})
	cutRes, _ := json.Marshal(protocol.DiagnosticsResult{Diagnostics: most[:protocol.MaxToolResults], Truncated: true})
	env := append(os.Environ(), "TMPDIR="+tmp, "GEMINI_CLI_IDE_SERVER_PORT=", "GEMINI_CLI_IDE_AUTH_TOKEN=")

	// The sidecar, linked to the stand-in editor.
	side := exec.CommandContext(ctx, binary, "--stdio", "--log-level", "warn")
	side.Dir, side.Env, side.Stderr = ws, env, os.Stderr
	in, err := side.StdinPipe()
	if err != nil {
		return err
	}
	out, err := side.StdoutPipe()
	if err != nil {
		return err
	}
	if err := side.Start(); err != nil {
		return err
	}
	defer func() { in.Close(); _ = side.Wait() }()
	conn := link.New(out, in, &standIn{small: smallRes, cut: cutRes, all: largeRes, cutPath: cut, allPath: large})
	go func() { _ = conn.Serve(ctx) }()
	var init protocol.InitializeResult
	one := 2
	if err := conn.Call(ctx, "initialize", protocol.InitializeParams{ProtocolVersion: &one, IDE: &protocol.IDE{Name: "bench", DisplayName: "Bench"},
		WorkspaceFolders: []string{ws}, Capabilities: protocol.ClientCapabilities{Diagnostics: true}}, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}

	toolsEnv := append([]string(nil), env...)
	for k, v := range init.Env {
		toolsEnv = append(toolsEnv, k+"="+v)
	}
	tools := exec.Command(binary, "tools")
	tools.Dir, tools.Env = ws, toolsEnv
	ours, err := connect(ctx, tools)
	if err != nil {
		return fmt.Errorf("gemini-ide-companion tools: %w", err)
	}
	defer ours.Close()

	// The reference answers what the companion answers for the small file.
	answerFile := filepath.Join(work, "answer.json")
	res, err := ours.CallTool(ctx, &mcp.CallToolParams{Name: "getDiagnostics", Arguments: map[string]any{"path": small}})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("getDiagnostics failed: %+v", res.Content)
	}
	if err := os.WriteFile(answerFile, []byte(res.Content[0].(*mcp.TextContent).Text), 0o600); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	refCmd := exec.Command(self, "serve-reference")
	refCmd.Env = append(os.Environ(), "EDTOOLSBENCH_ANSWER="+answerFile)
	ref, err := connect(ctx, refCmd)
	if err != nil {
		return fmt.Errorf("reference server: %w", err)
	}
	defer ref.Close()

	// Warm up both, then interleave: ours, reference, ours, ...
	for range 20 {
		if _, _, err := callOnce(ctx, ours, small); err != nil {
			return err
		}
		if _, _, err := callOnce(ctx, ref, small); err != nil {
			return err
		}
	}
	var o, r []time.Duration
	for range calls {
		d, _, err := callOnce(ctx, ours, small)
		if err != nil {
			return err
		}
		o = append(o, d)
		d, _, err = callOnce(ctx, ref, small)
		if err != nil {
			return err
		}
		r = append(r, d)
	}
	// 10,000 diagnostics, interleaved: the plugin cutting to maxResults,
	// and the plugin sending them all.
	var cuts, alls []time.Duration
	cutSize, allSize := 0, 0
	for range max(calls/10, 10) {
		d, n, err := callOnce(ctx, ours, cut)
		if err != nil {
			return err
		}
		cuts, cutSize = append(cuts, d), n
		d, n, err = callOnce(ctx, ours, large)
		if err != nil {
			return err
		}
		alls, allSize = append(alls, d), n
	}
	if max(cutSize, allSize) > protocol.MaxToolResultBytes {
		return fmt.Errorf("getDiagnostics of 10,000 diagnostics answered %d and %d bytes, over the cap of %d", cutSize, allSize, protocol.MaxToolResultBytes)
	}

	fmt.Printf("\n### Editor tools (%d calls each, interleaved)\n\n", calls)
	fmt.Println("| figure | gemini-ide-companion tools → sidecar → editor | reference (MCP server answering itself) | added |")
	fmt.Println("|---|---|---|---|")
	for _, p := range []struct {
		name string
		q    float64
	}{{"getDiagnostics p50", 0.50}, {"getDiagnostics p99", 0.99}} {
		po, pr := pct(o, p.q), pct(r, p.q)
		fmt.Printf("| %s | %s | %s | %s (×%.2f) |\n", p.name, ms(po), ms(pr), ms(po-pr), float64(po)/float64(max(pr, 1)))
	}
	fmt.Printf("| 10,000 diagnostics, the plugin cuts to maxResults: p50 / p99 | %s / %s | | answer %d bytes (cap %d) |\n",
		ms(pct(cuts, 0.5)), ms(pct(cuts, 0.99)), cutSize, protocol.MaxToolResultBytes)
	fmt.Printf("| 10,000 diagnostics, the plugin sends them all (%d KB): p50 / p99 | %s / %s | | answer %d bytes (cap %d) |\n",
		len(largeRes)>>10, ms(pct(alls, 0.5)), ms(pct(alls, 0.99)), allSize, protocol.MaxToolResultBytes)
	return nil
}
