package vim

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

// The transcript replay plays the sidecar to the plugin's own code. The
// plugin starts what it takes for gemini-ide-companion: this test binary,
// run again as a relay between its stdin/stdout and a socket of the test.
// The test sends the transcript's `sidecar` messages with Content-Length
// framing, checks the plugin's messages against its `plugin` lines, and
// performs `user` steps in the diff view (:w, :q, editing the proposal).
// Format and rules: companion/protocol/transcripts/README.md.

// relayEnv names the socket the relay connects to; it is set only in the
// environment of the Vim a replay starts.
const relayEnv = "GIC_VIM_REPLAY_SOCKET"

func TestMain(m *testing.M) {
	if addr := os.Getenv(relayEnv); addr != "" {
		os.Exit(relay(addr))
	}
	os.Exit(m.Run())
}

// relay is the stand-in sidecar: it sends the test its arguments, then
// copies bytes both ways. The test closing the socket is the sidecar
// dying (exit code 3).
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
	return 3
}

// step is one transcript line.
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

// transcripts lists the shared transcripts a plugin replays (names not
// starting with "sidecar-") and, until those are in, the plugin's own.
func transcripts(t *testing.T) []string {
	root := testkit.ModuleRoot(t)
	shared, _ := filepath.Glob(filepath.Join(root, "companion", "protocol", "transcripts", "*.jsonl"))
	var files []string
	for _, f := range shared {
		if !strings.HasPrefix(filepath.Base(f), "sidecar-") {
			files = append(files, f)
		}
	}
	own, _ := filepath.Glob(filepath.Join(root, "tests", "vim", "transcripts", "*.jsonl"))
	files = append(files, own...)
	if len(files) == 0 {
		t.Fatal("no transcripts found")
	}
	return files
}

// TestTranscriptReplay replays every transcript against the plugin in a
// headless Vim.
func TestTranscriptReplay(t *testing.T) {
	requireVim(t)
	for _, path := range transcripts(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
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
			newReplayer(t).run(steps)
		})
	}
}

// conn is one life of the stand-in sidecar.
type conn struct {
	c    net.Conn
	args []string
	msgs chan map[string]any
	errc chan error
	wmu  sync.Mutex
}

