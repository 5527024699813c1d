// Package vim tests the Vim 9 plugin (plugins/vim) in the real Vim: its
// own assert_* unit tests run inside Vim against the real sidecar, the
// editor-link transcripts replayed against the plugin's code, and, end to
// end, the real interactive Vim in tmux with the real Gemini CLI.
//
// The test controls Vim over a channel of Vim's own (JSON mode): Vim
// connects to the test at start-up and evaluates what the test sends, the
// way a remote-control API does.
package vim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

const (
	// callTimeout bounds one evaluation in Vim.
	callTimeout = 20 * time.Second
	// waitTimeout bounds waiting for something the plugin does on its own.
	waitTimeout = 20 * time.Second
)

// requireVim returns the vim executable (9.0 or newer, with the features
// the plugin needs), or fails (CI) / skips the test.
func requireVim(t testing.TB) string {
	t.Helper()
	p := tmuxdrive.RequireProgram(t, "vim", "vim is not installed (apt-get install vim)")
	out, err := exec.Command(p, "--version").Output()
	if err != nil || !strings.Contains(string(out), "+channel") || !strings.Contains(string(out), "+terminal") {
		tmuxdrive.Missing(t, "vim has no +channel/+terminal (apt-get install vim)")
	}
	return p
}

// Options configure startVim.
type Options struct {
	// Config is merged over the g:gemini_companion the harness sets (the
	// test binary as sidecar, debug log in the sandbox, no auto start).
	Config map[string]any
	// Env replaces the environment (default: the sandbox's, HOME its Home).
	Env []string
	// Args are extra arguments for vim (files to edit).
	Args []string
	// UI runs Vim in tmux (a real terminal) instead of headless (-es).
	UI bool
	// Vimrc is more of the user's vimrc, before the plugin loads (e.g.
	// ALE's settings and packadd! ale).
	Vimrc string
}

// Vim is a running Vim with the plugin loaded and a control channel.
type Vim struct {
	t       testing.TB
	sb      *testkit.Sandbox
	ctl     *ctlConn
	logFile string
	pane    *tmuxdrive.Pane
	proc    *testkit.Process // a headless vim
	stdin   interface{ Close() error }

	mu sync.Mutex
	// exNotes are the plugin's messages printed by commands run through
	// Ex: execute() captures them, so they never reach :messages.
	exNotes []string
}

// vimrc loads the plugin, connects the control channel and defines the
// helpers the test calls through it.
const vimrc = `set nocompatible
set noswapfile viminfo= shortmess+=I
set rtp^=%s
filetype on
let g:gemini_companion = json_decode(%s)
let g:gic_ctl = ch_open('127.0.0.1:%d', {'mode': 'json', 'waittime': 10000})
function! GicEx(cmd) abort
  try
    return [1, execute(a:cmd)]
  catch
    return [0, v:exception . ' @ ' . v:throwpoint]
  endtry
endfunction
function! GicEval(expr) abort
  try
    return [1, eval(a:expr)]
  catch
    return [0, v:exception . ' @ ' . v:throwpoint]
  endtry
endfunction
source %s
%s
runtime plugin/gemini_companion.vim
`

