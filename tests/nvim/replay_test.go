package nvim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// The transcript replay plays the sidecar to the plugin's own code: the
// plugin starts what it believes is gemini-ide-companion (this test binary,
// re-executed as a relay between its stdin/stdout and a socket of the test),
// the test sends the transcript's `sidecar` messages with Content-Length
// framing, checks the plugin's messages against its `plugin` lines, and
// performs its `user` steps through the plugin's diff UI (:w accepts, ...).
// The format is docs/editor-link.md's (companion/protocol/transcripts).

// relayEnv names the socket a relay connects to; set only in the
// environment of the Neovim a replay starts.
const relayEnv = "GIC_NVIM_REPLAY_SOCKET"

// relayLost is the relay's exit code when the test closes its socket, which
// is how a replay makes "the sidecar" die.
const relayLost = 3

func TestMain(m *testing.M) {
	if addr := os.Getenv(relayEnv); addr != "" {
		os.Exit(relay(addr))
	}
	os.Exit(m.Run())
}

// relay is the stand-in sidecar process: it tells the test its arguments,
// then copies bytes both ways until either side ends.
func relay(addr string) int {
	conn, err := net.Dial("unix", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "replay relay: %v\n", err)
		return 1
	}
	args, _ := json.Marshal(os.Args[1:])
	if _, err := conn.Write(append(args, '\n')); err != nil {
		return 1
	}
	go func() {
		_, _ = io.Copy(conn, os.Stdin)
		os.Exit(0) // the plugin closed our stdin
	}()
	_, _ = io.Copy(os.Stdout, conn)
	return relayLost
}

// step is one line of a transcript.
type step struct {
	Comment string          `json:"comment"`
	Plugin  json.RawMessage `json:"plugin"`
	Sidecar json.RawMessage `json:"sidecar"`
	CLI     json.RawMessage `json:"cli"`
	User    *struct {
		Action  string `json:"action"`
		Content string `json:"content"`
	} `json:"user"`
	Restart json.RawMessage `json:"restart"`
}

func loadTranscript(t *testing.T, path string) []step {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var s step
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		steps = append(steps, s)
	}
	return steps
}

// transcripts lists the shared transcripts a plugin replays and the
// plugin's own.
func transcripts(t *testing.T) []string {
	root := testkit.ModuleRoot(t)
	var files []string
	for _, dir := range []string{filepath.Join(root, "companion", "protocol", "transcripts"), filepath.Join(root, "tests", "nvim", "testdata", "transcripts")} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range m {
			// sidecar-* files test the sidecar's own answers (errors,
			// protocol 1): nothing a plugin sends.
			if !strings.HasPrefix(filepath.Base(f), "sidecar-") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no transcripts found")
	}
	return files
}

// TestTranscriptReplay replays every transcript against the plugin in a
// headless Neovim.
func TestTranscriptReplay(t *testing.T) {
	requireNvim(t)
	for _, path := range transcripts(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			steps := loadTranscript(t, path)
			r := newReplayer(t)
			r.run(steps)
		})
	}
}

// link is one connection from a relay: one life of the stand-in sidecar.
type link struct {
	conn net.Conn
	args []string
	msgs chan map[string]any // from the plugin, in order
	errc chan error
	wmu  sync.Mutex
}

func (l *link) read(r *bufio.Reader) {
	defer close(l.msgs)
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					l.errc <- err
				}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if n < 0 {
			l.errc <- errors.New("the plugin sent a header block without Content-Length")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			l.errc <- fmt.Errorf("body: %w", err)
			return
		}
		var msg map[string]any
		if err := json.Unmarshal(body, &msg); err != nil {
			l.errc <- fmt.Errorf("the plugin sent %q: %w", body, err)
			return
		}
		l.msgs <- msg
	}
}

