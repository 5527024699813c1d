//go:build unix

package hardening

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestFIFONamedLikeADiscoveryFileDoesNotStopStartup plants a FIFO named
// like a discovery file in the discovery folder, as anyone able to write
// there could: stale-file cleanup opened it and waited forever for a
// writer, so no companion started, and `env` hung the same way. Both must
// pass it by.
func TestFIFONamedLikeADiscoveryFileDoesNotStopStartup(t *testing.T) {
	t.Parallel()
	sb := testkit.NewSandbox(t)
	dir := sb.DiscoveryDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(dir), 0o700)
	for _, name := range []string{"gemini-ide-server-1-2.json", fmt.Sprintf("gemini-ide-server-%d-3.json", os.Getpid())} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, nil)
	if res.DiscoveryFile == "" {
		t.Fatalf("no discovery file:\n%s", ed.Stderr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.Binary(t), "env", "--workspace", sb.Workspace)
	cmd.Env = sb.Env()
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("`env` hung on the FIFO")
	}
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("GEMINI_CLI_IDE_SERVER_PORT='%d'", res.Port)) {
		t.Fatalf("env: %v\n%s", err, out)
	}
}

// rawSidecar runs the sidecar with pipes the test holds itself, so that it
// can stop reading them or close them the way a dying editor does.
type rawSidecar struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr io.ReadCloser
	gate   *gate
	conn   *link.Conn
	exited chan struct{}
}

// gate is a reader that can be paused: while paused, the sidecar's writes
// to its stdout fill the pipe and block, as with an editor that stopped
// reading.
type gate struct {
	r    io.Reader
	mu   sync.Mutex
	open chan struct{}
}

func (g *gate) Read(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	return g.r.Read(p)
}

func (g *gate) pause() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) resume() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

type answerAll struct{}

func (answerAll) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == "diff/close" {
		return map[string]any{"content": nil}, nil
	}
	return struct{}{}, nil
}

func (answerAll) HandleNotification(context.Context, string, json.RawMessage) {}

func startRaw(t *testing.T, sb *testkit.Sandbox) *rawSidecar {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), "--stdio", "--log-level", "debug")
	cmd.Dir = sb.Workspace
	cmd.Env = sb.Env()
	r := &rawSidecar{cmd: cmd, exited: make(chan struct{})}
	var err error
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if r.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if r.stderr, err = cmd.StderrPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	r.gate = &gate{r: r.stdout, open: open}
	r.conn = link.New(r.gate, r.stdin, answerAll{})
	served := make(chan struct{})
	go func() { defer close(served); _ = r.conn.Serve(context.Background()) }()
	go func() { defer close(r.exited); _ = cmd.Wait() }()
	t.Cleanup(func() {
		r.stdin.Close()
		select {
		case <-r.exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-r.exited
		}
		r.gate.mu.Lock()
		select {
		case <-r.gate.open:
		default:
			close(r.gate.open)
		}
		r.gate.mu.Unlock()
		<-served
	})
	return r
}

func (r *rawSidecar) initialize(t *testing.T, sb *testkit.Sandbox) protocol.InitializeResult {
	t.Helper()
	var res protocol.InitializeResult
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := r.conn.Call(ctx, "initialize", map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "neovim", "displayName": "Neovim"},
		"processId": os.Getpid(), "workspaceFolders": []string{sb.Workspace},
	}, &res)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// TestEditorDeathDoesNotKillTheSidecarBeforeItCleansUp closes the read
// ends of the sidecar's stderr and stdout and then its stdin, as an editor
// that dies does. The sidecar used to die of SIGPIPE on its next log line,
// leaving its discovery file for the next CLI to dial a dead port; it must
// remove the file and exit normally.
func TestEditorDeathDoesNotKillTheSidecarBeforeItCleansUp(t *testing.T) {
	t.Parallel()
	sb := testkit.NewSandbox(t)
	r := startRaw(t, sb)
	go io.Copy(io.Discard, r.stderr)
	res := r.initialize(t, sb)
	if _, err := os.Stat(res.DiscoveryFile); err != nil {
		t.Fatalf("no discovery file: %v", err)
	}
	r.stderr.Close()
	r.gate.pause() // and nobody reads stdout any more
	r.stdout.Close()
	r.stdin.Close()
	select {
	case <-r.exited:
	case <-time.After(wait):
		t.Fatal("the sidecar did not exit after its editor went away")
	}
	ws := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		t.Fatalf("the sidecar was killed by %v", ws.Signal())
	}
	if _, err := os.Stat(res.DiscoveryFile); !os.IsNotExist(err) {
		t.Fatalf("discovery file left behind (%v): the next CLI would dial a dead port", err)
	}
}

