package vim

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The CLI sees what a user does in the real interactive Vim (in tmux, keys
// typed): the file in focus, the cursor (UTF-16 column + 1, multibyte text
// included), the selection in all three Visual modes, cleared on <Esc>,
// and files closed.
func TestContextFollowsTyping(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\ngamma\n")
	m := sb.WriteFile(t, "m.txt", "first\naé😀bc d\n")
	b := sb.WriteFile(t, "sub/b.txt", "abcdef\nαβγδεζ\n123456\n")
	v := startVim(t, sb, Options{UI: true, Args: []string{"a.txt"}, Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 1, Col: 1}, waitTimeout)

	v.pane.Keys(t, "3", "G", "l", "l")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 3, Col: 3}, waitTimeout)

	// Line 2 of m.txt is "aé😀bc d": 'b' comes after 1+1+2 UTF-16 units.
	v.Ex(t, "edit m.txt")
	v.pane.Keys(t, "2", "G", "0", "3", "l")
	c := testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5}, waitTimeout)
	var paths []string
	for _, f := range c.WorkspaceState.OpenFiles {
		paths = append(paths, f.Path)
	}
	if !slices.Contains(paths, a) || !slices.Contains(paths, m) {
		t.Errorf("open files = %q, want a.txt and m.txt", paths)
	}

	// Characterwise, from 'a' to 'b'.
	v.pane.Keys(t, "0", "v", "3", "l")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5, Selection: testkit.Ptr("aé😀b")}, waitTimeout)
	// <Esc> clears the selection; the cursor stays.
	v.pane.Keys(t, "Escape")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5}, waitTimeout)

	// Linewise, upwards over both lines.
	v.pane.Keys(t, "V", "k")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Selection: testkit.Ptr("first\naé😀bc d")}, waitTimeout)
	v.pane.Keys(t, "Escape")

	// Blockwise: columns 2-4 of three lines, one of them Greek.
	v.Ex(t, "edit sub/b.txt")
	v.pane.Keys(t, "g", "g", "0", "l", "C-v", "2", "j", "2", "l")
	testkit.WaitActive(t, cli, testkit.Active{Path: b, Line: 3, Col: 4, Selection: testkit.Ptr("bcd\nβγδ\n234")}, waitTimeout)
	v.pane.Keys(t, "Escape")

	// a.txt is closed: the CLI no longer lists it.
	v.Ex(t, "bwipeout "+a)
	waitContext(t, cli, "a.txt closed", func(paths []string) bool { return !slices.Contains(paths, a) && slices.Contains(paths, b) })

	// b.txt saved under another name: the CLI follows the new name.
	c2 := filepath.Join(sb.Workspace, "sub", "c.txt")
	v.Ex(t, "saveas sub/c.txt")
	waitContext(t, cli, "c.txt instead of b.txt", func(paths []string) bool { return slices.Contains(paths, c2) && !slices.Contains(paths, b) })
	testkit.WaitActive(t, cli, testkit.Active{Path: c2, Line: 3, Col: 4}, waitTimeout)
}