func (l *link) send(msg map[string]any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err = fmt.Fprintf(l.conn, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

// pendingReq is a request one side sent that the other has yet to answer.
type pendingReq struct {
	tid      any // its id in the transcript ("<id>" or a value)
	rid      any // its id on the wire
	method   string
	injected int // plugin requests made through sidecar.request: the reply slot; -1: by :GeminiCli, -2: by :GeminiStatus
}

type replayer struct {
	t       *testing.T
	sb      *testkit.Sandbox
	nv      *Nvim
	ln      net.Listener
	l       *link
	vars    map[string]string
	fromPl  []pendingReq // plugin requests not answered yet
	fromSc  []pendingReq // sidecar requests not answered yet
	nextID  int
	slots   int
	policy  map[string]any // from the last initialize result sent
	restart bool           // the plugin is restarting after a replayed crash
	crashes int
	byUI    int              // editor messages made by editor actions
	envFile string           // where the terminal :GeminiCli opens writes its environment
	last    map[string]any   // the value last matched (or sent) for a placeholder, by key
	stash   []map[string]any // plugin notifications no line expected yet
	done    map[int]bool     // steps performed ahead of their turn
	// envChanged is the env of the last workspace/envChanged sent.
	envChanged map[string]any
}

func newReplayer(t *testing.T) *replayer {
	sb := testkit.NewSandbox(t)
	dir, err := os.MkdirTemp("", "gicrp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "relay.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := &replayer{t: t, sb: sb, ln: ln, nextID: 1000, vars: map[string]string{"workspace": sb.Workspace},
		last: map[string]any{}, done: map[int]bool{}}
	for _, name := range []string{"file", "file2", "file3"} {
		r.vars[name] = filepath.Join(sb.Workspace, name+".txt")
	}
	// ${file} exists when a replay starts; ${file2} and ${file3} do not.
	if err := os.WriteFile(r.vars["file"], []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"), relayEnv+"="+sock)
	// The CLI :GeminiCli starts writes its environment down.
	r.envFile = filepath.Join(sb.TmpDir, "cli-env.txt")
	script := "{ echo; env; echo END; } > '" + r.envFile + "'; exec cat"
	r.nv = startNvim(t, sb, Options{NoBinary: true, Env: env, Setup: map[string]any{
		"sidecar":  map[string]any{"cmd": self, "build": false},
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}, "position": "bottom", "start_insert": false},
	}})
	r.accept()
	return r
}

// accept waits for the plugin's (next) sidecar process to connect.
func (r *replayer) accept() {
	r.t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := r.ln.Accept()
		ch <- res{c, err}
	}()
	var got res
	select {
	case got = <-ch:
	case <-time.After(waitTimeout):
		r.t.Fatalf("the plugin did not start its sidecar within %v\n%s", waitTimeout, r.nv.diagnostics())
	}
	if got.err != nil {
		r.t.Fatal(got.err)
	}
	br := bufio.NewReader(got.c)
	line, err := br.ReadString('\n')
	if err != nil {
		r.t.Fatalf("relay: %v", err)
	}
	l := &link{conn: got.c, msgs: make(chan map[string]any, 64), errc: make(chan error, 1)}
	if err := json.Unmarshal([]byte(line), &l.args); err != nil {
		r.t.Fatalf("relay args %q: %v", line, err)
	}
	for _, want := range []string{"--stdio", "--framing=lsp"} {
		if !slices.Contains(l.args, want) {
			r.t.Errorf("the plugin runs the sidecar with %q, without %s", l.args, want)
		}
	}
	go l.read(br)
	r.l = l
	r.fromPl, r.fromSc = nil, nil
	r.t.Cleanup(func() { got.c.Close() })
}

// subst replaces ${workspace}, ${file}, ... in every string of v.
func (r *replayer) subst(v any) any {
	switch x := v.(type) {
	case string:
		for k, val := range r.vars {
			x = strings.ReplaceAll(x, "${"+k+"}", val)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.subst(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.subst(e)
		}
		return out
	}
	return v
}

func decodeMsg(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("transcript message %s: %v", raw, err)
	}
	return m
}

// matches reports why got does not match want (transcript rules), or "".
func matches(want, got any, path string) string { return matchRec(want, got, path, nil) }

// matchRec is matches; rec (if not nil) gets every value a placeholder
// matched, by its key.
func matchRec(want, got any, path string, rec func(key string, v any)) string {
	key := path[strings.LastIndex(path, ".")+1:]
	if w, ok := want.(string); ok && rec != nil && strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") {
		defer func() { rec(key, got) }()
	}
	switch w := want.(type) {
	case string:
		switch w {
		case "<any>":
			return ""
		case "<string>":
			if _, ok := got.(string); ok {
				return ""
			}
			return fmt.Sprintf("%s: want a string, got %v", path, got)
		case "<number>":
			if _, ok := got.(float64); ok {
				return ""
			}
			return fmt.Sprintf("%s: want a number, got %v", path, got)
		case "<id>":
			switch got.(type) {
			case float64, string:
				return ""
			}
			return fmt.Sprintf("%s: want an id, got %v", path, got)
		}
		if g, ok := got.(string); ok && g == w {
			return ""
		}
		return fmt.Sprintf("%s: want %q, got %#v", path, w, got)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %#v", path, got)
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if why := matchRec(wv, gv, path+"."+k, rec); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want %d elements, got %#v", path, len(w), got)
		}
		for i := range w {
			if why := matchRec(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), rec); why != "" {
				return why
			}
		}
		return ""
	}
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("%s: want %#v, got %#v", path, want, got)
}

