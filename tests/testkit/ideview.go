package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// What the CLI sees of an editor under test: its connection, its diffs
// and the context the editor sends.

// Connect waits for the sidecar's discovery file and connects a CLI to it.
func Connect(t testing.TB, sb *Sandbox, timeout time.Duration) *CLI {
	t.Helper()
	_, f := sb.WaitDiscovery(t, timeout)
	return ConnectCLI(t, f.Port, f.AuthToken)
}

// MustOpenDiff calls the CLI's openDiff and fails the test when the call or
// the tool fails.
func (c *CLI) MustOpenDiff(t testing.TB, path, content string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.OpenDiff(ctx, path, content)
	if err != nil {
		t.Fatalf("openDiff: %v", err)
	}
	if res.IsError {
		raw, _ := json.Marshal(res.Content)
		t.Fatalf("openDiff failed: %s", raw)
	}
}

// DiffNote decodes the file path and content of an ide/diffAccepted or
// ide/diffRejected notification.
func DiffNote(t testing.TB, raw json.RawMessage) (path, content string) {
	t.Helper()
	var p struct {
		FilePath string `json:"filePath"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("diff notification %s: %v", raw, err)
	}
	return p.FilePath, p.Content
}

// ParseContext decodes an ide/contextUpdate.
func ParseContext(t testing.TB, raw json.RawMessage) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("contextUpdate %s: %v", raw, err)
	}
	return c
}

// LatestContext is the last ide/contextUpdate the CLI received, if any.
func LatestContext(t testing.TB, cli *CLI) (idectx.IdeContext, bool) {
	t.Helper()
	notes := cli.All("ide/contextUpdate")
	if len(notes) == 0 {
		return idectx.IdeContext{}, false
	}
	return ParseContext(t, notes[len(notes)-1].Params), true
}

// WaitContext waits up to timeout until the CLI's latest context
// satisfies ok, and returns it; what says what the test waits for.
func WaitContext(t testing.TB, cli *CLI, what string, timeout time.Duration, ok func(idectx.IdeContext) bool) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if !Poll(timeout, func() bool {
		var have bool
		c, have = LatestContext(t, cli)
		return have && ok(c)
	}) {
		raw, _ := json.Marshal(c)
		t.Fatalf("the CLI's context never became: %s\nlast context: %s", what, raw)
	}
	return c
}

// ActiveFile is the file the CLI treats as active (the newest, if marked
// active), or nil.
func ActiveFile(c idectx.IdeContext) *idectx.File {
	if c.WorkspaceState == nil || len(c.WorkspaceState.OpenFiles) == 0 {
		return nil
	}
	newest := &c.WorkspaceState.OpenFiles[0]
	for i := range c.WorkspaceState.OpenFiles {
		f := &c.WorkspaceState.OpenFiles[i]
		if f.Timestamp > newest.Timestamp {
			newest = f
		}
	}
	if !newest.IsActive {
		return nil
	}
	return newest
}

// OpenPaths lists the paths of the open files, newest first.
func OpenPaths(c idectx.IdeContext) []string {
	if c.WorkspaceState == nil {
		return nil
	}
	files := append([]idectx.File(nil), c.WorkspaceState.OpenFiles...)
	for i := range files {
		for j := i + 1; j < len(files); j++ {
			if files[j].Timestamp > files[i].Timestamp {
				files[i], files[j] = files[j], files[i]
			}
		}
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// Active describes the active file a test waits for in the CLI's context.
type Active struct {
	// Path is the active file's path.
	Path      string
	Line, Col int     // Line 0: any cursor
	Selection *string // nil: none expected
	AnySel    bool    // do not look at the selection
}

// Matches reports whether c has the active file a describes.
func (a Active) Matches(c idectx.IdeContext) bool {
	f := ActiveFile(c)
	if f == nil || f.Path != a.Path {
		return false
	}
	if a.Line != 0 && (f.Cursor == nil || f.Cursor.Line != a.Line || f.Cursor.Character != a.Col) {
		return false
	}
	if a.AnySel {
		return true
	}
	if a.Selection == nil {
		return f.SelectedText == nil || *f.SelectedText == ""
	}
	return f.SelectedText != nil && *f.SelectedText == *a.Selection
}

// String says what a test waits for, for failure messages.
func (a Active) String() string {
	sel := "none"
	if a.AnySel {
		sel = "any"
	} else if a.Selection != nil {
		sel = fmt.Sprintf("%q", *a.Selection)
	}
	return fmt.Sprintf("active %s at %d:%d, selection %s", a.Path, a.Line, a.Col, sel)
}

// WaitActive waits up to timeout until the CLI's latest context has the
// active file a describes, and returns that context.
func WaitActive(t testing.TB, cli *CLI, a Active, timeout time.Duration) idectx.IdeContext {
	t.Helper()
	return WaitContext(t, cli, a.String(), timeout, a.Matches)
}

// Ptr returns a pointer to s (for Active.Selection).
func Ptr(s string) *string { return &s }