// TestEditorThatStopsReadingDoesNotHangOpenDiff has the editor stop
// reading the sidecar's output and the CLI propose a diff bigger than a
// pipe holds: openDiff used to block past its timeout in the write. The
// CLI must get a clear error within the editor timeout, later requests
// must not hang either, and once the editor reads again the link works.
func TestEditorThatStopsReadingDoesNotHangOpenDiff(t *testing.T) {
	t.Parallel()
	sb := testkit.NewSandbox(t)
	r := startRaw(t, sb)
	var logs testkit.SyncBuffer
	go io.Copy(&logs, r.stderr)
	defer func() {
		if t.Failed() {
			t.Logf("sidecar stderr:\n%s", logs.String())
		}
	}()
	res := r.initialize(t, sb)
	cli := testkit.ConnectCLI(t, res.Port, res.AuthToken)
	path := filepath.Join(sb.Workspace, "big.txt")
	proposal := strings.Repeat("a line of the proposal\n", 1<<16) // 1.5 MiB

	r.gate.pause()
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), companion.DefaultEditorTimeout+2*wait)
		res, err := cli.OpenDiff(ctx, path, proposal)
		cancel()
		if err != nil {
			t.Fatalf("openDiff %d while the editor reads nothing: %v (hung past the editor timeout?)", i+1, err)
		}
		if text := toolText(res); !res.IsError || !(strings.Contains(text, "not reading") || strings.Contains(text, "did not show the diff")) {
			t.Fatalf("openDiff %d: isError %v, %q; want an error saying the editor is not reading", i+1, res.IsError, text)
		}
	}
	r.gate.resume()
	var st status
	// The editor first reads (and answers) the 1.5 MiB request it had
	// left unread; on a loaded machine that takes a while.
	ctx, cancel := context.WithTimeout(context.Background(), 3*wait)
	defer cancel()
	if err := r.conn.Call(ctx, "status/get", nil, &st); err != nil || st.Port != res.Port {
		t.Fatalf("status/get after the editor reads again: %+v, %v", st, err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*wait)
	defer cancel2()
	if _, err := cli.OpenDiff(ctx2, path, "small\n"); err != nil {
		t.Fatalf("openDiff after the editor reads again: %v", err)
	}
}

// TestHugeOpenDiffDoesNotKillTheSidecar proposes a change on 1.2 million
// distinct lines of a 7.4 MiB file: go-diff panicked on it and took every
// session down. The diff is shown, coarse and saying so. Not parallel:
// the test's editor decodes a 20 MiB request with the race detector on,
// which would starve the other tests of the package.
func TestHugeOpenDiffDoesNotKillTheSidecar(t *testing.T) {
	s := start(t)
	var ob, nb strings.Builder
	for i := range 600_000 {
		fmt.Fprintf(&ob, "o%d\n", i)
		fmt.Fprintf(&nb, "n%d\n", i)
	}
	path := filepath.Join(s.sb.Workspace, "huge.txt")
	if err := os.WriteFile(path, []byte(ob.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	ctx, cancel := context.WithTimeout(context.Background(), 6*wait)
	defer cancel()
	res, err := cli.OpenDiff(ctx, path, nb.String())
	if err != nil {
		t.Fatalf("openDiff: %v\n%s", err, s.ed.Stderr())
	}
	// On a loaded machine the test's editor may take longer than the
	// editor timeout to read the 20 MiB request: that answer is an error
	// too, but an answer.
	if res.IsError && !strings.Contains(toolText(res), "did not show the diff within") {
		t.Fatalf("openDiff failed: %s", toolText(res))
	}
	raw := s.ed.WaitFor(t, "request:diff/open", 6*wait, nil)
	var req protocol.DiffOpenParams
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.UnifiedDiff[:min(len(req.UnifiedDiff), 200)], "one replacement") {
		t.Fatalf("the coarse diff does not say so: %.200q", req.UnifiedDiff)
	}
	s.noCrash(t)
}

// fdCount is how many file descriptors process pid has open.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	des, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("needs /proc: %v", err)
	}
	return len(des)
}