func isRequest(m map[string]any) bool  { _, id := m["id"]; _, meth := m["method"]; return id && meth }
func isResponse(m map[string]any) bool { _, id := m["id"]; _, meth := m["method"]; return id && !meth }

// next returns the plugin's next message.
func (r *replayer) next(what string) map[string]any {
	r.t.Helper()
	select {
	case m, ok := <-r.l.msgs:
		if !ok {
			r.t.Fatalf("the link closed while waiting for %s\n%s", what, r.nv.diagnostics())
		}
		return m
	case err := <-r.l.errc:
		r.t.Fatalf("reading the plugin's messages: %v", err)
	case <-time.After(waitTimeout):
		r.t.Fatalf("no message from the plugin within %v; want %s\n%s", waitTimeout, what, r.nv.diagnostics())
	}
	return nil
}

func (r *replayer) run(steps []step) {
	afterUser := false
	for i, s := range steps {
		where := fmt.Sprintf("step %d", i+1)
		if r.done[i] {
			afterUser = true
			continue
		}
		if s.Sidecar != nil {
			r.userFirst(steps, i)
		}
		switch {
		case s.Comment != "" || s.CLI != nil:
		case s.Plugin != nil:
			r.expect(where, r.subst(decodeMsg(r.t, s.Plugin)).(map[string]any), afterUser)
		case s.Sidecar != nil:
			afterUser = false
			r.play(where, r.subst(decodeMsg(r.t, s.Sidecar)).(map[string]any))
		case s.User != nil:
			afterUser = true
			r.user(where, s.User.Action, s.User.Content)
		case s.Restart != nil:
			afterUser = false
			r.crash(where)
		}
	}
	r.finish()
}

// expect checks the plugin's next message against want, first making the
// plugin send it when nothing in the replay so far would: requests and
// notifications the editor sends on its own (context, folders, trust,
// status/get, terminal/env, errors) go through the plugin's transport API,
// sidecar.request / sidecar.notify, as its UI modules call them.
func (r *replayer) expect(where string, want map[string]any, afterUser bool) {
	r.t.Helper()
	method, _ := want["method"].(string)
	injected := 0
	switch {
	case isResponse(want) || method == "initialize":
	case afterUser && (method == "diff/accepted" || method == "diff/rejected"):
	case method == "shutdown":
		if err := r.nv.rpc.notify("nvim_command", "GeminiStop"); err != nil {
			r.t.Fatal(err)
		}
	case method == "terminal/env":
		// :GeminiCli asks for the environment of the terminal it opens.
		if err := r.nv.rpc.notify("nvim_command", "GeminiCli"); err != nil {
			r.t.Fatal(err)
		}
		injected = -1
	case method == "status/get":
		// :GeminiStatus asks the sidecar and prints what it says.
		if err := r.nv.rpc.notify("nvim_command", "GeminiStatus"); err != nil {
			r.t.Fatal(err)
		}
		injected = -2
	case r.edit(where, want):
		r.byUI++
	default:
		r.t.Logf("%s: %s goes through sidecar.%s (no editor action makes it)", where, method, map[bool]string{true: "request", false: "notify"}[isRequest(want)])
		injected = r.inject(want)
	}
	r.await(where, want, injected)
}

