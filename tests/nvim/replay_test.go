package nvim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/transcript"
)

// The transcript replay plays the sidecar to the plugin's own code through
// transcript's relay (the plugin starts this test binary as its sidecar),
// checks the plugin's messages against the `plugin` lines, and performs the
// `user` steps through the plugin's diff UI (:w accepts, ...). The format is
// docs/editor-link.md's (link/protocol/transcripts).

// relayEnv names the socket a relay connects to; set only in the
// environment of the Neovim a replay starts.
const relayEnv = "GIC_NVIM_REPLAY_SOCKET"

func TestMain(m *testing.M) {
	transcript.RelayMain(relayEnv)
	slowLSMain()
	os.Exit(m.Run())
}

// TestTranscriptReplay replays every transcript against the plugin in a
// headless Neovim.
func TestTranscriptReplay(t *testing.T) {
	requireNvim(t)
	transcript.RunPlugin(t, "tests/nvim/testdata/transcripts", func(t *testing.T, steps []transcript.Step) {
		newReplayer(t).run(steps)
	})
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
	relays  *transcript.Relays
	l       *transcript.Link
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
	st := transcript.NewStandIn(t, "gicrp")
	sb := st.SB
	r := &replayer{t: t, sb: sb, relays: st.Relays, nextID: 1000, vars: st.Vars, last: map[string]any{}, done: map[int]bool{}}
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"), relayEnv+"="+st.Relays.Sock)
	// The CLI :GeminiCli starts writes its environment down.
	r.envFile = filepath.Join(sb.TmpDir, "cli-env.txt")
	script := "{ echo; env; echo END; } > '" + r.envFile + "'; exec cat"
	r.nv = startNvim(t, sb, Options{NoBinary: true, Env: env, Setup: map[string]any{
		"sidecar":  map[string]any{"cmd": st.Sidecar, "build": false},
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}, "position": "bottom", "start_insert": false},
	}})
	r.accept()
	return r
}

// accept waits for the plugin's (next) sidecar process to connect.
func (r *replayer) accept() {
	r.t.Helper()
	r.l = r.relays.Accept(r.t, waitTimeout, r.nv.diagnostics)
	r.fromPl, r.fromSc = nil, nil
}

// subst replaces ${workspace}, ${file}, ... in every string of v.
func (r *replayer) subst(v any) any { return transcript.SubstituteValue(v, r.vars) }

// object decodes a plugin or sidecar step's message.
func (r *replayer) object(s transcript.Step) map[string]any {
	r.t.Helper()
	m, err := s.Object()
	if err != nil {
		r.t.Fatalf("transcript: %v", err)
	}
	return m
}

// matches reports why got does not match want (transcript rules), or "".
func matches(want, got any) string {
	_, _, why := transcript.Match(want, got, transcript.IsID)
	return why
}

func isRequest(m map[string]any) bool  { return transcript.IsRequest(m) }
func isResponse(m map[string]any) bool { return transcript.IsResponse(m) }

// next returns the plugin's next message.
func (r *replayer) next(what string) map[string]any {
	r.t.Helper()
	m, err := r.l.Next(waitTimeout)
	switch {
	case errors.Is(err, transcript.ErrLinkClosed):
		r.t.Fatalf("the link closed while waiting for %s\n%s", what, r.nv.diagnostics())
	case errors.Is(err, transcript.ErrNoMessage):
		r.t.Fatalf("%v; want %s\n%s", err, what, r.nv.diagnostics())
	case err != nil:
		r.t.Fatal(err)
	}
	return m
}

