package vim

import (
	"encoding/json"
	"fmt"
	"testing"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// diffState is what a user sees of a diff tab in Vim.
type diffState struct {
	Found          bool           `json:"found"`
	Tabs           int            `json:"tabs"`
	Tab            int            `json:"tab"`
	CurrentBuf     int            `json:"current_buf"`
	Diff           []bool         `json:"diff"`
	Left           []string       `json:"left"`
	LeftModifiable bool           `json:"left_modifiable"`
	Right          []string       `json:"right"`
	RightBuf       int            `json:"right_buf"`
	Statusline     string         `json:"right_statusline"`
	State          map[string]any `json:"state"`
}

func diffTab(t testing.TB, v *Vim, path string) diffState {
	t.Helper()
	var s diffState
	v.EvalJSON(t, &s, "GicDiffTab("+vimString(path)+")")
	return s
}

// waitNoDiffTab waits until no tab shows a proposal for path.
func waitNoDiffTab(t testing.TB, v *Vim, path string) {
	t.Helper()
	v.WaitFor(t, "the diff tab of "+path+" to close", fmt.Sprintf("!GicDiffTab(%s).found && !bufexists(%s)", vimString(path), vimString("gemini://proposal/"+path)), waitTimeout)
}

// activeFile is the file the CLI treats as active, or nil.
func activeFile(c idectx.IdeContext) *idectx.File {
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

// want describes the active file a test waits for.
type want struct {
	path      string
	line, col int     // line 0: any cursor
	selection *string // nil: none expected
}

func (w want) matches(c idectx.IdeContext) bool {
	f := activeFile(c)
	if f == nil || f.Path != w.path {
		return false
	}
	if w.line != 0 && (f.Cursor == nil || f.Cursor.Line != w.line || f.Cursor.Character != w.col) {
		return false
	}
	if w.selection == nil {
		return f.SelectedText == nil || *f.SelectedText == ""
	}
	return f.SelectedText != nil && *f.SelectedText == *w.selection
}

func (w want) String() string {
	sel := "none"
	if w.selection != nil {
		sel = fmt.Sprintf("%q", *w.selection)
	}
	return fmt.Sprintf("active %s at %d:%d, selection %s", w.path, w.line, w.col, sel)
}

// waitContext waits until the open files in the CLI's latest context
// satisfy ok.
func waitContext(t testing.TB, cli *testkit.CLI, what string, ok func(paths []string) bool) {
	t.Helper()
	var paths []string
	if !testkit.Poll(waitTimeout, func() bool {
		notes := cli.All("ide/contextUpdate")
		if len(notes) == 0 {
			return false
		}
		var c idectx.IdeContext
		if err := json.Unmarshal(notes[len(notes)-1].Params, &c); err != nil || c.WorkspaceState == nil {
			return false
		}
		paths = paths[:0]
		for _, f := range c.WorkspaceState.OpenFiles {
			paths = append(paths, f.Path)
		}
		return ok(paths)
	}) {
		t.Fatalf("the CLI's context never had %s; open files: %q", what, paths)
	}
}

// waitActive waits until the CLI's latest context has the active file w
// describes, and returns that context.
func waitActive(t testing.TB, cli *testkit.CLI, w want) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if !testkit.Poll(waitTimeout, func() bool {
		notes := cli.All("ide/contextUpdate")
		if len(notes) == 0 {
			return false
		}
		c = idectx.IdeContext{}
		if err := json.Unmarshal(notes[len(notes)-1].Params, &c); err != nil {
			t.Fatalf("contextUpdate %s: %v", notes[len(notes)-1].Params, err)
		}
		return w.matches(c)
	}) {
		raw, _ := json.Marshal(c)
		t.Fatalf("the CLI's context never became: %s\nlast context: %s", w, raw)
	}
	return c
}

func ptr(s string) *string { return &s }