// await checks that the plugin's next message (after context updates it
// sends on its own) matches want, and keeps track of requests.
func (r *replayer) await(where string, want map[string]any, injected int) {
	r.t.Helper()
	method, _ := want["method"].(string)
	var got map[string]any
	for i, m := range r.stash {
		if !isRequest(want) && !isResponse(want) && r.match(want, m) == "" {
			got = m
			r.stash = slices.Delete(r.stash, i, i+1)
			break
		}
	}
	for got == nil {
		m := r.next(fmt.Sprintf("%s: %v (not yet matched: %v)", where, want, r.stash))
		why := r.match(want, m)
		if why == "" {
			got = m
			break
		}
		if isRequest(m) || isResponse(m) {
			raw, _ := json.Marshal(m)
			r.t.Fatalf("%s: the plugin sent %s\n%s\n%s", where, raw, why, r.nv.diagnostics())
		}
		// A notification no line expects (yet): kept for a later line.
		r.stash = append(r.stash, m)
	}
	_ = matchRec(want, got, "message", func(k string, v any) { r.last[k] = v })
	switch {
	case isRequest(got):
		r.fromPl = append(r.fromPl, pendingReq{tid: want["id"], rid: got["id"], method: method, injected: injected})
	case isResponse(got):
		for i, p := range r.fromSc {
			if reflect.DeepEqual(p.rid, got["id"]) {
				r.fromSc = slices.Delete(r.fromSc, i, i+1)
				break
			}
		}
	}
}

// match is matches plus the id rules: a request's id is any id; a reply
// carries the id of the sidecar request it answers.
func (r *replayer) match(want, got map[string]any) string {
	w := make(map[string]any, len(want))
	for k, v := range want {
		w[k] = v
	}
	if isResponse(want) {
		if !isResponse(got) {
			return "want a reply"
		}
		// "<id>": the earliest request of the sidecar not answered yet.
		ok := false
		for i, p := range r.fromSc {
			if want["id"] == "<id>" && i == 0 || reflect.DeepEqual(p.tid, want["id"]) {
				ok = reflect.DeepEqual(p.rid, got["id"])
				break
			}
		}
		if !ok {
			return fmt.Sprintf("id %v does not answer the request the transcript answers (open: %v)", got["id"], r.fromSc)
		}
		delete(w, "id")
	} else if isRequest(want) {
		if !isRequest(got) {
			return "want a request"
		}
		w["id"] = "<id>"
	} else if _, has := got["id"]; has {
		return "want a notification"
	}
	return matches(w, got, "message")
}

// inject makes the plugin send want through sidecar.request/notify and
// returns the reply slot of a request (0 for a notification).
func (r *replayer) inject(want map[string]any) int {
	params, _ := json.Marshal(emptyObjects(want["params"]))
	if want["params"] == nil {
		params = []byte("null")
	}
	if !isRequest(want) {
		r.nv.Lua(r.t, decodeLua+`local method, params = ...
require("gemini_companion.sidecar").notify(method, decode(params))`, want["method"], string(params))
		return 0
	}
	r.slots++
	r.nv.Lua(r.t, decodeLua+`local method, params, slot = ...
require("gemini_companion.sidecar").request(method, decode(params), function(err, result)
  _G.gemini_test.replies = _G.gemini_test.replies or {}
  _G.gemini_test.replies[slot] = { err = err or vim.NIL, result = result == nil and vim.NIL or result }
end)`, want["method"], string(params), r.slots)
	return r.slots
}

// emptyDict marks an empty JSON object on its way into Lua, where {} would
// otherwise become an empty list.
const emptyDict = "__gic_empty_object__"

// decodeLua defines decode(json) for the injected messages' params.
const decodeLua = `
local function fix(v)
  if v == "` + emptyDict + `" then return vim.empty_dict() end
  if type(v) == "table" then for k, x in pairs(v) do v[k] = fix(x) end end
  return v
end
local function decode(s) if s == "null" then return nil end return fix(vim.json.decode(s)) end
`

func emptyObjects(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return emptyDict
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = emptyObjects(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = emptyObjects(e)
		}
		return out
	}
	return v
}

