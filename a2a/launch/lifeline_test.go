package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

// fakeServerJS stands in for the A2A server, with the real preload: it
// listens where the preload lets it and says so as the server does,
// starts a long-running command on /spawn (as the server's shell tool
// does, in a process group of its own), and says on /stdin whether its
// stdin has ended (the preload hears of it first); /wedge blocks its
// JavaScript for good.
const fakeServerJS = `
const http = require('http');
const { spawn } = require('child_process');
let stdin = 'open';
process.stdin.on('end', () => { stdin = 'closed'; });
const srv = http.createServer((req, res) => {
  if (req.url === '/spawn') {
    const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)', 'fake-agent-command'],
      { detached: process.platform !== 'win32', stdio: 'ignore' });
    res.end(String(c.pid));
    return;
  }
  if (req.url === '/stdin') { res.end(stdin); return; }
  if (req.url === '/wedge') { res.end('ok', () => { for (;;) {} }); return; }
  res.end('ok');
});
srv.listen(0, () => console.log('Agent Server started on http://localhost:' + srv.address().port));
`

// starterEnv makes this test binary start the fake server with Start, say
// "PID URL" and wait to be killed (see TestMain).
const starterEnv = "LAUNCH_TEST_STARTER"

type starterSpec struct {
	Node   string        `json:"node"`
	Script string        `json:"script"`
	Dir    string        `json:"dir"`
	Linger time.Duration `json:"linger"`
}

// runStarter is the starter's side: it never returns.
func runStarter(spec string) {
	var s starterSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Println("bad spec:", err)
		os.Exit(2)
	}
	srv, err := Start(context.Background(), Options{Command: []string{s.Node, s.Script}, Dir: s.Dir, Linger: s.Linger})
	if err != nil {
		fmt.Println("start:", err)
		os.Exit(3)
	}
	fmt.Println(srv.PID(), srv.URL)
	select {}
}

// needNode returns node's path, or skips: under Wine the unit tests have
// no Windows Node (tests/windows runs the real server with it).
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		return node
	}
	if testproc.UnderWine() {
		t.Skip("no Windows Node on the unit tests' PATH under Wine; tests/windows starts and kills the bridge of the real server with it")
	}
	if os.Getenv("CI") != "" {
		t.Fatal("needs node")
	}
	t.Skip("needs node")
	return ""
}

type fakeServer struct {
	pid     int
	url     string
	header  http.Header
	starter *exec.Cmd // nil when started in this process
	tmp     string    // the temporary folder of the starter and the server
}

func writeFakeServer(t *testing.T) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "fake-a2a-server.js")
	if err := os.WriteFile(script, []byte(fakeServerJS), 0o600); err != nil {
		t.Fatal(err)
	}
	return script
}

// startByStarter starts the fake server from a starter process of its own.
func startByStarter(t *testing.T, linger time.Duration) *fakeServer {
	t.Helper()
	node := needNode(t)
	tmp := t.TempDir()
	useTempDir(t, tmp)
	spec, _ := json.Marshal(starterSpec{Node: node, Script: writeFakeServer(t), Dir: t.TempDir(), Linger: linger})
	starter := exec.Command(os.Args[0], "-test.run=^$")
	starter.Env = append(os.Environ(), starterEnv+"="+string(spec))
	out, err := starter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = starter.Process.Kill(); _ = starter.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the starter said %q: %v", line, err)
	}
	f := &fakeServer{starter: starter, tmp: tmp}
	if _, err := fmt.Sscan(line, &f.pid, &f.url); err != nil || f.pid <= 0 {
		t.Fatalf("the starter said %q", line)
	}
	t.Cleanup(func() { killPID(f.pid) })
	if f.header, err = HeaderFor(f.url); err != nil {
		t.Fatalf("HeaderFor(%s): %v", f.url, err)
	}
	return f
}

func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func (f *fakeServer) get(t *testing.T, path string) (string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url+path, nil)
	req.Header = f.header.Clone()
	resp, err := (&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), nil
}

// spawn makes the server start a long-running command and returns its pid.
func (f *fakeServer) spawn(t *testing.T) int {
	t.Helper()
	got, err := f.get(t, "/spawn")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(got)
	if err != nil || pid <= 0 {
		t.Fatalf("/spawn said %q", got)
	}
	t.Cleanup(func() { killPID(pid) })
	return pid
}

