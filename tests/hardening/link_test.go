package hardening

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestEditorLinkSurvivesHugeAndHostileLines writes to the real sidecar's
// stdin what a broken or buggy plugin could: lines of tens of MiB, numbers
// no int holds, text that is not UTF-8, answers to requests never made.
// The link keeps answering, and the CLI keeps getting a context within the
// limits it relies on. (The fuzz targets try far more shapes, in-process.)
func TestEditorLinkSurvivesHugeAndHostileLines(t *testing.T) {
	t.Parallel()
	s := start(t)
	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	cli.WaitFor(t, "ide/contextUpdate", wait, nil)
	path := filepath.Join(s.sb.Workspace, "big.txt")
	os.WriteFile(path, []byte("x\n"), 0o600)

	garbage := strings.Repeat("{[\"not json", 1<<20) // 11 MiB, no newline inside
	s.ed.WriteRaw(t, []byte(garbage+"\n"))
	lines := []string{
		`{"jsonrpc":"2.0","method":"context/fileFocused","params":{"path":"/w/a.go","cursor":{"line":1e300,"character":1}}}`,
		`{"jsonrpc":"2.0","method":"context/fileFocused","params":{"path":"/w/a.go","cursor":{"line":99999999999999999999,"character":1}}}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"context/fileFocused\",\"params\":{\"path\":\"/w/\xff\xfe.go\",\"selectedText\":\"\xed\xa0\x80\"}}",
		`{"jsonrpc":"2.0","id":424242,"result":{"content":"never asked"}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"never asked"}}`,
		`{"jsonrpc":"2.0","method":"diff/accepted","params":{"filePath":"/w/unknown.go","content":"` + strings.Repeat("z", 8<<20) + `"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}`,
	}
	for _, l := range lines {
		s.ed.WriteRaw(t, []byte(l+"\n"))
	}
	// A selection of 8 MiB of mixed text: the CLI gets at most 16384
	// UTF-16 units of it, cut between characters.
	unit := "aé😀中"
	selection := strings.Repeat(unit, (8<<20)/len(unit))
	s.ed.Notify(t, "context/selectionChanged", map[string]any{
		"path": path, "cursor": map[string]int{"line": 1, "character": 1}, "selectedText": selection,
	})

	st := s.status(t)
	if st.Port != s.res.Port {
		t.Fatalf("status after hostile lines: %+v", st)
	}
	raw := cli.WaitFor(t, "ide/contextUpdate", wait, func(p json.RawMessage) bool {
		return strings.Contains(string(p), "big.txt") && strings.Contains(string(p), "selectedText")
	})
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	f := c.WorkspaceState.OpenFiles[0]
	sel := *f.SelectedText
	units := len(utf16.Encode([]rune(sel)))
	if !utf8.ValidString(sel) || units > idectx.MaxSelectedUTF16 || units < idectx.MaxSelectedUTF16-1 || !strings.HasPrefix(selection, sel) {
		t.Fatalf("selection sent to the CLI: %d UTF-16 units, valid UTF-8 %v, a prefix of the selection %v",
			units, utf8.ValidString(sel), strings.HasPrefix(selection, sel))
	}
	for _, file := range c.WorkspaceState.OpenFiles {
		if !utf8.ValidString(file.Path) || strings.Contains(file.Path, "\xff") {
			t.Fatalf("a path that is not UTF-8 reached the CLI: %q", file.Path)
		}
	}
	if n := len(cli.All("ide/diffAccepted")); n != 0 {
		t.Fatalf("a decision for a diff never opened reached the CLI")
	}
	s.noCrash(t)
}