// play sends a sidecar message to the plugin and checks what the user
// sees of it.
func (r *replayer) play(where string, msg map[string]any) {
	r.t.Helper()
	id, hasID := msg["id"]
	msg = r.fill(msg, "").(map[string]any)
	if hasID {
		msg["id"] = id
	}
	var answered *pendingReq
	switch {
	case isRequest(msg):
		tid := msg["id"]
		rid := any(float64(r.nextID))
		if n, ok := tid.(float64); ok {
			rid = n
		}
		r.nextID++
		msg["id"] = rid
		r.fromSc = append(r.fromSc, pendingReq{tid: tid, rid: rid, method: fmt.Sprint(msg["method"])})
	case isResponse(msg):
		idx := -1
		for i, p := range r.fromPl {
			if msg["id"] != "<id>" && reflect.DeepEqual(p.tid, msg["id"]) {
				idx = i
				break
			}
		}
		if idx < 0 && len(r.fromPl) > 0 {
			idx = 0
		}
		if idx < 0 {
			r.t.Fatalf("%s: the transcript answers a request the plugin did not send", where)
		}
		p := r.fromPl[idx]
		answered = &p
		r.fromPl = slices.Delete(r.fromPl, idx, idx+1)
		msg["id"] = p.rid
		if p.method == "initialize" {
			if res, ok := msg["result"].(map[string]any); ok {
				if pol, ok := res["policy"].(map[string]any); ok {
					r.policy = pol
				}
			}
		}
	}
	if err := r.l.send(msg); err != nil {
		r.t.Fatalf("%s: send: %v", where, err)
	}
	if msg["method"] == "workspace/envChanged" {
		params, _ := msg["params"].(map[string]any)
		r.envChanged, _ = params["env"].(map[string]any)
	}
	r.observe(where, msg, answered)
}