func (r *replayer) run(steps []transcript.Step) {
	afterUser := false
	for i, s := range steps {
		where := fmt.Sprintf("step %d", i+1)
		if r.done[i] {
			afterUser = true
			continue
		}
		if s.Actor == "sidecar" {
			r.userFirst(steps, i)
		}
		switch s.Actor {
		case "plugin":
			r.expect(where, r.subst(r.object(s)).(map[string]any), afterUser)
		case "sidecar":
			afterUser = false
			r.play(where, r.subst(r.object(s)).(map[string]any))
		case "user":
			afterUser = true
			u := s.User()
			r.user(where, u.Action, u.Content)
		case "restart":
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
		if why, caps := r.match(want, m); !isRequest(want) && !isResponse(want) && why == "" {
			transcript.Remember(r.last, caps)
			got = m
			r.stash = slices.Delete(r.stash, i, i+1)
			break
		}
	}
	for got == nil {
		m := r.next(fmt.Sprintf("%s: %v (not yet matched: %v)", where, want, r.stash))
		why, caps := r.match(want, m)
		if why == "" {
			transcript.Remember(r.last, caps)
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
// carries the id of the sidecar request it answers. It also returns what
// the placeholders matched.
func (r *replayer) match(want, got map[string]any) (string, []transcript.Capture) {
	return transcript.MatchMessage(want, got, func(id any) string {
		// "<id>": the earliest request of the sidecar not answered yet.
		for i, p := range r.fromSc {
			if want["id"] == "<id>" && i == 0 || reflect.DeepEqual(p.tid, want["id"]) {
				if reflect.DeepEqual(p.rid, id) {
					return ""
				}
				break
			}
		}
		return fmt.Sprintf("id %v does not answer the request the transcript answers (open: %v)", id, r.fromSc)
	})
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
	msg = transcript.Concretize(msg, r.last).(map[string]any)
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
	if err := r.l.Send(msg); err != nil {
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
		r.l.Close()
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
		if !testkit.Poll(waitTimeout, func() bool {
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
		} else if why := matches(msg["result"], got["result"]); why != "" && !(msg["result"] == nil && got["result"] == nil) {
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
	r.l.Close()
	r.nv.WaitNote(r.t, r.message("restarting", map[string]string{"reason": "exit code " + strconv.Itoa(transcript.RelayLost)}), waitTimeout)
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
			_ = r.l.Send(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": nil})
			break
		}
		if isRequest(m) {
			raw, _ := json.Marshal(m)
			r.t.Errorf("after the transcript the plugin sent %s", raw)
		}
	}
	r.l.Close()
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
	file := r.sb.WriteFile(t, "sel.txt", "1234567890abcdef\n")
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
	r.l.Close()
	msg := nv.WaitNote(t, "link lost 2 times (exit code 3), done", waitTimeout)
	if !strings.HasSuffix(msg, "link lost 2 times (exit code 3), done") {
		t.Errorf("the give-up message %q is not the sidecar's text", msg)
	}
	nv.WaitLua(t, "the plugin to give up", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline after giving up = %v", got)
	}
}

// userFirst handles a race a transcript records in order: the plugin
// answers the sidecar's diff/close at step i with "content": null (its view
// was already gone) although the replay still shows the view, because the
// user's next action reached the plugin first. The replay then performs
// that action before sending diff/close.
func (r *replayer) userFirst(steps []transcript.Step, i int) {
	r.t.Helper()
	msg := r.object(steps[i])
	if msg["method"] != "diff/close" {
		return
	}
	var reply map[string]any
	for j := i + 1; j < len(steps); j++ {
		switch s := steps[j]; {
		case s.Actor == "comment" || s.Actor == "cli":
			continue
		case s.Actor == "plugin" && reply == nil:
			reply = r.object(s)
			res, _ := reply["result"].(map[string]any)
			if c, ok := res["content"]; !ok || c != nil || !isResponse(reply) {
				return
			}
			continue
		case s.Actor == "user" && reply != nil:
			var open int
			r.nv.LuaJSON(r.t, &open, `return #require("gemini_companion.diff").paths()`)
			if open > 0 {
				u := s.User()
				r.t.Logf("step %d: the user's %s reaches the plugin before diff/close (the transcript's reply says the view was gone)", j+1, u.Action)
				r.user(fmt.Sprintf("step %d", j+1), u.Action, u.Content)
				r.done[j] = true
			}
		}
		return
	}
}
