package editorlink

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// pluginSide is a protocol-1 plugin at the other end of the link: it shows
// every diff/open and closes every diff/close at once.
type pluginSide struct{}

func (pluginSide) HandleRequest(_ context.Context, method string, _ json.RawMessage) (any, error) {
	if method == protocol.MethodDiffClose {
		return protocol.DiffCloseResult{}, nil
	}
	return struct{}{}, nil
}

func (pluginSide) HandleNotification(context.Context, string, json.RawMessage) {}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// notes is how many files the link holds a note of the shown view for.
func (el *EditorLink) notes() map[string]uint64 {
	el.mu.Lock()
	defer el.mu.Unlock()
	out := map[string]uint64{}
	for k, v := range el.answered {
		out[k] = v
	}
	return out
}

// TestTheNoteOfTheShownViewGoesWithItsProposal: the link notes, per file,
// which proposal's view the plugin showed last, so that a decision without
// diffId can be matched to it. The note goes when the proposal ends, in
// each way it can: accepted or rejected in the editor, closed by its CLI,
// replaced by a newer proposal. It used to stay for every file ever shown.
func TestTheNoteOfTheShownViewGoesWithItsProposal(t *testing.T) {
	dir := t.TempDir()
	ws := t.TempDir()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	elc := make(chan *EditorLink, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, inR, outW, Config{
			Options: companion.Options{DiscoveryDir: dir, Logger: zerolog.Nop()},
			Extensions: []Extension{{New: func(peer Peer, _ *companion.Companion) ExtensionHandler {
				elc <- peer.(*EditorLink)
				return noMethods{}
			}}},
		})
		outW.Close()
	}()
	el := <-elc
	plugin := link.New(outR, inW, pluginSide{})
	go func() { _ = plugin.Serve(ctx) }()
	defer func() {
		_ = plugin.Call(context.Background(), protocol.MethodShutdown, nil, nil)
		inW.Close()
		<-served
	}()
	var res protocol.InitializeResult
	if err := plugin.Call(ctx, protocol.MethodInitialize, map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "t", "displayName": "T"},
		"processId": os.Getpid(), "workspaceFolders": []string{ws},
	}, &res); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   fmt.Sprintf("http://127.0.0.1:%d/mcp", res.Port),
		HTTPClient: &http.Client{Transport: bearer{res.AuthToken, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tool := func(name, path string, args map[string]any) {
		t.Helper()
		args["filePath"] = path
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s %s: %v %+v", name, path, err, r)
		}
	}
	// decide sends a decision without diffId, as a protocol-1 plugin does,
	// and waits until the link has handled it.
	decide := func(method, path string) {
		t.Helper()
		params := map[string]any{"filePath": path}
		if method == protocol.MethodDiffAccepted {
			params["content"] = "accepted\n"
		}
		if err := plugin.Notify(method, params); err != nil {
			t.Fatal(err)
		}
		if err := plugin.Call(ctx, protocol.MethodStatusGet, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	noted := func(path string) bool {
		_, ok := el.notes()[fspath.Key(path)]
		return ok
	}
	file := func(name string) string {
		p := filepath.Join(ws, name)
		if err := os.WriteFile(p, []byte("before\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	accepted, rejected, closed, replaced := file("a.txt"), file("r.txt"), file("c.txt"), file("n.txt")
	for _, p := range []string{accepted, rejected, closed, replaced} {
		tool("openDiff", p, map[string]any{"newContent": "proposed\n"})
		if !noted(p) {
			t.Fatalf("no note of the view shown for %s", p)
		}
	}
	tool("openDiff", replaced, map[string]any{"newContent": "proposed again\n"})
	if n := len(el.notes()); n != 4 {
		t.Fatalf("%d notes for 4 shown views: %v", n, el.notes())
	}
	if id := el.notes()[fspath.Key(replaced)]; id != el.c.Proposals().ShownID(replaced) {
		t.Fatalf("the note for the replaced proposal names %d, not the newer %d", id, el.c.Proposals().ShownID(replaced))
	}

	decide(protocol.MethodDiffAccepted, accepted)
	if noted(accepted) {
		t.Fatal("the note outlived the accepted proposal")
	}
	decide(protocol.MethodDiffRejected, rejected)
	if noted(rejected) {
		t.Fatal("the note outlived the rejected proposal")
	}
	tool("closeDiff", closed, map[string]any{})
	if noted(closed) {
		t.Fatal("the note outlived the proposal its CLI closed")
	}
	decide(protocol.MethodDiffRejected, replaced)
	if n := len(el.notes()); n != 0 {
		t.Fatalf("notes left once every proposal ended: %v", el.notes())
	}
}

// noMethods is an extension that adds no methods: the test takes it only
// for the peer it is given.
type noMethods struct{}

func (noMethods) Register(*link.Mux) {}