// observe waits for what a user would notice of a sidecar message.
func (r *replayer) observe(where string, msg map[string]any, answered *pendingReq) {
	r.t.Helper()
	nv := r.nv
	params, _ := msg["params"].(map[string]any)
	switch {
	case answered != nil && answered.method == "initialize":
		if _, ok := msg["result"]; ok {
			nv.WaitRunning(r.t)
			if r.restart {
				r.restart = false
				nv.WaitNote(r.t, r.message("restarted", nil), waitTimeout)
			}
		}
	case answered != nil && answered.method == "shutdown":
		// The sidecar exits after its reply; the plugin must not restart it.
		r.l.conn.Close()
		nv.WaitLua(r.t, where+": the plugin to see its sidecar stop", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	case answered != nil && answered.injected == -2:
		// :GeminiStatus prints the answer (or why there is none).
		want := "status/get failed: "
		if e, ok := msg["error"].(map[string]any); ok {
			want += fmt.Sprint(e["message"])
		} else {
			res, _ := msg["result"].(map[string]any)
			want = fmt.Sprintf("connected Gemini CLI sessions: %v", res["connectedClients"])
		}
		nv.WaitLua(r.t, where+": :GeminiStatus to print "+want, `return vim.fn.execute("messages"):find(..., 1, true) ~= nil`, waitTimeout, want)
	case answered != nil && answered.injected < 0:
		// The terminal :GeminiCli opened has the environment the reply gave
		// (after an error, the one workspace/envChanged gave last).
		res, _ := msg["result"].(map[string]any)
		env, _ := res["env"].(map[string]any)
		if _, failed := msg["error"]; failed {
			env = r.envChanged
		}
		var last string
		if !poll(waitTimeout, func() bool {
			data, _ := os.ReadFile(r.envFile)
			last = string(data)
			if !strings.HasSuffix(last, "\nEND\n") {
				return false
			}
			for k, v := range env {
				if !strings.Contains(last, "\n"+k+"="+fmt.Sprint(v)+"\n") {
					return false
				}
			}
			return true
		}) {
			r.t.Fatalf("%s: the terminal :GeminiCli opened has not the environment %v:\n%s", where, env, last)
		}
		nv.Lua(r.t, `require("gemini_companion.terminal").close()`)
		_ = os.Remove(r.envFile)
	case answered != nil && answered.injected > 0:
		// The reply reaches the callback of sidecar.request as sent.
		var got map[string]any
		code := fmt.Sprintf(`local s = (_G.gemini_test.replies or {})[%d]; return s ~= nil`, answered.injected)
		nv.WaitLua(r.t, where+": the reply to reach sidecar.request's callback", code, waitTimeout)
		nv.LuaJSON(r.t, &got, fmt.Sprintf(`return _G.gemini_test.replies[%d]`, answered.injected))
		if e, ok := msg["error"].(map[string]any); ok {
			ge, _ := got["err"].(map[string]any)
			if ge == nil || ge["code"] != e["code"] {
				r.t.Errorf("%s: sidecar.request's callback got error %v, want code %v", where, got["err"], e["code"])
			}
		} else if why := matches(msg["result"], got["result"], "result"); why != "" && !(msg["result"] == nil && got["result"] == nil) {
			r.t.Errorf("%s: sidecar.request's callback got %v: %s", where, got["result"], why)
		}
	case msg["method"] == "log":
		level, _ := params["level"].(string)
		if text, _ := params["message"].(string); text != "" && level != "debug" {
			nv.WaitNote(r.t, text, waitTimeout)
		}
	case msg["method"] == "status":
		if text, ok := params["text"].(string); ok {
			nv.WaitLua(r.t, where+": the statusline to show "+text, `return vim.startswith(require("gemini_companion").statusline(), ...)`, waitTimeout, text)
		}
	case msg["method"] == "diff/state":
		if text, _ := params["message"].(string); text != "" {
			nv.WaitNote(r.t, text, waitTimeout)
		}
	}
}

// message is the policy's text name with {reason} filled in.
func (r *replayer) message(name string, vars map[string]string) string {
	text := map[string]string{
		"restarting": "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.",
		"restarted":  "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.",
	}[name]
	if msgs, ok := r.policy["messages"].(map[string]any); ok {
		if s, ok := msgs[name].(string); ok {
			text = s
		}
	}
	for k, v := range vars {
		text = strings.ReplaceAll(text, "{"+k+"}", v)
	}
	return text
}

// crash ends the stand-in sidecar: the plugin says so with the policy's
// text and starts a new one.
func (r *replayer) crash(where string) {
	r.t.Helper()
	r.crashes++
	r.l.conn.Close()
	r.nv.WaitNote(r.t, r.message("restarting", map[string]string{"reason": "exit code " + strconv.Itoa(relayLost)}), waitTimeout)
	r.restart = true
	r.accept()
}

// proposal makes the window of the newest diff's proposed side current
// and returns its buffer.
const focusProposal = `
local paths = require("gemini_companion.diff").paths()
local path = paths[#paths]
if not path then return 0 end
for _, w in ipairs(vim.api.nvim_list_wins()) do
  local b = vim.api.nvim_win_get_buf(w)
  if vim.api.nvim_buf_get_name(b) == "gemini://proposal/" .. path then
    vim.api.nvim_set_current_tabpage(vim.api.nvim_win_get_tabpage(w))
    vim.api.nvim_set_current_win(w)
    return b
  end
end
return 0`

// user does what the user does in the editor, through the plugin's UI.
func (r *replayer) user(where, action, content string) {
	r.t.Helper()
	nv := r.nv
	var buf int
	nv.LuaJSON(r.t, &buf, focusProposal)
	if buf == 0 {
		r.t.Fatalf("%s: no diff view open for the user to %s\n%s", where, action, nv.diagnostics())
	}
	switch action {
	case "accept":
		nv.Cmd(r.t, "write")
	case "acceptOverDiskChange":
		// The first :w over a change on disk asks; the second confirms.
		nv.Cmd(r.t, "write")
		var open bool
		nv.LuaJSON(r.t, &open, `return vim.api.nvim_buf_is_valid(...) and vim.api.nvim_buf_get_option(..., "modified")`, buf)
		if open {
			nv.Cmd(r.t, "write")
		}
	case "reject":
		nv.Cmd(r.t, "GeminiReject")
	case "close":
		nv.Cmd(r.t, "quit")
	case "edit":
		nv.Lua(r.t, `local buf, text = ...
require("gemini_companion.util").set_buf_text(buf, text)
vim.api.nvim_buf_set_option(buf, "modified", true)`, buf, content)
	default:
		r.t.Fatalf("%s: unknown user action %q", where, action)
	}
}

// finish stops the plugin's sidecar as Neovim does when it quits: the
// plugin sends shutdown, the stand-in answers and ends.
func (r *replayer) finish() {
	r.t.Helper()
	r.t.Logf("%d editor messages were made by editor actions, %d crashes replayed", r.byUI, r.crashes)
	var running bool
	r.nv.LuaJSON(r.t, &running, `return require("gemini_companion.sidecar").state.status ~= "stopped"`)
	if !running {
		return
	}
	if err := r.nv.rpc.notify("nvim_command", "GeminiStop"); err != nil {
		r.t.Fatal(err)
	}
	for {
		m := r.next("shutdown")
		if m["method"] == "shutdown" {
			_ = r.l.send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": nil})
			break
		}
		if isRequest(m) {
			raw, _ := json.Marshal(m)
			r.t.Errorf("after the transcript the plugin sent %s", raw)
		}
	}
	r.l.conn.Close()
	r.nv.WaitLua(r.t, "the plugin to stop its sidecar", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	if notes := r.nv.Notes(r.t); r.crashes == 0 && slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, "restarting") }) {
		r.t.Errorf("the replay had no crash, yet the plugin reported one: %q", notes)
	}
}

