package agentpanel

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// confirmation is a tool event's confirmation request as the panel gets it,
// with the details of MCP and generic confirmations.
type confirmation struct {
	ToolCallID string `json:"toolCallId"`
	Status     string `json:"status"`
	ToolName   string `json:"toolName"`
	Request    *struct {
		Options []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"options"`
		McpDetails *struct {
			ServerName      string `json:"serverName"`
			ToolName        string `json:"toolName"`
			ToolDisplayName string `json:"toolDisplayName"`
		} `json:"mcpDetails"`
		GenericDetails *struct {
			Description string   `json:"description"`
			Urls        []string `json:"urls"`
		} `json:"genericDetails"`
	} `json:"confirmationRequest"`
}

func (c confirmation) optionIDs() string {
	var ids []string
	for _, o := range c.Request.Options {
		ids = append(ids, o.ID)
	}
	return strings.Join(ids, ",")
}

// waitConfirmation waits for a tool event from index from that asks the
// user, and returns its confirmation.
func (lp *linkPanel) waitConfirmation(t *testing.T, from int) confirmation {
	t.Helper()
	n, _ := lp.ed.WaitFrom(t, from, "agent/event", turnTimeout, func(raw json.RawMessage) bool {
		e := parseEvent(raw)
		return e.Type == "tool" && e.Tool != nil && e.Tool.ConfirmationRequest != nil
	})
	var ev struct {
		Tool confirmation `json:"tool"`
	}
	if err := json.Unmarshal(n.Params, &ev); err != nil {
		t.Fatal(err)
	}
	return ev.Tool
}

// asked counts the tool events from index from that asked the user.
func (lp *linkPanel) asked(from int) int {
	n := 0
	for i, note := range lp.ed.All("") {
		if i < from || note.Method != "agent/event" {
			continue
		}
		if e := parseEvent(note.Params); e.Type == "tool" && e.Tool != nil && e.Tool.ConfirmationRequest != nil {
			n++
		}
	}
	return n
}

// withNotesServer builds the test's MCP server (tests/a2a/appendmcp: one
// tool, append_line, appending to a file) and names it "notes" in the
// sandbox's Gemini settings, as a user would. It returns the file the tool
// appends to.
func withNotesServer(t *testing.T, w *world) string {
	t.Helper()
	notes := w.path("notes.txt")
	testkit.NotesMCPServer(t, w.sb.Home, notes)
	return notes
}

// TestLinkMCPAndInfo runs the server's MCP and "info" confirmations through
// the panel against the real A2A server (one server for both, to save a
// start). An MCP server's tool: the confirmation names the MCP server and
// the tool and offers the server's four outcomes; denied, the tool does not
// run; "allow this tool always", it runs, and the next call of it, in the
// next turn, runs without asking. Then a web fetch (webFetch).
func TestLinkMCPAndInfo(t *testing.T) {
	w := newWorld(t)
	notes := withNotesServer(t, w)
	lp := startLinkPanel(t, w)

	prompt := func(t *testing.T, text string) int {
		t.Helper()
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
		return from
	}

	t.Run("MCPDenied", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "never"}))
		from := prompt(t, "note never")
		c := lp.waitConfirmation(t, from)
		md := c.Request.McpDetails
		if md == nil || md.ServerName != "notes" || md.ToolName != "append_line" || !strings.Contains(md.ToolDisplayName, "notes MCP Server") {
			t.Fatalf("confirmation = %+v; want mcpDetails naming server notes and tool append_line", c.Request)
		}
		if got := c.optionIDs(); got != "proceed_once,proceed_always_tool,proceed_always_server,cancel" {
			t.Fatalf("options = %s", got)
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": c.ToolCallID, "outcome": "cancel"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ToolCallID == c.ToolCallID && e.Tool.Status == "CANCELLED" })
		lp.wait(t, from, "state", stateIs("idle"))
		if _, err := os.Stat(notes); !os.IsNotExist(err) {
			t.Fatalf("the denied MCP tool ran (%s: %v)", notes, err)
		}
	})

	t.Run("MCPAllowToolAlways", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "first"}))
		w.fake.Reply(fakegemini.Text("Noted."))
		from := prompt(t, "note first")
		c := lp.waitConfirmation(t, from)
		if c.Request.McpDetails == nil || c.Request.McpDetails.ServerName != "notes" {
			t.Fatalf("confirmation = %+v", c.Request)
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": c.ToolCallID, "outcome": "proceed_always_tool"}); err != nil {
			t.Fatal(err)
		}
		_, after := lp.wait(t, from, "text", func(e event) bool { return e.Text == "Noted." })
		lp.wait(t, after, "state", stateIs("idle"))
		if got, _ := w.read(t, "notes.txt"); got != "first\n" {
			t.Fatalf("notes.txt = %q after allowing the tool; want it to have run once", got)
		}

		w.fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "second"}))
		w.fake.Reply(fakegemini.Text("Noted again."))
		from = prompt(t, "note second")
		lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ToolName == "append_line" && e.Tool.Status == "SUCCEEDED" })
		_, after = lp.wait(t, from, "text", func(e event) bool { return e.Text == "Noted again." })
		lp.wait(t, after, "state", stateIs("idle"))
		if n := lp.asked(from); n != 0 {
			t.Fatalf("the tool allowed always asked again (%d confirmations)", n)
		}
		if got, _ := w.read(t, "notes.txt"); got != "first\nsecond\n" {
			t.Fatalf("notes.txt = %q; want the second call to have run unasked", got)
		}
	})
	t.Run("WebFetch", func(t *testing.T) { webFetch(t, w, lp) })
}

// webFetch covers the server's "info" confirmations with the one that can
// be triggered offline: web_fetch of a page on 127.0.0.1 served by
// the test. The panel shows it as GenericDetails with the URL; denied, the
// page is never fetched; allowed once, it is.
func webFetch(t *testing.T, w *world, lp *linkPanel) {
	page := testkit.NewWebPage(t, "release notes")
	url := page.URL + "/notes"

	fetch := func(t *testing.T, outcome string) confirmation {
		t.Helper()
		before := page.Hits()
		w.fake.Reply(fakegemini.Call("web_fetch", map[string]any{"prompt": "summarize " + url}))
		if outcome != "cancel" {
			// A denied call ends the turn without asking the model again.
			w.fake.Reply(fakegemini.Text("Summarized."))
		}
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "read " + url}); err != nil {
			t.Fatal(err)
		}
		c := lp.waitConfirmation(t, from)
		gd := c.Request.GenericDetails
		if c.ToolName != "web_fetch" || gd == nil || !strings.Contains(gd.Description, "Confirm Web Fetch") ||
			!strings.Contains(gd.Description, url) || len(gd.Urls) != 1 || gd.Urls[0] != url {
			t.Fatalf("confirmation = %+v; want genericDetails with the fetch's URL", c.Request)
		}
		if got := c.optionIDs(); got != "proceed_once,proceed_always,cancel" {
			t.Fatalf("options = %s", got)
		}
		if page.Hits() != before {
			t.Fatal("the page was fetched before the user answered")
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": c.ToolCallID, "outcome": outcome}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "state", stateIs("idle"))
		return c
	}

	t.Run("Denied", func(t *testing.T) {
		fetch(t, "cancel")
		if n := page.Hits(); n != 0 {
			t.Fatalf("the denied fetch reached the page %d times", n)
		}
	})
	t.Run("AllowedOnce", func(t *testing.T) {
		fetch(t, "proceed_once")
		if !testkit.Poll(5*time.Second, func() bool { return page.Hits() > 0 }) {
			t.Fatal("the allowed fetch never reached the page")
		}
	})
	// The A2A server 0.25.2 takes "allow always" on a web fetch as
	// switching the task to auto-edit: later file edits of the same task
	// are no longer asked. The panel's option says so.
	t.Run("AllowedAlwaysStopsAskingForEdits", func(t *testing.T) {
		c := fetch(t, "proceed_always")
		if name := c.Request.Options[1].Name; !strings.Contains(name, "file edits will no longer be asked") {
			t.Fatalf("the allow-always option %q does not say that edits stop being asked", name)
		}
		path := w.path("unasked.txt")
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "written unasked\n"}))
		w.fake.Reply(fakegemini.Text("Wrote it."))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "write unasked.txt"}); err != nil {
			t.Fatal(err)
		}
		_, after := lp.wait(t, from, "text", func(e event) bool { return e.Text == "Wrote it." })
		lp.wait(t, after, "state", stateIs("idle"))
		if n, got := lp.asked(from), func() string { s, _ := w.read(t, "unasked.txt"); return s }(); n != 0 || got != "written unasked\n" {
			t.Fatalf("after allowing a web fetch always, the edit asked %d times and wrote %q: the server changed; update the option's name", n, got)
		}
	})
}
