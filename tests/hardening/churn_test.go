package hardening

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// Soak parameters. The churn lasts one minute in all (warm-up included);
// -short cuts it to ten seconds.
const (
	churners     = 100 // CLI sessions that come and go all the time
	droppers     = 10  // of which leave like Gemini CLI: stream closed, no DELETE
	maxCycles    = 2000
	maxEvents    = 100000
	warmUp       = 5 * time.Second
	soakTotal    = time.Minute
	soakShort    = 10 * time.Second
	goroutineTol = 10
)

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// decision is one diff decision as the CLI receives it.
type decision struct {
	Method   string
	FilePath string
	Content  string
}

func (d decision) String() string {
	return fmt.Sprintf("%s %s %q", d.Method, filepath.Base(d.FilePath), d.Content)
}

func decisionsIn(list []note) []decision {
	var out []decision
	for _, n := range list {
		if n.Method != "ide/diffAccepted" && n.Method != "ide/diffRejected" {
			continue
		}
		var d decision
		json.Unmarshal(n.Params, &d)
		d.Method = n.Method
		out = append(out, d)
	}
	return out
}

// checkContext returns what is wrong with a context update, or "".
func checkContext(raw json.RawMessage) string {
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil || c.WorkspaceState == nil {
		return fmt.Sprintf("not an IdeContext: %s", raw)
	}
	files := c.WorkspaceState.OpenFiles
	if len(files) > idectx.MaxOpenFiles {
		return fmt.Sprintf("%d open files", len(files))
	}
	for i, f := range files {
		if i > 0 && f.Timestamp >= files[i-1].Timestamp {
			return fmt.Sprintf("timestamps not strictly newest first: %s", raw)
		}
		if i > 0 && (f.IsActive || f.Cursor != nil || f.SelectedText != nil) {
			return fmt.Sprintf("file %d is active or has a cursor: %s", i, raw)
		}
	}
	return ""
}