// editLua does in the editor what makes the plugin send a context,
// folders or trust message; it returns false when it cannot (the replay
// then uses the transport API).
const editLua = `
local method, p = ...
local api = vim.api
local function leave_visual()
  if require("gemini_companion.util").is_visual(api.nvim_get_mode().mode) then vim.cmd("normal! \27") end
end
-- 0-based byte column of UTF-16 position character (1-based) in line.
local function bytecol(line, character)
  local ok, b = pcall(vim.str_byteindex, line, character - 1, true)
  return ok and b or character - 1
end
if method == "context/fileFocused" or method == "context/selectionChanged" then
  if type(p.path) ~= "string" then return false end
  local cursor, sel = p.cursor, p.selectedText
  if vim.fn.filereadable(p.path) == 0 then
    -- A file the transcript never made: one that holds the selection
    -- where the cursor is (or lines long enough for the cursor).
    local lines = {}
    local line, character = cursor and cursor.line or 1, cursor and cursor.character or 1
    for _ = 1, line - 1 do table.insert(lines, "filler") end
    if sel then
      if sel:find("\n") or vim.str_utfindex(sel) > character then return false end
      table.insert(lines, string.rep(" ", character - vim.str_utfindex(sel)) .. sel)
    else
      table.insert(lines, string.rep(" ", character))
    end
    vim.fn.mkdir(vim.fn.fnamemodify(p.path, ":h"), "p")
    vim.fn.writefile(lines, p.path)
  end
  leave_visual()
  if api.nvim_buf_get_name(0) ~= p.path then vim.cmd("edit " .. vim.fn.fnameescape(p.path)) end
  local buf_lines = api.nvim_buf_get_lines(0, 0, -1, false)
  if sel then
    -- Select the text, ending where the transcript's cursor is.
    local text = table.concat(buf_lines, "\n")
    local s = text:find(sel, 1, true)
    if not s or sel == "" then return false end
    local function pos(offset) -- byte offset (1-based) in text -> {line, col0}
      local before = text:sub(1, offset - 1)
      local l = select(2, before:gsub("\n", "")) + 1
      return { l, #before - (before:match(".*\n()") or 1) + 1 }
    end
    local e = s + #sel - 1
    while e > s and text:byte(e) >= 0x80 and text:byte(e) < 0xC0 do e = e - 1 end
    local a, b = pos(s), pos(e)
    if cursor and cursor.line == a[1] and cursor.line ~= b[1] then a, b = b, a end
    api.nvim_win_set_cursor(0, a)
    vim.cmd("normal! v")
    api.nvim_win_set_cursor(0, b)
    -- A cursor just past a selection that ends its line: "$" puts it there.
    local last = buf_lines[b[1]]
    if cursor and cursor.line == b[1] and bytecol(last, cursor.character) > b[2] and b[2] + #sel:sub(-1) >= #last then
      vim.cmd("normal! $")
    end
  elseif cursor then
    local line = buf_lines[cursor.line]
    if not line then return false end
    api.nvim_win_set_cursor(0, { cursor.line, bytecol(line, cursor.character) })
  end
  require("gemini_companion.context").schedule()
  return true
elseif method == "context/fileClosed" then
  local buf = vim.fn.bufnr(p.path)
  if buf < 0 then return false end
  vim.cmd("bwipeout! " .. buf)
  return true
elseif method == "context/fileRenamed" then
  local buf = vim.fn.bufnr(p.oldPath)
  if buf < 0 or vim.fn.rename(p.oldPath, p.newPath) ~= 0 then return false end
  api.nvim_buf_call(buf, function() vim.cmd("file " .. vim.fn.fnameescape(p.newPath)) end)
  return true
elseif method == "workspace/foldersChanged" then
  local f = p.workspaceFolders
  if type(f) ~= "table" or #f ~= 1 then return false end
  vim.fn.mkdir(f[1], "p")
  vim.cmd("cd " .. vim.fn.fnameescape(f[1]))
  return true
elseif method == "workspace/trustChanged" then
  if type(p.isTrusted) ~= "boolean" then return false end
  require("gemini_companion").setup({ auto_start = false, trusted = p.isTrusted })
  return true
end
return false`