// waitStdinClosed waits until the server has heard that its stdin ended.
func (f *fakeServer) waitStdinClosed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := f.get(t, "/stdin")
		if err != nil {
			t.Fatalf("the server is gone before it heard its stdin end: %v", err)
		}
		if got == "closed" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never heard its stdin end")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killStarter kills the starter as a crash would, and waits for it.
func (f *fakeServer) killStarter(t *testing.T) {
	t.Helper()
	if err := f.starter.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = f.starter.Wait()
}

// waitGone waits until process pid has ended.
func waitGone(t *testing.T, what string, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for osproc.Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs %s later", what, pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// secretFileOf is the secret file of the server at u.
func secretFileOf(t *testing.T, u string) string {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return secretFile(SecretDir(), pu.Port())
}

// noFilesLeft checks that the server's secret file and the folder of its
// preload are gone.
func noFilesLeft(t *testing.T, f *fakeServer) {
	t.Helper()
	if _, err := os.Lstat(secretFileOf(t, f.url)); err == nil {
		t.Fatal("the secret file of the ended server is left")
	}
	if left, _ := filepath.Glob(filepath.Join(f.tmp, "gemini-a2a-mcp-*")); len(left) > 0 {
		t.Fatalf("the preload's folder is left: %v", left)
	}
}

// A server whose starter is killed ends at once, and the command it runs
// with it; its secret file and the preload's folder are removed.
func TestServerEndsWithItsStarter(t *testing.T) {
	f := startByStarter(t, 0)
	cmd := f.spawn(t)
	if _, err := os.Lstat(secretFileOf(t, f.url)); err != nil {
		t.Fatalf("no secret file while the server runs: %v", err)
	}
	f.killStarter(t)
	waitGone(t, "the server", f.pid, 20*time.Second)
	waitGone(t, "the command the server ran", cmd, 10*time.Second)
	noFilesLeft(t, f)
}

// Another program can hold the server: it then outlives its starter, and
// ends when that program lets it go.
func TestAHeldServerOutlivesItsStarter(t *testing.T) {
	f := startByStarter(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := Hold(ctx, f.url, f.header)
	if err != nil {
		t.Fatal(err)
	}
	cmd := f.spawn(t)
	f.killStarter(t)
	f.waitStdinClosed(t)
	if !osproc.Alive(f.pid) || !osproc.Alive(cmd) {
		t.Fatal("the held server (or its command) ended with its starter")
	}
	h.Release()
	waitGone(t, "the server let go of", f.pid, 20*time.Second)
	waitGone(t, "the command the server ran", cmd, 10*time.Second)
	noFilesLeft(t, f)

	// Without the secret, nobody holds it.
	g := startByStarter(t, 0)
	if _, err := Hold(ctx, g.url, nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Hold without the secret: %v; want a 401 refusal", err)
	}
}

// With a linger, a server whose starter is gone waits for a program to take
// it over; one that comes in time keeps it; without one, it ends.
func TestALingeringServerCanBeTakenOver(t *testing.T) {
	f := startByStarter(t, time.Minute)
	f.killStarter(t)
	f.waitStdinClosed(t)
	if !osproc.Alive(f.pid) {
		t.Fatal("the server did not wait to be taken over")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := Hold(ctx, f.url, f.header)
	if err != nil {
		t.Fatalf("taking over the lingering server: %v", err)
	}
	defer h.Release()
	if _, err := f.get(t, "/"); err != nil {
		t.Fatalf("the server taken over does not answer: %v", err)
	}

	g := startByStarter(t, time.Second)
	cmd := g.spawn(t)
	g.killStarter(t)
	waitGone(t, "the server nobody took over", g.pid, 30*time.Second)
	waitGone(t, "the command the server ran", cmd, 10*time.Second)
	noFilesLeft(t, g)
}

// Stop ends the server and the commands it runs within seconds, and leaves
// no file: a server that answers, and one whose JavaScript no longer runs
// (it cannot hear the request to stop).
func TestStopEndsTheServerAndItsCommands(t *testing.T) {
	node := needNode(t)
	for _, wedged := range []bool{false, true} {
		name := map[bool]string{false: "answering", true: "wedged"}[wedged]
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			useTempDir(t, tmp)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv, err := Start(ctx, Options{Command: []string{node, writeFakeServer(t)}, Dir: t.TempDir(), Env: []string{"TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			f := &fakeServer{pid: srv.PID(), url: srv.URL, header: srv.Header(), tmp: tmp}
			cmd := f.spawn(t)
			if wedged {
				if _, err := f.get(t, "/wedge"); err != nil {
					t.Fatal(err)
				}
			}
			stopped := make(chan struct{})
			go func() { srv.Stop(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(20 * time.Second):
				t.Fatalf("Stop did not return for the %s server", name)
			}
			if osproc.Alive(f.pid) {
				t.Fatalf("the %s server still runs after Stop", name)
			}
			waitGone(t, "the command of the stopped server", cmd, 10*time.Second)
			noFilesLeft(t, f)
		})
	}
}

// A user's NODE_OPTIONS that register module hooks (which run in a worker
// thread started before our preload) do not stop the server from starting,
// and it still ends with its starter.
func TestServerStartsUnderTheUsersModuleHooks(t *testing.T) {
	node := needNode(t)
	tmp := t.TempDir()
	useTempDir(t, tmp)
	hooks := t.TempDir()
	reg := filepath.Join(hooks, "register.cjs")
	files := map[string]string{
		"register.cjs": "require('module').register(require('url').pathToFileURL(require('path').join(__dirname, 'hooks.mjs')).href);\n",
		"hooks.mjs":    "export async function resolve(s, c, next) { return next(s, c); }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(hooks, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if strings.ContainsAny(reg, " \"'\\") {
		t.Skipf("the hooks' path %q needs quoting in NODE_OPTIONS", reg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := Start(ctx, Options{Command: []string{node, writeFakeServer(t)}, Dir: t.TempDir(), StartTimeout: 30 * time.Second,
		Env: []string{"TMPDIR=" + tmp, "TMP=" + tmp, "TEMP=" + tmp, "NODE_OPTIONS=--require " + reg}})
	if err != nil {
		t.Fatalf("the server under the user's module hooks: %v", err)
	}
	defer srv.Stop()
	f := &fakeServer{pid: srv.PID(), url: srv.URL, header: srv.Header(), tmp: tmp}
	if _, err := f.get(t, "/"); err != nil {
		t.Fatalf("the server does not answer: %v", err)
	}
}

// The preload runs an abort listener added to a signal already aborted
// (the server's shell tool adds the one that kills its command only after
// spawning it), once, unless it is removed first; other listeners run as
// they always do. A late listener that kills nothing (one linking another
// controller to an old signal) keeps the platform's behaviour: it never runs.
func TestLateAbortListenersRun(t *testing.T) {
	node := needNode(t)
	pin := filepath.Join(t.TempDir(), "pin.cjs")
	if err := os.WriteFile(pin, pinScript, 0o600); err != nil {
		t.Fatal(err)
	}
	const script = `
const ran = [];
const child = { kill: () => {} };
const early = new AbortController();
early.signal.addEventListener('abort', () => ran.push('early'));
early.abort();
const ac = new AbortController();
ac.abort();
ac.signal.addEventListener('abort', function (e) { child.kill('SIGTERM'); ran.push('late:' + e.type + ':' + (this === ac.signal)); }, { once: true });
const removed = () => { child.kill(); ran.push('removed'); };
ac.signal.addEventListener('abort', removed);
ac.signal.removeEventListener('abort', removed);
ac.signal.addEventListener('abort', { handleEvent: () => { child.kill(); ran.push('object'); } });
const off = new AbortController(); off.abort();
ac.signal.addEventListener('abort', () => { child.kill(); ran.push('own signal aborted'); }, { signal: off.signal });
const linked = new AbortController();
ac.signal.addEventListener('abort', () => { linked.abort(); ran.push('links a controller'); });
const other = new EventTarget();
other.addEventListener('abort', () => { child.kill(); ran.push('not a signal'); });
setTimeout(() => console.log(ran.join(',')), 20);
`
	cmd := exec.Command(node, "--require", pin, "-e", script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "early,late:abort:true,object"; got != want {
		t.Fatalf("listeners ran: %q; want %q", got, want)
	}
}
