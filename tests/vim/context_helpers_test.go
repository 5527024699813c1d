package vim

import (
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

// waitContext waits until the open files in the CLI's latest context
// satisfy ok.
func waitContext(t testing.TB, cli *testkit.CLI, what string, ok func(paths []string) bool) {
	t.Helper()
	testkit.WaitContext(t, cli, "open files with "+what, waitTimeout, func(c idectx.IdeContext) bool {
		if c.WorkspaceState == nil {
			return false
		}
		var paths []string
		for _, f := range c.WorkspaceState.OpenFiles {
			paths = append(paths, f.Path)
		}
		return ok(paths)
	})
}