// TestSoakSessionChurn: for a minute, a hundred CLI sessions connect and
// leave (most with DELETE, some by dropping their stream as Gemini CLI
// does) while the editor streams cursor moves and diffs open and close.
// Afterwards the sidecar holds no more goroutines or memory than after the
// warm-up, never crashed, and the sessions that stayed throughout received
// every decision exactly once, in order, and the final context.
func TestSoakSessionChurn(t *testing.T) {
	t.Parallel()
	total := soakTotal
	if testing.Short() {
		total = soakShort
	}
	s := start(t)
	ws := s.sb.Workspace
	var files []string
	for i := range 12 {
		p := filepath.Join(ws, fmt.Sprintf("src%02d.go", i))
		os.WriteFile(p, []byte("package src\n"), 0o600)
		files = append(files, p)
	}

	// The sessions that stay: three SDK clients and one raw client that
	// behaves like Gemini CLI on the wire.
	var stayers []*testkit.CLI
	for range 3 {
		stayers = append(stayers, testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken))
	}
	raw := newRawClient(t, s)
	rawSID, err := raw.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rawStream, err := raw.openStream(context.Background(), rawSID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rawStream.drop)
	const stay = 4
	s.pollStatus(t, wait, "long-lived sessions connected", func(st status) bool { return st.ConnectedClients == stay })

	churnTransport := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	t.Cleanup(churnTransport.CloseIdleConnections)
	churnHTTP := &http.Client{Transport: bearer{token: s.res.AuthToken, next: churnTransport}}
	rawChurn := &rawClient{port: s.res.Port, token: s.res.AuthToken, hc: &http.Client{Transport: churnTransport}}

	var expected []decision
	var cycles, dropped, failures, events atomic.Int64
	var firstFailure atomic.Value
	fail := func(format string, args ...any) {
		failures.Add(1)
		firstFailure.CompareAndSwap(nil, fmt.Sprintf(format, args...))
	}

	// churn runs one churner until ctx ends.
	churn := func(ctx context.Context, id int) {
		rng := rand.New(rand.NewPCG(uint64(id), 7))
		for n := 0; n < maxCycles && ctx.Err() == nil; n++ {
			hold := time.Duration(1000+rng.IntN(1500)) * time.Millisecond
			if id < droppers {
				sid, err := rawChurn.connect(ctx)
				if err != nil {
					if ctx.Err() == nil {
						fail("dropper %d connect: %v", id, err)
					}
					return
				}
				st, err := rawChurn.openStream(ctx, sid)
				if err != nil {
					if ctx.Err() == nil {
						fail("dropper %d stream: %v", id, err)
					}
					return
				}
				if _, ok := st.notes.wait("ide/contextUpdate", wait, nil); !ok && ctx.Err() == nil {
					fail("dropper %d: no context update on its new stream", id)
				}
				pace(ctx, hold)
				st.drop() // and never a DELETE
				dropped.Add(1)
			} else {
				client := mcp.NewClient(&mcp.Implementation{Name: "churn", Version: "1"}, nil)
				cctx, cancel := context.WithTimeout(context.Background(), wait)
				cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{
					Endpoint:   s.url(),
					HTTPClient: churnHTTP,
					MaxRetries: -1,
				}, nil)
				cancel()
				if err != nil {
					if ctx.Err() == nil {
						fail("churner %d connect: %v", id, err)
					}
					return
				}
				if _, err := cs.ListTools(ctx, nil); err != nil && ctx.Err() == nil {
					fail("churner %d tools/list: %v", id, err)
				}
				pace(ctx, hold)
				cs.Close()
			}
			cycles.Add(1)
			pace(ctx, time.Duration(rng.IntN(500))*time.Millisecond)
		}
	}

	// stream sends editor events until ctx ends: cursor moves, focus
	// changes across more files than the context keeps, closes.
	stream := func(ctx context.Context) {
		rng := rand.New(rand.NewPCG(99, 1))
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for n := 0; n < maxEvents; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			f := files[rng.IntN(len(files))]
			var err error
			switch r := rng.IntN(20); {
			case r == 0:
				err = s.ed.Conn.Notify("context/fileClosed", map[string]any{"path": f})
			case r < 5:
				err = s.ed.Conn.Notify("context/fileFocused", map[string]any{"path": f, "cursor": map[string]int{"line": 1 + rng.IntN(50), "character": 1}})
			default:
				err = s.ed.Conn.Notify("context/selectionChanged", map[string]any{
					"path": f, "cursor": map[string]int{"line": 1 + rng.IntN(50), "character": 1 + rng.IntN(80)},
					"selectedText": fmt.Sprintf("selection %d", n),
				})
			}
			if err != nil {
				fail("editor event: %v", err)
				return
			}
			events.Add(1)
		}
	}

	// phase churns and streams in the background while this goroutine
	// drives diffs through the first stayer, one decision at a time.
	diffNo := 0
	phase := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var wg sync.WaitGroup
		for id := range churners {
			wg.Go(func() { churn(ctx, id) })
		}
		wg.Go(func() { stream(ctx) })
		defer func() {
			cancel() // also when a check below fails
			wg.Wait()
		}()

		cli := stayers[0]
		for ; ctx.Err() == nil; pace(ctx, 40*time.Millisecond) {
			diffNo++
			path := filepath.Join(ws, fmt.Sprintf("diff%d.txt", diffNo%4))
			res, err := cli.OpenDiff(context.Background(), path, fmt.Sprintf("proposal %d\n", diffNo))
			if err != nil || res.IsError {
				t.Fatalf("openDiff %d under load: %v %v", diffNo, err, res)
			}
			mark := cli.Len()
			switch diffNo % 3 {
			case 0:
				d := decision{"ide/diffAccepted", path, fmt.Sprintf("accepted %d\n", diffNo)}
				expected = append(expected, d)
				s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": d.Content})
				cli.WaitFrom(t, mark, d.Method, wait, has(fmt.Sprintf("accepted %d", diffNo)))
			case 1:
				d := decision{Method: "ide/diffRejected", FilePath: path}
				expected = append(expected, d)
				s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
				cli.WaitFrom(t, mark, d.Method, wait, nil)
			case 2:
				// The CLI closes it; a late accept from the editor must
				// go nowhere. (status/get returns once the link has handled
				// it, before a later diff for the same path opens.)
				cli.CloseDiffContent(t, context.Background(), path)
				s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "too late\n"})
				s.status(t)
			}
		}
	}

	// settle waits until only the stayers are left and every idle
	// connection is gone, and returns the sidecar's resting state.
	settle := func(what string) status {
		s.pollStatus(t, 3*wait, what+": churned sessions gone", func(st status) bool { return st.Sessions == stay })
		churnTransport.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		// Goroutines of closed connections and sessions finish soon after;
		// take the lowest count seen over a short quiet stretch.
		var low status
		low.Goroutines = 1 << 30
		stable := 0
		testkit.Poll(3*wait, func() bool {
			st := s.status(t)
			if st.Goroutines < low.Goroutines {
				low, stable = st, 0
			} else {
				stable++
			}
			return stable >= 40
		})
		return low
	}

	phase(warmUp)
	base := settle("after warm-up")
	warmCycles := cycles.Load()
	started := time.Now()
	phase(total - warmUp)
	soaked := time.Since(started)
	end := settle("after the soak")

	if n := failures.Load(); n > 0 {
		t.Fatalf("%d failures under load; first: %v", n, firstFailure.Load())
	}
	t.Logf("soak: %s, %d session cycles (%d dropped without DELETE), %d editor events, %d diffs, %d decisions",
		soaked.Round(time.Second), cycles.Load(), dropped.Load(), events.Load(), diffNo, len(expected))
	t.Logf("sidecar after warm-up: %d goroutines, heap %.1f MiB; after the soak: %d goroutines, heap %.1f MiB",
		base.Goroutines, float64(base.HeapInuse)/(1<<20), end.Goroutines, float64(end.HeapInuse)/(1<<20))
	if cycles.Load()-warmCycles < churners {
		t.Fatalf("only %d session cycles during the soak: the churn did not happen", cycles.Load()-warmCycles)
	}
	if end.Goroutines > base.Goroutines+goroutineTol {
		t.Errorf("goroutines grew from %d to %d", base.Goroutines, end.Goroutines)
	}
	// HeapInuse is read without a collection; the tolerance covers the
	// garbage of the last cycle, not a leak of thousands of sessions.
	if limit := 2*base.HeapInuse + 16<<20; end.HeapInuse > limit {
		t.Errorf("heap in use grew from %d to %d bytes (limit %d)", base.HeapInuse, end.HeapInuse, limit)
	}

	// The final context reaches every stayer.
	final := filepath.Join(ws, "final.go")
	os.WriteFile(final, []byte("package src\n"), 0o600)
	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": final, "cursor": map[string]int{"line": 42, "character": 7}, "selectedText": "the end"})
	isFinal := func(p json.RawMessage) bool {
		var c idectx.IdeContext
		if json.Unmarshal(p, &c) != nil || c.WorkspaceState == nil || len(c.WorkspaceState.OpenFiles) == 0 {
			return false
		}
		f := c.WorkspaceState.OpenFiles[0]
		return f.Path == final && f.IsActive && f.Cursor != nil && *f.Cursor == (idectx.Cursor{Line: 42, Character: 7}) &&
			f.SelectedText != nil && *f.SelectedText == "the end"
	}
	var got [][]note
	for _, c := range stayers {
		c.WaitFor(t, "ide/contextUpdate", wait, isFinal)
		var list []note
		for _, n := range c.All("") {
			list = append(list, note{n.Method, n.Params})
		}
		got = append(got, list)
	}
	if _, ok := rawStream.notes.wait("ide/contextUpdate", wait, isFinal); !ok {
		t.Fatal("the raw session never received the final context")
	}
	got = append(got, rawStream.notes.all())

	for i, list := range got {
		ds := decisionsIn(list)
		// Every diff was proposed by the first stayer: only it hears the
		// decisions.
		want := expected
		if i != 0 {
			want = nil
		}
		if len(ds) != len(want) {
			t.Errorf("session %d received %d decisions, want %d", i, len(ds), len(want))
		}
		for j := range min(len(ds), len(want)) {
			if ds[j] != want[j] {
				t.Errorf("session %d, decision %d: got %v, want %v", i, j, ds[j], expected[j])
				break
			}
		}
		updates := 0
		for _, n := range list {
			if n.Method != "ide/contextUpdate" {
				continue
			}
			updates++
			if why := checkContext(n.Params); why != "" {
				t.Errorf("session %d: bad context update: %s", i, why)
				break
			}
		}
		if updates < 2 {
			t.Errorf("session %d received %d context updates", i, updates)
		}
	}
	s.noCrash(t)
}

// pace waits d or until ctx ends: the think time of a simulated user, not
// a synchronisation.
func pace(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}