// TestIdleConnectionFloodIsCapped opens more idle connections than the
// connection cap: the sidecar used to accept every one (a descriptor
// each) until it ran out. It must hold no more than the cap, and serve a
// CLI once the flood is gone.
func TestIdleConnectionFloodIsCapped(t *testing.T) {
	t.Parallel()
	s := start(t)
	before := fdCount(t, s.res.PID)
	const flood = companion.DefaultMaxConns + 300
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", s.host())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
	}
	limit := before + companion.DefaultMaxConns + 16
	// Wait until the sidecar has taken all the connections it will take,
	// then watch for a moment that it takes no more.
	if !testkit.Poll(wait, func() bool { return fdCount(t, s.res.PID) >= before+companion.DefaultMaxConns }) {
		t.Fatalf("the sidecar accepted fewer connections than its cap: %d descriptors", fdCount(t, s.res.PID))
	}
	if testkit.Poll(2*time.Second, func() bool { return fdCount(t, s.res.PID) > limit }) {
		t.Fatalf("the sidecar holds %d descriptors for %d idle connections; the cap is %d connections",
			fdCount(t, s.res.PID), flood, companion.DefaultMaxConns)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = conns[:0]
	testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	s.noCrash(t)
}

// TestIdleConnectionFloodDoesNotStarveTheCLI opens far more idle
// connections than the cap, then a CLI connects. Connections over the cap
// used to wait in the kernel's accept queue, each idle one living 10 s once
// accepted: the CLI waited behind them (19 s with 5,000). It must be served
// within 2 s, and the sidecar must still hold no more than the cap.
func TestIdleConnectionFloodDoesNotStarveTheCLI(t *testing.T) {
	t.Parallel()
	s := start(t)
	before := fdCount(t, s.res.PID)
	// Bounded: 2,524 descriptors in this process, 10 s to open them.
	const flood = companion.DefaultMaxConns + 1500
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var d net.Dialer
	for range flood {
		c, err := d.DialContext(ctx, "tcp", s.host())
		if err != nil {
			break // a full accept queue: the flood is as big as it gets
		}
		conns = append(conns, c)
	}
	if len(conns) <= companion.DefaultMaxConns {
		t.Fatalf("only %d connections opened: no flood past the cap", len(conns))
	}

	const served = 2 * time.Second
	began := time.Now()
	cctx, ccancel := context.WithTimeout(context.Background(), served)
	defer ccancel()
	cli, err := testkit.DialCLI(cctx, s.res.Port, s.res.AuthToken)
	if err == nil {
		defer cli.Session.Close()
		_, err = cli.Session.ListTools(cctx, nil)
	}
	if took := time.Since(began); err != nil || took > served {
		t.Fatalf("with %d idle connections open, a CLI's initialize and tools/list took %v (%v); want under %v",
			len(conns), took.Round(time.Millisecond), err, served)
	}
	t.Logf("with %d idle connections open, the CLI was served in %v", len(conns), time.Since(began).Round(time.Millisecond))
	if n := fdCount(t, s.res.PID); n > before+companion.DefaultMaxConns+16 {
		t.Fatalf("the sidecar holds %d descriptors (%d before the flood); the cap is %d connections",
			n, before, companion.DefaultMaxConns)
	}
	s.noCrash(t)
}

