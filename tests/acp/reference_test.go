package acp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// script is the reference scenario: an edit approved (the client offers
// fs), then a shell command rejected. It returns, per prompt, what the
// client saw as a sequence of tokens: thought, text (a run of chunks),
// tool_call:STATUS, tool_call_update:STATUS, read, write,
// permission:KIND[option kinds], end:STOPREASON; and the permission
// requests' diffs.
func script(t *testing.T, sb *sandbox, agentCmd ...string) (turns [][]string, diffs []string) {
	file := filepath.Join(sb.Workspace, "notes.txt")
	if err := osWrite(file, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	sb.Fake.Reply(fakegemini.Thought("**Plan** add a line"), fakegemini.Text("I'll edit."), fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "one\ntwo\nthree\n"}))
	sb.Fake.Reply(fakegemini.Text("Edited."))
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch denied.txt"}))
	sb.Fake.Reply(fakegemini.Text("Denied, fine."))
	c := startClient(t, sb.env(), agentCmd...)
	c.initialize(true)
	sid := c.newSession(sb.Workspace)
	for _, p := range []struct{ text, answer string }{{"add three", "kind:allow_once"}, {"run it", "kind:reject_once"}} {
		c.ok(map[string]any{"op": "permission", "answer": p.answer}, nil)
		from := len(c.events())
		tag := c.prompt(sid, p.text)
		end, _ := c.wait(from, 3*60e9, "the end of "+p.text, func(e event) bool { return e.Ev == "result" && e.Tag == tag })
		var seq []string
		add := func(tok string) {
			if tok == "text" && len(seq) > 0 && seq[len(seq)-1] == "text" {
				return
			}
			seq = append(seq, tok)
		}
		for _, e := range c.events()[from:] {
			switch e.Ev {
			case "update":
				switch u := e.Update; u.SessionUpdate {
				case "agent_thought_chunk":
					add("thought")
				case "agent_message_chunk":
					add("text")
				case "tool_call", "tool_call_update":
					add(u.SessionUpdate + ":" + u.Status)
				}
			case "read", "write":
				add(e.Ev)
			case "permission":
				var pp permissionParams
				_ = json.Unmarshal(e.Params, &pp)
				var ks []string
				for _, o := range pp.Options {
					ks = append(ks, o.Kind)
				}
				sort.Strings(ks)
				add(fmt.Sprintf("permission:%s%v", pp.ToolCall.Kind, ks))
				var d []diff
				_ = json.Unmarshal(pp.ToolCall.Content, &d)
				for _, x := range d {
					if x.Type == "diff" && x.OldText != nil {
						diffs = append(diffs, fmt.Sprintf("%s %q -> %q", filepath.Base(x.Path), *x.OldText, x.NewText))
					}
				}
			}
		}
		if end.Error != nil {
			add("error")
		} else {
			var r struct {
				StopReason string `json:"stopReason"`
			}
			_ = json.Unmarshal(end.Result, &r)
			add("end:" + r.StopReason)
		}
		turns = append(turns, seq)
	}
	if got, _ := testkit.ReadFile(t, file); got != "one\ntwo\nthree\n" {
		t.Errorf("%s: file %q after the approved edit", agentCmd[0], got)
	}
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "denied.txt")); exists {
		t.Errorf("%s: the rejected command ran", agentCmd[0])
	}
	return turns, diffs
}

// difference is one documented way gemini-a2a-acp's sequence differs from
// Gemini CLI's own ACP agent's; docs/acp.md lists each by its id, with the
// reason.
type difference struct {
	id   string
	ours func(turn int, seq []string) []string
	ref  func(turn int, seq []string) []string
}

func without(seq []string, drop func(i int, tok string) bool) []string {
	var out []string
	for i, tok := range seq {
		if !drop(i, tok) {
			out = append(out, tok)
		}
	}
	return out
}

var differences = []difference{
	{id: "announce", // tool_call (and the diff as tool_call_update) before the permission request
		ours: func(_ int, seq []string) []string {
			return without(seq, func(_ int, tok string) bool {
				return tok == "tool_call:pending" || tok == "tool_call_update:pending"
			})
		}},
	{id: "in-progress", // tool_call_update in_progress once an approved call runs
		ours: func(_ int, seq []string) []string {
			return without(seq, func(_ int, tok string) bool { return tok == "tool_call_update:in_progress" })
		}},
	{id: "read-once", // Gemini CLI reads the file again before it writes
		ref: func(_ int, seq []string) []string {
			return without(seq, func(i int, tok string) bool { return tok == "read" && i+1 < len(seq) && seq[i+1] == "write" })
		}},
	{id: "rejected-call", // a rejected call ends failed; the A2A server ends the turn without the model
		ours: func(_ int, seq []string) []string {
			return without(seq, func(_ int, tok string) bool { return tok == "tool_call_update:failed" })
		},
		ref: func(turn int, seq []string) []string {
			if turn != 1 {
				return seq
			}
			return without(seq, func(i int, tok string) bool {
				return tok == "text" && i > 0 && strings.HasPrefix(seq[i-1], "permission:")
			})
		}},
}

// The same scripted client, run against Gemini CLI's own ACP agent (gemini
// --acp, 0.61.0) and against gemini-a2a-acp with the same fake model,
// sees the same permission requests (kind, options, diff) and the same
// sequence of update kinds once the differences docs/acp.md lists are
// taken out; each listed difference is real (taking it out changes one of
// the sequences) and named in docs/acp.md.
func TestSameAsGeminiCLIsOwnACPAgent(t *testing.T) {
	t.Parallel()
	gemini := filepath.Join(testkit.ModuleRoot(t), "tests", "node", "node_modules", ".bin", "gemini")
	if _, err := os.Stat(gemini); err != nil {
		need(t, "%s (npm ci in tests/node)", gemini)
	}
	var ours, ref [][]string
	var oursDiffs, refDiffs []string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sb := newSandbox(t)
		ref, refDiffs = script(t, sb, "node", gemini, "--acp")
	}()
	go func() {
		defer wg.Done()
		sb := newSandbox(t)
		ours, oursDiffs = script(t, sb, "gemini-a2a-acp", "--log-file", filepath.Join(sb.Home, "acp.log"))
	}()
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("gemini --acp:   %q", ref)
	t.Logf("gemini-a2a-acp: %q", ours)
	if !reflect.DeepEqual(oursDiffs, refDiffs) {
		t.Fatalf("permission diffs differ: ours %q, Gemini CLI's %q", oursDiffs, refDiffs)
	}
	doc, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "docs", "acp.md"))
	if err != nil {
		t.Fatal(err)
	}
	apply := func(turns [][]string, f func(int, []string) []string) ([][]string, bool) {
		changed := false
		out := make([][]string, len(turns))
		for i, seq := range turns {
			out[i] = seq
			if f != nil {
				out[i] = f(i, seq)
				changed = changed || !reflect.DeepEqual(out[i], seq)
			}
		}
		return out, changed
	}
	for _, d := range differences {
		if !strings.Contains(string(doc), "`"+d.id+"`") {
			t.Errorf("docs/acp.md does not list the difference `%s`", d.id)
		}
		var c1, c2 bool
		ours, c1 = apply(ours, d.ours)
		ref, c2 = apply(ref, d.ref)
		if !c1 && !c2 {
			t.Errorf("difference %q changes nothing: it is no longer a difference", d.id)
		}
	}
	if !reflect.DeepEqual(ours, ref) {
		t.Fatalf("the sequences differ beyond the documented differences:\nours %q\nref  %q", ours, ref)
	}
}