// vimOnOneFile starts Vim with the plugin's sidecar running, in a
// workspace holding a.txt ("one\n"), and returns the sandbox, that file's
// path and Vim.
func vimOnOneFile(t testing.TB) (*testkit.Sandbox, string, *Vim) {
	t.Helper()
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "one\n")
	v := startVim(t, sb, Options{Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	return sb, a, v
}

// startVim starts Vim in sb.Workspace and quits it (:qa!) when the test ends.
func startVim(t testing.TB, sb *testkit.Sandbox, opts Options) *Vim {
	t.Helper()
	vimBin := requireVim(t)
	v := &Vim{t: t, sb: sb, logFile: filepath.Join(sb.TmpDir, "sidecar.log")}
	config := map[string]any{
		"log_level":  "debug",
		"log_file":   v.logFile,
		"auto_start": false,
	}
	for k, val := range opts.Config {
		config[k] = val
	}
	if _, ok := config["sidecar"]; !ok {
		config["sidecar"] = testkit.Binary(t)
	}
	cfg, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	rc := filepath.Join(sb.TmpDir, "vimrc")
	helpers := filepath.Join(testkit.ModuleRoot(t), "tests", "vim", "helpers.vim")
	script := fmt.Sprintf(vimrc, testkit.PluginDir(t, "vim"), vimString(string(cfg)), ln.Addr().(*net.TCPAddr).Port, helpers, opts.Vimrc)
	if err := os.WriteFile(rc, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	env := opts.Env
	if env == nil {
		env = testkit.WithEnv(sb.Env(), "HOME="+sb.Home)
	}
	args := append([]string{"-N", "-u", rc, "-i", "NONE"}, opts.Args...)
	if opts.UI {
		v.pane = tmuxdrive.Start(t, tmuxdrive.Options{
			Dir: sb.Workspace, Env: env, Command: append([]string{vimBin}, args...), Width: 200, Height: 50,
		})
	} else {
		cmd := exec.Command(vimBin, append([]string{"-es"}, args...)...)
		cmd.Dir = sb.Workspace
		cmd.Env = env
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		v.stdin = in
		v.proc = testkit.StartProcess(t, cmd)
	}
	t.Cleanup(v.stop)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	select {
	case c := <-accepted:
		v.ctl = newCtl(c)
	case <-time.After(15 * time.Second):
		t.Fatalf("vim did not connect its control channel\n%s", v.diagnostics())
	}
	return v
}

// diagnostics is what a failure message shows about Vim and the sidecar.
func (v *Vim) diagnostics() string {
	var b strings.Builder
	if v.proc != nil {
		fmt.Fprintf(&b, "--- vim output:\n%s\n", v.proc.Output.String())
	}
	if v.pane != nil {
		fmt.Fprintf(&b, "--- screen:\n%s\n", v.pane.Screen())
	}
	if v.ctl != nil {
		if res, err := v.ctl.call(2*time.Second, "GicEval", "string(filter(gemini_companion#link#State(), {k -> k !=# 'policy'}))"); err == nil {
			fmt.Fprintf(&b, "--- link state: %v\n", res)
		}
		if res, err := v.ctl.call(2*time.Second, "GicEval", messagesExpr); err == nil {
			for _, n := range asList(res) {
				fmt.Fprintf(&b, "--- message: %v\n", n)
			}
		}
	}
	b.WriteString(testkit.SidecarLogTail(v.logFile))
	return b.String()
}

// stop quits Vim as a user does (:qa!) and waits for it.
func (v *Vim) stop() {
	if v.ctl != nil {
		v.ctl.send([]any{"ex", "qa!"})
	}
	if v.proc != nil {
		v.proc.WaitOrKill(v.t, 10*time.Second, v.diagnostics)
		_ = v.stdin.Close()
	}
	if v.pane != nil {
		v.pane.AwaitExit(10 * time.Second)
	}
	if v.ctl != nil {
		v.ctl.close()
		v.ctl = nil
	}
}

// Quit quits Vim now (as at cleanup) and waits for it.
func (v *Vim) Quit(t testing.TB) {
	t.Helper()
	v.stop()
}

// Ex runs an Ex command and returns its output.
func (v *Vim) Ex(t testing.TB, cmd string) string {
	t.Helper()
	res, err := v.ctl.call(callTimeout, "GicEx", cmd)
	if err != nil {
		t.Fatalf(":%s: %v\n%s", cmd, err, v.diagnostics())
	}
	s, _ := res.(string)
	for _, line := range strings.Split(s, "\n") {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "Gemini: "); ok {
			v.mu.Lock()
			v.exNotes = append(v.exNotes, msg)
			v.mu.Unlock()
		}
	}
	return s
}

// Eval evaluates a Vim expression (legacy syntax) and returns its value
// as decoded from JSON.
func (v *Vim) Eval(t testing.TB, expr string) any {
	t.Helper()
	res, err := v.ctl.call(callTimeout, "GicEval", expr)
	if err != nil {
		t.Fatalf("eval %s: %v\n%s", expr, err, v.diagnostics())
	}
	return res
}

// EvalJSON evaluates expr and decodes its value into dst.
func (v *Vim) EvalJSON(t testing.TB, dst any, expr string) {
	t.Helper()
	raw, err := json.Marshal(v.Eval(t, expr))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		t.Fatalf("eval %s = %s: %v", expr, raw, err)
	}
}

// Bool evaluates expr as a boolean (a number not 0, or v:true).
func (v *Vim) Bool(t testing.TB, expr string) bool {
	t.Helper()
	switch x := v.Eval(t, expr).(type) {
	case bool:
		return x
	case float64:
		return x != 0
	}
	return false
}

// WaitFor waits until expr is true in Vim.
func (v *Vim) WaitFor(t testing.TB, what, expr string, timeout time.Duration) {
	t.Helper()
	if !testkit.Poll(timeout, func() bool {
		time.Sleep(10 * time.Millisecond)
		return v.Bool(t, expr)
	}) {
		t.Fatalf("waited %v for %s (%s)\n%s", timeout, what, expr, v.diagnostics())
	}
}

// WaitRunning waits until the plugin's sidecar answered initialize.
func (v *Vim) WaitRunning(t testing.TB) {
	t.Helper()
	v.WaitFor(t, "the sidecar to run", "gemini_companion#link#Running()", waitTimeout)
}

// messagesExpr is the plugin's messages the user saw so far: its lines
// of :messages, without their "Gemini: " prefix.
const messagesExpr = `map(filter(split(execute('messages'), "\n"), {_, l -> l =~# '^Gemini: '}), {_, l -> l[8:]})`