// edit makes the plugin send want by doing in the editor what a user
// does, when the replay knows how; it reports whether it did.
func (r *replayer) edit(where string, want map[string]any) bool {
	r.t.Helper()
	if isRequest(want) {
		return false
	}
	params, _ := want["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	raw, _ := json.Marshal(params)
	var done bool
	r.nv.LuaJSON(r.t, &done, `local method, p = ...; return (function(...)`+editLua+` end)(method, vim.json.decode(p))`, want["method"], string(raw))
	return done
}

// The policy the sidecar gives in initialize is what the plugin follows:
// its selection limit, its restart count and its texts, not built-in ones.
func TestPolicyComesFromTheSidecar(t *testing.T) {
	requireNvim(t)
	r := newReplayer(t)
	nv := r.nv
	file := writeFile(t, r.sb, "sel.txt", "1234567890abcdef\n")
	policy := map[string]any{
		"restart":  map[string]any{"delaysMs": []any{10.0}, "windowMs": 60000.0, "maxRestarts": 1.0},
		"limits":   map[string]any{"maxSelectionBytes": 8.0},
		"messages": map[string]any{"restarting": "link lost ({reason}), again", "gaveUp": "link lost {count} times ({reason}), done", "restarted": "link back"},
	}
	handshake := func() {
		r.await("initialize", map[string]any{"id": "<id>", "method": "initialize"}, 0)
		r.play("initialize result", map[string]any{"jsonrpc": "2.0", "id": "<id>", "result": map[string]any{
			"port": 1.0, "authToken": "t", "env": map[string]any{}, "discoveryFile": "", "protocolVersion": 2.0, "policy": policy,
		}})
	}
	handshake()

	nv.Cmd(t, "edit "+file)
	nv.Input(t, "V")
	r.await("a selection", map[string]any{"method": "<string>", "params": map[string]any{"path": file, "selectedText": "12345678"}}, 0)
	nv.Input(t, "<Esc>")

	r.crash("first crash") // waits for "link lost (exit code 3), again"
	handshake()
	r.crashes++
	r.l.conn.Close()
	msg := nv.WaitNote(t, "link lost 2 times (exit code 3), done", waitTimeout)
	if !strings.HasSuffix(msg, "link lost 2 times (exit code 3), done") {
		t.Errorf("the give-up message %q is not the sidecar's text", msg)
	}
	nv.WaitLua(t, "the plugin to give up", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline after giving up = %v", got)
	}
}

// fill gives the placeholders of a message to send values: the value last
// matched (or sent) under the same key, else <number> 1, <string> "x",
// <any> null.
func (r *replayer) fill(v any, key string) any {
	switch x := v.(type) {
	case string:
		def, ok := map[string]any{"<number>": 1.0, "<string>": "x", "<any>": nil, "<id>": 1.0}[x]
		if !ok {
			return x
		}
		if last, seen := r.last[key]; seen {
			return last
		}
		r.last[key] = def
		return def
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.fill(e, key)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.fill(e, k)
		}
		return out
	}
	return v
}

// userFirst handles a race a transcript records in order: the plugin
// answers the sidecar's diff/close at step i with "content": null (its view
// was already gone) although the replay still shows the view, because the
// user's next action reached the plugin first. The replay then performs
// that action before sending diff/close.
func (r *replayer) userFirst(steps []step, i int) {
	r.t.Helper()
	msg := decodeMsg(r.t, steps[i].Sidecar)
	if msg["method"] != "diff/close" {
		return
	}
	var reply map[string]any
	for j := i + 1; j < len(steps); j++ {
		switch s := steps[j]; {
		case s.Comment != "" || s.CLI != nil:
			continue
		case s.Plugin != nil && reply == nil:
			reply = decodeMsg(r.t, s.Plugin)
			res, _ := reply["result"].(map[string]any)
			if c, ok := res["content"]; !ok || c != nil || !isResponse(reply) {
				return
			}
			continue
		case s.User != nil && reply != nil:
			var open int
			r.nv.LuaJSON(r.t, &open, `return #require("gemini_companion.diff").paths()`)
			if open > 0 {
				r.t.Logf("step %d: the user's %s reaches the plugin before diff/close (the transcript's reply says the view was gone)", j+1, s.User.Action)
				r.user(fmt.Sprintf("step %d", j+1), s.User.Action, s.User.Content)
				r.done[j] = true
			}
		}
		return
	}
}
