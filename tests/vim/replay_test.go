package vim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/transcript"
)

// The transcript replay plays the sidecar to the plugin's own code through
// transcript's relay: the plugin starts this test binary as its sidecar,
// the test sends the transcript's `sidecar` messages, checks the plugin's
// messages against its `plugin` lines, and performs `user` steps in the
// diff view (:w, :q, editing the proposal).
// Format and rules: link/protocol/transcripts/README.md.

// relayEnv names the socket the relay connects to; it is set only in the
// environment of the Vim a replay starts.
const relayEnv = "GIC_VIM_REPLAY_SOCKET"

func TestMain(m *testing.M) {
	transcript.RelayMain(relayEnv)
	os.Exit(m.Run())
}

// TestTranscriptReplay replays every transcript against the plugin in a
// headless Vim.
func TestTranscriptReplay(t *testing.T) {
	requireVim(t)
	transcript.RunPlugin(t, "tests/vim/transcripts", func(t *testing.T, steps []transcript.Step) {
		newReplayer(t).run(steps)
	})
}

type replayer struct {
	t       *testing.T
	sb      *testkit.Sandbox
	v       *Vim
	relays  *transcript.Relays
	l       *transcript.Link
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
	st := transcript.NewStandIn(t, "gicvr")
	sb := st.SB
	r := &replayer{t: t, sb: sb, relays: st.Relays, nextID: 1000, vars: st.Vars, last: map[string]any{}, done: map[int]bool{}}
	// The CLI :GeminiCli opens writes its environment down.
	r.envFile = filepath.Join(sb.TmpDir, "cli-env.txt")
	script := "env > '" + r.envFile + ".tmp' && mv '" + r.envFile + ".tmp' '" + r.envFile + "'; exec cat"
	r.v = startVim(t, sb, Options{
		Env:    testkit.WithEnv(sb.Env(), "HOME="+sb.Home, relayEnv+"="+st.Relays.Sock),
		Config: map[string]any{"sidecar": st.Sidecar, "cli": []string{"sh", "-c", script}},
	})
	return r
}

// accept waits for the plugin's (next) sidecar process to connect.
func (r *replayer) accept() {
	r.t.Helper()
	r.l = r.relays.Accept(r.t, waitTimeout, r.v.diagnostics)
	r.fromPl, r.fromSc = nil, nil
}

// subst replaces ${workspace}, ${file}, ... in every string of v.
func (r *replayer) subst(v any) any { return transcript.SubstituteValue(v, r.vars) }

func isRequest(m map[string]any) bool  { return transcript.IsRequest(m) }
func isResponse(m map[string]any) bool { return transcript.IsResponse(m) }

func (r *replayer) run(steps []transcript.Step) {
	afterUser := false
	for i, s := range steps {
		where := fmt.Sprintf("step %d", i+1)
		switch s.Actor {
		case "plugin":
			want, err := s.Object()
			if err != nil {
				continue // raw bytes: only in sidecar-* files
			}
			r.expect(where, r.subst(want).(map[string]any), afterUser)
		case "sidecar":
			afterUser = false
			msg, err := s.Object()
			if err != nil {
				r.t.Fatalf("%s: %v", where, err)
			}
			if j := userRacingClose(steps, i, msg); j >= 0 {
				// The user decides as the CLI closes the view: in this
				// editor that is the decision first, then the close.
				u := steps[j].User()
				r.user(fmt.Sprintf("step %d", j+1), u.Action, u.Content)
				r.done[j] = true
				afterUser = true
			}
			r.play(where, r.subst(msg).(map[string]any))
		case "user":
			if !r.done[i] {
				u := s.User()
				r.user(where, u.Action, u.Content)
			}
			afterUser = true
		case "restart":
			afterUser = false
			r.l.Close()
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
func userRacingClose(steps []transcript.Step, i int, msg map[string]any) int {
	if msg["method"] != "diff/close" {
		return -1
	}
	user, gone := -1, false
	for j := i + 1; j < len(steps); j++ {
		s := steps[j]
		switch {
		case s.Actor == "sidecar" || s.Actor == "restart":
			j = len(steps)
		case s.Actor == "user" && user < 0:
			user = j
		case s.Actor == "plugin":
			var reply struct {
				ID     any `json:"id"`
				Result *struct {
					Content *string `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(s.Body, &reply) == nil && reply.ID != nil && reply.Result != nil && reply.Result.Content == nil {
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
		// What :GeminiStatus asks (the command itself waits for the
		// answer, which this replay sends only after this call).
		r.v.Ex(r.t, "call gemini_companion#status#Lines({_ -> 0})")
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
		if why, caps := r.match(want, m); why == "" {
			transcript.Remember(r.last, caps)
			r.held = slices.Delete(r.held, i, i+1)
			return m
		}
	}
	for {
		got := r.next(where, want)
		if why, caps := r.match(want, got); why == "" {
			transcript.Remember(r.last, caps)
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
	m, err := r.l.Next(waitTimeout)
	switch {
	case errors.Is(err, transcript.ErrLinkClosed):
		r.t.Fatalf("%s: the link closed while waiting for %v\n%s", where, want, r.v.diagnostics())
	case errors.Is(err, transcript.ErrNoMessage):
		held, _ := json.Marshal(r.held)
		r.t.Fatalf("%s: %v; want %v\nreceived and not matched: %s\n%s", where, err, want, held, r.v.diagnostics())
	case err != nil:
		r.t.Fatalf("%s: %v", where, err)
	}
	return m
}

// match is matches plus the id rules: a request's id is the plugin's own;
// a reply carries the id of the earliest unanswered sidecar request.
func (r *replayer) match(want, got map[string]any) (string, []transcript.Capture) {
	return transcript.MatchMessage(want, got, func(id any) string {
		if len(r.fromSc) == 0 || !reflect.DeepEqual(r.fromSc[0], id) {
			return fmt.Sprintf("reply id %v, want %v (the earliest open sidecar request)", id, r.fromSc)
		}
		return ""
	})
}

// play sends a sidecar message, then checks what the user sees of it.
func (r *replayer) play(where string, msg map[string]any) {
	r.t.Helper()
	if r.l == nil {
		r.t.Fatalf("%s: no link to send on", where)
	}
	out := transcript.Concretize(msg, r.last).(map[string]any)
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
	if err := r.l.Send(out); err != nil {
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
