//go:build unix

package hardening

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestOpenDiffPathsThatCannotBeShown: paths that name no file the editor
// could show get a clear isError, reach no editor, and never hang or crash
// the sidecar (tests/sidecar covers relative, empty, NUL and a folder).
func TestOpenDiffPathsThatCannotBeShown(t *testing.T) {
	t.Parallel()
	s := start(t)
	ws := s.sb.Workspace
	fifo := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, "file.txt")
	os.WriteFile(file, []byte("x\n"), 0o600)
	linkToDir := filepath.Join(ws, "link-to-dir")
	os.Symlink(s.sb.Home, linkToDir)

	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	ctx := context.Background()
	cases := []struct {
		name, path, want string
	}{
		{"relative with ..", "../../etc/passwd", "not absolute"},
		{"home shorthand", "~/notes.txt", "not absolute"},
		{"leading space", " " + file, "not absolute"},
		{"dot", ".", "not absolute"},
		{"root", "/", "directory"},
		{"workspace with a slash", ws + "/", "directory"},
		{"missing folder and ..", ws + "/missing/..", "directory"},
		{"missing folder and .", ws + "/missing/.", "directory"},
		{"file name with a slash", file + "/", "directory"},
		{"link to a folder", linkToDir, "directory"},
		{"named pipe", fifo, "not a regular file"},
		{"device", "/dev/zero", "not a regular file"},
		{"file used as a folder", file + "/child", "cannot inspect"},
		{"name too long", "/" + strings.Repeat("a", 5000), "cannot inspect"},
		{"NUL after a good path", file + "\x00.txt", "NUL"},
	}
	for _, c := range cases {
		started := time.Now()
		res, err := cli.OpenDiff(ctx, c.path, "proposed\n")
		if err != nil {
			t.Errorf("%s: protocol error %v; want an isError result", c.name, err)
			continue
		}
		if !res.IsError || !strings.Contains(toolText(res), c.want) {
			t.Errorf("%s (%q): isError=%v %q; want isError mentioning %q", c.name, c.path, res.IsError, toolText(res), c.want)
		}
		if d := time.Since(started); d > 5*time.Second {
			t.Errorf("%s: took %s", c.name, d)
		}
		// closeDiff on the same path answers too, with nothing to close.
		if res, err := cli.CloseDiff(ctx, c.path); err != nil || (!res.IsError && toolText(res) != `{"content":null}`) {
			t.Errorf("%s: closeDiff: %v %q", c.name, err, toolText(res))
		}
	}
	// Arguments of the wrong shape.
	for name, args := range map[string]any{
		"newContent missing":   map[string]any{"filePath": file},
		"newContent null":      map[string]any{"filePath": file, "newContent": nil},
		"newContent a number":  map[string]any{"filePath": file, "newContent": 12},
		"filePath an object":   map[string]any{"filePath": map[string]any{"x": 1}, "newContent": "x"},
		"filePath a list":      map[string]any{"filePath": []string{file}, "newContent": "x"},
		"huge number for path": map[string]any{"filePath": 1e308, "newContent": "x"},
	} {
		res, err := cli.Session.CallTool(ctx, &mcp.CallToolParams{Name: "openDiff", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("openDiff with %s succeeded", name)
		}
	}
	if reqs := s.ed.Requests(); len(reqs) != 0 {
		t.Fatalf("refused diffs reached the editor: %v", reqs)
	}
	// The sidecar is unharmed: a good diff opens.
	if res, err := cli.OpenDiff(ctx, file, "y\n"); err != nil || res.IsError {
		t.Fatalf("good openDiff after the bad ones: %v %q", err, toolText(res))
	}
	s.noCrash(t)
}

// TestOpenDiffOutsideTheWorkspaceIsShownAndLogged: the CLI decides which
// files it edits; a path outside every workspace folder (also one that
// leaves it through "..") is shown, logged, and its decision comes back
// under the exact text the CLI sent, since the CLI matches it by that text.
func TestOpenDiffOutsideTheWorkspaceIsShownAndLogged(t *testing.T) {
	t.Parallel()
	s := start(t)
	cli := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	ctx := context.Background()
	outside := filepath.Join(s.sb.Home, "outside.txt")
	escaping := s.sb.Workspace + "/sub/../../home/escaped.txt"
	dotted := s.sb.Workspace + "/./inside.txt"
	for i, path := range []string{outside, escaping, dotted} {
		res, err := cli.OpenDiff(ctx, path, "proposed\n")
		if err != nil || res.IsError {
			t.Fatalf("openDiff(%q): %v %q", path, err, toolText(res))
		}
		reqs := s.ed.Requests()
		if len(reqs) != i+1 || reqs[i].Method != "diff/open" {
			t.Fatalf("the editor was not asked to show %s: %v", path, reqs)
		}
		mark := cli.Len()
		s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "ok\n"})
		n, _ := cli.WaitFrom(t, mark, "ide/diffAccepted", wait, nil)
		var got struct{ FilePath string }
		json.Unmarshal(n.Params, &got)
		if got.FilePath != path {
			t.Fatalf("decision for %q came back as %q; the CLI would never match it", path, got.FilePath)
		}
	}
	logged := testkit.Poll(wait, func() bool {
		return strings.Count(s.ed.Stderr(), "outside the workspace") == 2
	})
	if !logged {
		t.Fatalf("want the two paths outside the workspace logged, and only them:\n%s", s.ed.Stderr())
	}
	s.noCrash(t)
}
