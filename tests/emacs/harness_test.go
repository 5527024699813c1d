// Package emacs tests the Emacs package (plugins/emacs) in real Emacs: its
// ERT suite in batch Emacs against the real sidecar (with the editor-link
// transcripts replayed through the package's own code), its byte-compile,
// checkdoc and package-lint checks, and, end to end, interactive `emacs -nw`
// in tmux with the real Gemini CLI. Interactive Emacs is observed through
// its server (emacsclient --eval) and driven with keys, as a user does.
package emacs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/transcript"
)

// waitTimeout bounds waiting for something Emacs or the sidecar does.
const waitTimeout = 20 * time.Second

// requireEmacs returns the emacs executable, or fails (CI) / skips.
func requireEmacs(t testing.TB) string {
	t.Helper()
	return tmuxdrive.RequireProgram(t, "emacs", "emacs is not installed (apt-get install emacs-nox)")
}

// transcriptDirs are the folders of editor-link transcripts the ERT replay
// plays: the shared ones, which must be there, and the package's own.
func transcriptDirs(t testing.TB) []string {
	root := testkit.ModuleRoot(t)
	if st, err := os.Stat(transcript.Dir(root)); err != nil || !st.IsDir() {
		t.Fatalf("the shared transcripts are not in %s", transcript.Dir(root))
	}
	var dirs []string
	for _, d := range []string{
		transcript.Dir(root),
		filepath.Join(root, "tests", "emacs", "transcripts"),
	} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// runBatch runs batch Emacs with args in dir and returns its combined
// output and exit error.
func runBatch(t testing.TB, env []string, args ...string) (string, error) {
	t.Helper()
	emacs := requireEmacs(t)
	cmd := exec.Command(emacs, append([]string{"-Q", "--batch"}, args...)...)
	cmd.Dir = testkit.ModuleRoot(t)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// ertSummary returns the "Ran N tests, ..." line of ERT's output.
func ertSummary(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Ran ") {
			return l
		}
	}
	return ""
}

// requireElpa skips the test (fails it under CI) unless each of Debian's
// elpa packages (by package name: "eglot", "go-mode", ...) is installed.
func requireElpa(t testing.TB, pkgs ...string) {
	t.Helper()
	for _, pkg := range pkgs {
		if m, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/" + pkg + "-[0-9]*"); len(m) == 0 {
			tmuxdrive.Missing(t, pkg+" is not installed (apt-get install elpa-"+pkg+")")
		}
	}
}

// startTools starts an agent's `gemini-ide-companion tools` with the
// companion variables of this Emacs's terminals, as a CLI started in one
// of them does.
func (e *Emacs) startTools(t *testing.T, sb *testkit.Sandbox) *testkit.ToolsClient {
	t.Helper()
	info := e.Eval(t, `(json-encode (plist-get (gemini-companion-link-info) :env))`)
	var vars map[string]string
	if text, err := strconv.Unquote(info); err != nil || json.Unmarshal([]byte(text), &vars) != nil {
		t.Fatalf("the sidecar's env: %s", info)
	}
	return testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), vars))
}

// keyNames is text as tmux key names, typed one key at a time as a user
// types (a space is "Space", a newline "Enter").
func keyNames(text string) []string {
	var keys []string
	for _, r := range text {
		switch r {
		case ' ':
			keys = append(keys, "Space")
		case '\n':
			keys = append(keys, "Enter")
		default:
			keys = append(keys, string(r))
		}
	}
	return keys
}