// TestSlowRequestBodyHoldsNoSessionAndIsCut sends an initialize whose body
// never finishes: it used to hold a session slot (and its connection)
// forever. It must hold no session, and the sidecar must close the
// connection once the body has sent nothing for 10 s.
func TestSlowRequestBodyHoldsNoSessionAndIsCut(t *testing.T) {
	t.Parallel()
	s := start(t)
	c, err := net.Dial("tcp", s.host())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", s.host(), s.res.AuthToken)
	// Until the sidecar cuts the connection, status/get (over the editor
	// link) must never count a session for it.
	closed := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, c)
		closed <- err
	}()
	deadline := time.After(60 * time.Second)
	for {
		if st := s.status(t); st.Sessions != 0 {
			t.Fatalf("a request whose body never arrived holds a session: %+v", st)
		}
		select {
		case <-closed:
			s.noCrash(t)
			if st := s.status(t); st.Sessions != 0 {
				t.Fatalf("sessions after the slow body was cut: %+v", st)
			}
			return
		case <-deadline:
			t.Fatal("the sidecar still waits for a body after 60 s")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestConcurrentInitializesRespectTheSessionCap fires many initializes at
// once: the cap was checked before the session was added, so they all
// passed the check together (486 sessions of a cap of 256). Each request
// is sent whole but for its last byte, then all last bytes go at once.
// The cap bounds the sessions that exist at the same time: under load the
// burst can outlast the grace period of a session that never opens its
// event stream, and a slot so freed may go to a later initialize. So the
// test reads the peak from the editor's status notifications, one per
// CLI connected or gone, rather than counting every 200.
func TestConcurrentInitializesRespectTheSessionCap(t *testing.T) {
	t.Parallel()
	s := start(t)
	const n = 600
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion +
		`","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", s.host(), s.res.AuthToken, len(body))
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", s.host())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, head+body[:len(body)-1]); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	statusesBefore := len(s.ed.All("status"))
	codes := make([]int, n)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			c.SetDeadline(time.Now().Add(3 * wait))
			if _, err := io.WriteString(c, body[len(body)-1:]); err != nil {
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	close(release)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	t.Logf("answers: %v", count)
	if count[http.StatusOK] == 0 || count[http.StatusOK]+count[http.StatusServiceUnavailable] != n {
		t.Fatalf("answers: %v", count)
	}
	// Every session answered 200 is announced once it is connected.
	var statuses []testkit.Note
	if !testkit.Poll(wait, func() bool {
		statuses = s.ed.All("status")[statusesBefore:]
		return len(statuses) >= count[http.StatusOK]
	}) {
		t.Fatalf("%d status notifications for %d sessions started", len(statuses), count[http.StatusOK])
	}
	peak := 0
	for _, st := range statuses {
		var p struct {
			ConnectedClients int `json:"connectedClients"`
		}
		if err := json.Unmarshal(st.Params, &p); err != nil {
			t.Fatalf("status %s: %v", st.Params, err)
		}
		peak = max(peak, p.ConnectedClients)
	}
	if peak > companion.DefaultMaxSessions {
		t.Fatalf("%d sessions at once with a cap of %d (answers: %v)", peak, companion.DefaultMaxSessions, count)
	}
	s.noCrash(t)
}

// TestNoTrustIsClaimedUnlessTheEditorSendsIt initializes without
// isTrusted, as Neovim and Sublime Text do: the CLI lets an IDE's value
// override its own folder trust, so it must get none until the editor
// reports one.
func TestNoTrustIsClaimedUnlessTheEditorSendsIt(t *testing.T) {
	t.Parallel()
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	var res protocol.InitializeResult
	if err := ed.Call(wait, "initialize", map[string]any{
		"protocolVersion": 1, "ide": map[string]string{"name": "neovim", "displayName": "Neovim"},
		"processId": os.Getpid(), "workspaceFolders": []string{sb.Workspace},
	}, &res); err != nil {
		t.Fatal(err)
	}
	cli := testkit.ConnectCLI(t, res.Port, res.AuthToken)
	raw := cli.WaitFor(t, "ide/contextUpdate", wait, nil)
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.WorkspaceState == nil || c.WorkspaceState.IsTrusted != nil || bytes.Contains(raw, []byte("isTrusted")) {
		t.Fatalf("the CLI was told a trust the editor never reported: %s", raw)
	}
	ed.Notify(t, "workspace/trustChanged", map[string]any{"isTrusted": false})
	cli.WaitFor(t, "ide/contextUpdate", wait, has(`"isTrusted":false`))
}
