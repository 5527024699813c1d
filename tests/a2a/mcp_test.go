package a2a_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// withNotesServer builds the test's MCP server (appendmcp: one tool,
// append_line, appending to a file) and names it "notes" in the sandbox's
// Gemini settings. It returns the file the tool appends to. Call it before
// startAgent.
func (sb *sandbox) withNotesServer(t *testing.T) string {
	t.Helper()
	notes := filepath.Join(sb.Workspace, "notes.txt")
	testkit.NotesMCPServer(t, sb.Home, notes)
	return notes
}

// TestSuperviseMCPTool: a task whose model calls an MCP server's tool waits
// on a decision naming the server and the tool with its arguments; denied,
// the tool does not run; approved, it runs; approved_always, it runs and a
// later task's call of it runs without a decision. A web fetch (the
// server's "info" confirmation) shows its URL and, denied, never fetches.
func TestSuperviseMCPTool(t *testing.T) {
	sb := newSandbox(t)
	notes := sb.withNotesServer(t)
	srv := sb.startAgent(t)
	b := startBridge(t, nil, "--agent", srv.URL, "--timeout", "90s")

	decision := func(t *testing.T, sid, text string) string {
		t.Helper()
		st, _ := b.waitStatus(t, sid, "waiting")
		d, _ := st["decision"].(map[string]any)
		args, _ := d["args"].(map[string]any)
		if d["type"] != "checkpoint" || d["kind"] != "mcp" || d["server"] != "notes" || d["server_tool"] != "append_line" ||
			d["tool"] != "append_line" || args["text"] != text {
			t.Fatalf("decision = %v; want the MCP tool append_line of server notes with text %q", d, text)
		}
		desc, _ := d["description"].(string)
		if !strings.Contains(desc, "append_line") || !strings.Contains(desc, "notes") || !strings.Contains(desc, text) {
			t.Fatalf("description %q does not name the tool, the server and the argument", desc)
		}
		return desc
	}
	notesText := func(t *testing.T) string {
		t.Helper()
		got, _ := testkit.ReadFile(t, notes)
		return got
	}

	t.Run("Denied", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "no"}))
		sid := b.start(t, "note no")
		decision(t, sid, "no")
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "denied"})
		b.waitStatus(t, sid, "complete")
		if _, exists := testkit.ReadFile(t, notes); exists {
			t.Fatalf("the denied MCP tool ran: %q", notesText(t))
		}
	})

	t.Run("Approved", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "yes"}))
		sb.Fake.Reply(fakegemini.Text("Noted."))
		sid := b.start(t, "note yes")
		decision(t, sid, "yes")
		if notesText(t) != "" {
			t.Fatal("the MCP tool ran before approval")
		}
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
		st, _ := b.waitStatus(t, sid, "complete")
		if got := notesText(t); got != "yes\n" {
			t.Fatalf("notes = %q after approval", got)
		}
		if !strings.Contains(st["result"].(string), "Noted.") {
			t.Fatalf("result = %v", st["result"])
		}
	})

	t.Run("WebFetchDenied", func(t *testing.T) {
		page := testkit.NewWebPage(t, "page")
		url := page.URL + "/p"
		sb.Fake.Reply(fakegemini.Call("web_fetch", map[string]any{"prompt": "summarize " + url}))
		sid := b.start(t, "read the page")
		st, _ := b.waitStatus(t, sid, "waiting")
		d, _ := st["decision"].(map[string]any)
		urls, _ := d["urls"].([]any)
		if d["type"] != "checkpoint" || d["kind"] != "info" || d["tool"] != "web_fetch" || len(urls) != 1 || urls[0] != url ||
			!strings.Contains(d["description"].(string), "Confirm Web Fetch") {
			t.Fatalf("decision = %v; want a web fetch of %s", d, url)
		}
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "denied"})
		b.waitStatus(t, sid, "complete")
		if n := page.Hits(); n != 0 {
			t.Fatalf("the denied fetch reached the page %d times", n)
		}
	})

	// "approved_always" on a web fetch is approved once: on the server it
	// would switch the task to auto-edit, and the supervisor would no
	// longer see the task's file edits as decisions.
	t.Run("WebFetchAlwaysKeepsEditDecisions", func(t *testing.T) {
		page := testkit.NewWebPage(t, "page")
		sb.Fake.Reply(fakegemini.Call("web_fetch", map[string]any{"prompt": "summarize " + page.URL + "/q"}))
		sb.Fake.Reply(fakegemini.Text("Fetched."))
		sid := b.start(t, "read the page")
		b.waitStatus(t, sid, "waiting")
		ack := b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved_always"})
		if note, _ := ack["note"].(string); !strings.Contains(note, "once") {
			t.Fatalf("respond = %v; want a note that the fetch was approved once", ack)
		}
		b.waitStatus(t, sid, "complete")
		if page.Hits() == 0 {
			t.Fatal("the approved fetch never reached the page")
		}
		path := filepath.Join(sb.Workspace, "after-fetch.txt")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "x\n"}))
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "now write the file"})
		st, _ := b.waitStatus(t, sid, "waiting")
		if d, _ := st["decision"].(map[string]any); d["type"] != "file_edit" || d["path"] != path {
			t.Fatalf("decision = %v; want the edit asked", d)
		}
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "denied"})
		b.waitStatus(t, sid, "complete")
		if _, exists := testkit.ReadFile(t, path); exists {
			t.Fatal("the denied edit was written")
		}
	})

	// Last: the server remembers "always" for the whole process.
	t.Run("ApprovedAlways", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "always"}))
		sb.Fake.Reply(fakegemini.Text("Noted always."))
		sid := b.start(t, "note always")
		decision(t, sid, "always")
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved_always"})
		b.waitStatus(t, sid, "complete")
		sb.Fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "unasked"}))
		sb.Fake.Reply(fakegemini.Text("Noted unasked."))
		sid = b.start(t, "note unasked")
		st, progress := b.waitStatus(t, sid, "complete")
		for _, p := range progress {
			if strings.HasPrefix(p, "decision") {
				t.Fatalf("the tool approved always asked again: %q", progress)
			}
		}
		if got := notesText(t); got != "yes\nalways\nunasked\n" || !strings.Contains(st["result"].(string), "Noted unasked.") {
			t.Fatalf("notes = %q, result %v; want the second call to have run unasked", got, st["result"])
		}
	})
}