// Notes are the messages the plugin showed so far: those in :messages,
// then those of commands run through Ex.
func (v *Vim) Notes(t testing.TB) []string {
	t.Helper()
	var notes []string
	v.EvalJSON(t, &notes, messagesExpr)
	v.mu.Lock()
	defer v.mu.Unlock()
	return append(notes, v.exNotes...)
}

// WaitNote waits for a message containing substr.
func (v *Vim) WaitNote(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	found, ok := testkit.WaitContains(timeout, func() []string {
		time.Sleep(10 * time.Millisecond)
		return v.Notes(t)
	}, substr)
	if !ok {
		t.Fatalf("no message containing %q within %v; messages: %q", substr, timeout, v.Notes(t))
	}
	return found
}

// LinkRoundTrip asks the sidecar for its status through the plugin and
// waits for the answer: every message the sidecar sent before it has been
// handled, and shown, by then.
func (v *Vim) LinkRoundTrip(t testing.TB) {
	t.Helper()
	v.Ex(t, "let g:gic_round_trip = 0 | call gemini_companion#link#Request('status/get', {}, {e, r -> execute('let g:gic_round_trip = 1')})")
	v.WaitFor(t, "the answer to status/get", "g:gic_round_trip", waitTimeout)
}

// noDiskNote fails when the plugin told the user that a file changed on
// disk (or is back as it was) although nothing touched it: checked after a
// round trip on the link, so a message on its way would be seen.
func noDiskNote(t testing.TB, v *Vim) {
	t.Helper()
	v.LinkRoundTrip(t)
	for _, note := range v.Notes(t) {
		if strings.Contains(note, "on disk") {
			t.Fatalf("the user was told about a change on disk that never happened: %q\n%s", note, v.diagnostics())
		}
	}
}

// Lines is the text of buffer expr (a bufnr() argument) as lines.
func (v *Vim) Lines(t testing.TB, buf string) []string {
	t.Helper()
	var lines []string
	v.EvalJSON(t, &lines, fmt.Sprintf("getbufline(%s, 1, '$')", buf))
	return lines
}

func asList(x any) []any {
	l, _ := x.([]any)
	return l
}

// vimString is a Vim expression for the string s (any bytes, newlines
// included).
func vimString(s string) string {
	if !strings.ContainsAny(s, "\n\r\x00") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	j, _ := json.Marshal(s)
	return "json_decode('" + strings.ReplaceAll(string(j), "'", "''") + "')"
}

// ctlConn is the test's end of Vim's JSON channel: it sends
// ["call", func, [arg], -id] and reads [-id, result].
type ctlConn struct {
	conn    net.Conn
	mu      sync.Mutex
	nextID  int
	waiters map[int]chan json.RawMessage
	wmu     sync.Mutex
	done    chan struct{}
}

func newCtl(c net.Conn) *ctlConn {
	cc := &ctlConn{conn: c, waiters: map[int]chan json.RawMessage{}, done: make(chan struct{})}
	go cc.read()
	return cc
}

func (c *ctlConn) read() {
	defer close(c.done)
	r := bufio.NewReaderSize(c.conn, 1<<20)
	dec := json.NewDecoder(r)
	for {
		var msg []json.RawMessage
		if err := dec.Decode(&msg); err != nil {
			return
		}
		if len(msg) != 2 {
			continue
		}
		var id int
		if json.Unmarshal(msg[0], &id) != nil || id >= 0 {
			continue
		}
		c.mu.Lock()
		ch := c.waiters[-id]
		delete(c.waiters, -id)
		c.mu.Unlock()
		if ch != nil {
			ch <- msg[1]
		}
	}
}

func (c *ctlConn) send(msg []any) {
	data, _ := json.Marshal(msg)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.conn.Write(append(data, '\n'))
}

// call calls one of the vimrc's helpers (GicEx, GicEval) and returns the
// value, or the error Vim raised.
func (c *ctlConn) call(timeout time.Duration, fn, arg string) (any, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.waiters[id] = ch
	c.mu.Unlock()
	c.send([]any{"call", fn, []any{arg}, -id})
	select {
	case raw := <-ch:
		var res []any
		if err := json.Unmarshal(raw, &res); err != nil || len(res) != 2 {
			return nil, fmt.Errorf("vim answered %s", raw)
		}
		if ok, _ := res[0].(float64); ok != 1 {
			return nil, fmt.Errorf("%v", res[1])
		}
		return res[1], nil
	case <-c.done:
		return nil, fmt.Errorf("vim closed the control channel")
	case <-time.After(timeout):
		c.mu.Lock()
		delete(c.waiters, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("no answer within %v", timeout)
	}
}

func (c *ctlConn) close() {
	_ = c.conn.Close()
	<-c.done
}