func (l *conn) read(r *bufio.Reader) {
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
			l.errc <- fmt.Errorf("reading a body: %w", err)
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

func (l *conn) send(msg map[string]any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err = fmt.Fprintf(l.c, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

type replayer struct {
	t       *testing.T
	sb      *testkit.Sandbox
	v       *Vim
	ln      net.Listener
	l       *conn
	vars    map[string]string
	last    map[string]any // value last matched by a placeholder, by key
	fromPl  []any          // ids of plugin requests not answered yet
	fromSc  []any          // ids of sidecar requests not answered yet
	nextID  int
	started bool
	envFile string
	held    []map[string]any // messages of the plugin no line matched yet
	diffed  string           // the file of the last diff/open sent
	done    map[int]bool     // user steps performed ahead of their line
}

func newReplayer(t *testing.T) *replayer {
	sb := testkit.NewSandbox(t)
	dir, err := os.MkdirTemp("", "gicvr")
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
	r := &replayer{t: t, sb: sb, ln: ln, nextID: 1000, vars: map[string]string{"workspace": sb.Workspace}, last: map[string]any{}, done: map[int]bool{}}
	for _, name := range []string{"file", "file2", "file3"} {
		r.vars[name] = filepath.Join(sb.Workspace, name+".txt")
	}
	writeFile(t, sb, "file.txt", "one\ntwo\nthree\n")
	// The CLI :GeminiCli opens writes its environment down.
	r.envFile = filepath.Join(sb.TmpDir, "cli-env.txt")
	script := "env > '" + r.envFile + ".tmp' && mv '" + r.envFile + ".tmp' '" + r.envFile + "'; exec cat"
	r.v = startVim(t, sb, Options{
		Env:    testkit.WithEnv(sb.Env(), "HOME="+sb.Home, relayEnv+"="+sock),
		Config: map[string]any{"sidecar": self, "cli": []string{"sh", "-c", script}},
	})
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
		r.t.Fatalf("the plugin did not start its sidecar within %v\n%s", waitTimeout, r.v.diagnostics())
	}
	if got.err != nil {
		r.t.Fatal(got.err)
	}
	br := bufio.NewReader(got.c)
	line, err := br.ReadString('\n')
	if err != nil {
		r.t.Fatalf("relay: %v", err)
	}
	l := &conn{c: got.c, msgs: make(chan map[string]any, 64), errc: make(chan error, 1)}
	if err := json.Unmarshal([]byte(line), &l.args); err != nil {
		r.t.Fatalf("relay arguments %q: %v", line, err)
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

// fill replaces placeholders in a message to send: the value last matched
// under the same key, else 1, "x" or null.
func (r *replayer) fill(key string, v any) any {
	switch x := v.(type) {
	case string:
		switch x {
		case "<number>", "<string>", "<any>":
			if val, ok := r.last[key]; ok {
				return val
			}
			return map[string]any{"<number>": 1.0, "<string>": "x", "<any>": nil}[x]
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.fill(key, e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.fill(k, e)
		}
		return out
	}
	return v
}

// matches says why got does not match want (transcript rules), or "";
// values matched by placeholders are remembered by key.
func (r *replayer) matches(key string, want, got any, path string) string {
	switch w := want.(type) {
	case string:
		ok := true
		switch w {
		case "<any>":
		case "<string>":
			_, ok = got.(string)
		case "<number>":
			_, ok = got.(float64)
		case "<id>":
			switch got.(type) {
			case float64, string:
			default:
				ok = false
			}
		default:
			if g, is := got.(string); is && g == w {
				return ""
			}
			return fmt.Sprintf("%s: want %q, got %#v", path, w, got)
		}
		if !ok {
			return fmt.Sprintf("%s: want %s, got %#v", path, w, got)
		}
		r.last[key] = got
		return ""
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
			if why := r.matches(k, wv, gv, path+"."+k); why != "" {
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
			if why := r.matches(key, w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); why != "" {
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

func (r *replayer) run(steps []step) {
	afterUser := false
	for i, s := range steps {
		where := fmt.Sprintf("step %d", i+1)
		switch {
		case s.Comment != "" || s.CLI != nil:
		case s.Plugin != nil:
			var want map[string]any
			if json.Unmarshal(s.Plugin, &want) != nil {
				continue // raw bytes: only in sidecar-* files
			}
			r.expect(where, r.subst(want).(map[string]any), afterUser)
		case s.Sidecar != nil:
			afterUser = false
			var msg map[string]any
			if err := json.Unmarshal(s.Sidecar, &msg); err != nil {
				r.t.Fatalf("%s: %v", where, err)
			}
			if j := userRacingClose(steps, i, msg); j >= 0 {
				// The user decides as the CLI closes the view: in this
				// editor that is the decision first, then the close.
				r.user(fmt.Sprintf("step %d", j+1), steps[j].User.Action, steps[j].User.Content)
				r.done[j] = true
				afterUser = true
			}
			r.play(where, r.subst(msg).(map[string]any))
		case s.User != nil:
			if !r.done[i] {
				r.user(where, s.User.Action, s.User.Content)
			}
			afterUser = true
		case s.Restart != nil:
			afterUser = false
			r.l.c.Close()
			r.l = nil
		}
	}
	r.finish()
}

// userRacingClose finds, for a diff/close at step i that the transcript
// answers with {"content": null} (the view already gone), the user step
// around that answer that made the view go; -1 when there is none. In Vim
// the user's decision and the close request are handled one after the
// other, so the replay performs that step before sending the close.
func userRacingClose(steps []step, i int, msg map[string]any) int {
	if msg["method"] != "diff/close" {
		return -1
	}
	user, gone := -1, false
	for j := i + 1; j < len(steps); j++ {
		s := steps[j]
		switch {
		case s.Sidecar != nil || s.Restart != nil:
			j = len(steps)
		case s.User != nil && user < 0:
			user = j
		case s.Plugin != nil:
			var reply struct {
				ID     any `json:"id"`
				Result *struct {
					Content *string `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(s.Plugin, &reply) == nil && reply.ID != nil && reply.Result != nil && reply.Result.Content == nil {
				gone = true
			}
		}
	}
	if gone {
		return user
	}
	return -1
}

// expect makes the plugin send want when an editor action does (opening
// files, moving, selecting, :cd, :GeminiCli, :GeminiStatus, :GeminiStop),
// then checks the plugin's next message against it.
func (r *replayer) expect(where string, want map[string]any, afterUser bool) {
	r.t.Helper()
	method, _ := want["method"].(string)
	switch {
	case method == "initialize":
		if !r.started {
			r.started = true
			r.v.Ex(r.t, "GeminiStart")
		}
		// The first start, or the plugin's own restart after a crash.
		if r.l == nil {
			r.accept()
		}
	case isResponse(want):
	case afterUser && (method == "diff/accepted" || method == "diff/rejected"):
	case method == "shutdown":
		r.v.Ex(r.t, "GeminiStop")
	case method == "status/get":
		r.v.Ex(r.t, "GeminiStatus")
	case method == "terminal/env":
		// :GeminiCli! starts a new CLI, asking for its environment.
		r.v.Ex(r.t, "GeminiCli!")
	default:
		params, _ := want["params"].(map[string]any)
		raw, _ := json.Marshal(params)
		if !r.v.Bool(r.t, fmt.Sprintf("GicUserAction(%s, json_decode(%s))", vimString(method), vimString(string(raw)))) {
			r.t.Fatalf("%s: the replay cannot make the editor send %s %s", where, method, raw)
		}
	}
	got := r.await(where, want)
	switch {
	case isRequest(got):
		r.fromPl = append(r.fromPl, got["id"])
	case isResponse(got):
		i := slices.IndexFunc(r.fromSc, func(id any) bool { return reflect.DeepEqual(id, got["id"]) })
		r.fromSc = slices.Delete(r.fromSc, i, i+1)
	}
}

// await returns the plugin's message that matches want: one held from
// before (the plugin may send in another order what the transcript lists
// one after another), or the next. Context notifications the plugin sends
// on its own as the editor changes are skipped; others are held.
func (r *replayer) await(where string, want map[string]any) map[string]any {
	r.t.Helper()
	for i, m := range r.held {
		if r.match(want, m) == "" {
			r.held = slices.Delete(r.held, i, i+1)
			return m
		}
	}
	for {
		got := r.next(where, want)
		if r.match(want, got) == "" {
			return got
		}
		if m, _ := got["method"].(string); !strings.HasPrefix(m, "context/") || isRequest(got) {
			r.held = append(r.held, got)
		}
	}
}

// next is the plugin's next message.
func (r *replayer) next(where string, want map[string]any) map[string]any {
	r.t.Helper()
	select {
	case m, ok := <-r.l.msgs:
		if !ok {
			r.t.Fatalf("%s: the link closed while waiting for %v\n%s", where, want, r.v.diagnostics())
		}
		return m
	case err := <-r.l.errc:
		r.t.Fatalf("%s: reading the plugin's messages: %v", where, err)
	case <-time.After(waitTimeout):
		held, _ := json.Marshal(r.held)
		r.t.Fatalf("%s: no message from the plugin within %v; want %v\nreceived and not matched: %s\n%s", where, waitTimeout, want, held, r.v.diagnostics())
	}
	return nil
}

// match is matches plus the id rules: a request's id is the plugin's own;
// a reply carries the id of the earliest unanswered sidecar request.
func (r *replayer) match(want, got map[string]any) string {
	w := make(map[string]any, len(want))
	for k, v := range want {
		w[k] = v
	}
	switch {
	case isResponse(want):
		if !isResponse(got) {
			return "want a reply"
		}
		if len(r.fromSc) == 0 || !reflect.DeepEqual(r.fromSc[0], got["id"]) {
			return fmt.Sprintf("reply id %v, want %v (the earliest open sidecar request)", got["id"], r.fromSc)
		}
		delete(w, "id")
	case isRequest(want):
		if !isRequest(got) {
			return "want a request"
		}
		w["id"] = "<id>"
	default:
		if _, has := got["id"]; has {
			return "want a notification"
		}
	}
	return r.matches("", w, got, "message")
}

// play sends a sidecar message, then checks what the user sees of it.
func (r *replayer) play(where string, msg map[string]any) {
	r.t.Helper()
	if r.l == nil {
		r.t.Fatalf("%s: no link to send on", where)
	}
	out := r.fill("", msg).(map[string]any)
	switch {
	case isResponse(msg):
		if len(r.fromPl) == 0 {
			r.t.Fatalf("%s: a reply, but the plugin has no open request", where)
		}
		out["id"] = r.fromPl[0]
		r.fromPl = r.fromPl[1:]
	case isRequest(msg):
		r.nextID++
		out["id"] = float64(r.nextID)
		r.fromSc = append(r.fromSc, out["id"])
	}
	if err := r.l.send(out); err != nil {
		r.t.Fatalf("%s: send: %v", where, err)
	}
	if res, ok := out["result"].(map[string]any); ok && res["protocolVersion"] != nil {
		// The initialize result: the plugin is up once it has read it, and
		// shows the status it carries.
		r.v.WaitRunning(r.t)
		if st, ok := res["status"].(map[string]any); ok {
			if text, _ := st["text"].(string); text != "" {
				r.v.WaitFor(r.t, where+": the status text of initialize", "gemini_companion#Statusline() ==# "+vimString(text), waitTimeout)
			}
		}
	}
	r.observe(where, out)
}

// observe checks what the user sees after the plugin got msg.
func (r *replayer) observe(where string, msg map[string]any) {
	r.t.Helper()
	method, _ := msg["method"].(string)
	params, _ := msg["params"].(map[string]any)
	switch method {
	case "log":
		if text, _ := params["message"].(string); text != "" {
			r.v.WaitNote(r.t, text, waitTimeout)
		}
	case "status":
		if text, _ := params["text"].(string); text != "" {
			r.v.WaitFor(r.t, where+": the status text", "gemini_companion#Statusline() ==# "+vimString(text), waitTimeout)
		}
	case "diff/open":
		path, _ := params["filePath"].(string)
		r.diffed = path
		r.v.WaitFor(r.t, where+": the diff view", "GicDiffTab("+vimString(path)+").found", waitTimeout)
		st := diffTab(r.t, r.v, path)
		newContent, _ := params["newContent"].(string)
		if got := strings.Join(st.Right, "\n") + "\n"; got != newContent {
			r.t.Errorf("%s: the proposal shows %q, want %q", where, got, newContent)
		}
		// A new file (originalContent null) shows an empty left side.
		wantLeft := "\n"
		if original, ok := params["originalContent"].(string); ok && original != "" {
			wantLeft = original
		}
		if got := strings.Join(st.Left, "\n") + "\n"; got != wantLeft {
			r.t.Errorf("%s: the left side shows %q, want %q", where, got, wantLeft)
		}
		if !st.Diff[0] || !st.Diff[1] || st.LeftModifiable {
			r.t.Errorf("%s: diff view %+v: want both sides in diff mode, the left read-only", where, st)
		}
	case "diff/close":
		path, _ := params["filePath"].(string)
		waitNoDiffTab(r.t, r.v, path)
	case "diff/state":
		state, _ := params["state"].(string)
		content, hasContent := params["content"].(string)
		if (state == "expired" || state == "undelivered") && hasContent {
			// The accepted text opens for the user to keep.
			r.v.WaitFor(r.t, where+": the unwritten text in a buffer",
				fmt.Sprintf(`len(filter(getbufinfo(), {_, b -> get(b.variables, 'gemini_unwritten', '') ==# %s && join(getbufline(b.bufnr, 1, '$'), "\n") . "\n" ==# %s})) == 1`,
					vimString(params["filePath"].(string)), vimString(content)), waitTimeout)
		}
		if text, _ := params["message"].(string); text != "" {
			r.v.WaitNote(r.t, text, waitTimeout)
		}
		path, _ := params["filePath"].(string)
		switch state {
		case "changedOnDisk", "deletedOnDisk", "unchangedOnDisk":
			// The view labels the state; its left side is the file now.
			disk, _ := params["diskContent"].(string)
			r.v.WaitFor(r.t, where+": the view's "+state+" state",
				fmt.Sprintf(`get(GicDiffTab(%s), 'state', {})->get('disk', '') ==# %s && join(GicDiffTab(%s).left, "\n") . "\n" ==# %s`,
					vimString(path), vimString(state), vimString(path), vimString(disk+map[bool]string{true: "\n"}[disk == ""])), waitTimeout)
		case "queued":
			n, _ := params["queued"].(float64)
			r.v.WaitFor(r.t, where+": the view's queue count",
				fmt.Sprintf(`get(GicDiffTab(%s), 'state', {})->get('queued', -1) == %d`, vimString(path), int(n)), waitTimeout)
		}
	}
	if res, ok := msg["result"].(map[string]any); ok && msg["id"] != nil {
		if _, isEnv := res["env"]; isEnv && len(res) <= 2 {
			r.checkTerminalEnv(where, res["env"].(map[string]any))
		}
	}
}

// checkTerminalEnv waits for the CLI started by :GeminiCli! to write its
// environment, and checks it has what terminal/env answered.
func (r *replayer) checkTerminalEnv(where string, env map[string]any) {
	r.t.Helper()
	var data []byte
	ok := testkit.Poll(waitTimeout, func() bool {
		time.Sleep(10 * time.Millisecond)
		var err error
		data, err = os.ReadFile(r.envFile)
		return err == nil
	})
	if !ok {
		r.t.Fatalf("%s: the CLI's terminal did not start\n%s", where, r.v.diagnostics())
	}
	_ = os.Remove(r.envFile)
	lines := strings.Split(string(data), "\n")
	for k, v := range env {
		if s, ok := v.(string); ok && !slices.Contains(lines, k+"="+s) {
			r.t.Errorf("%s: the CLI's terminal has no %s=%s; its environment:\n%s", where, k, s, data)
		}
	}
}

// user performs a user step in the diff view of the last proposal through
// the plugin's UI: :w, :q, closing its tab, editing the proposal.
func (r *replayer) user(where, action, content string) {
	r.t.Helper()
	path := r.diffed
	if !r.v.Bool(r.t, fmt.Sprintf("GicUserDiff(%s, %s, %s)", vimString(path), vimString(action), vimString(content))) {
		r.t.Fatalf("%s: no diff view of %s to %s\n%s", where, path, action, r.v.diagnostics())
	}
}

// finish checks nothing is left hanging, and that Vim quits cleanly.
func (r *replayer) finish() {
	r.t.Helper()
	if len(r.fromSc) > 0 {
		r.t.Errorf("the plugin never answered sidecar requests %v", r.fromSc)
	}
	if len(r.held) > 0 {
		held, _ := json.Marshal(r.held)
		r.t.Errorf("the plugin sent messages no transcript line expects: %s", held)
	}
}
