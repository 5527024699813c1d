package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The Go workspace the editor suites ask their language tooling about
// (tests/nvim, tests/vim, tests/emacs, with gopls as the language server):
// a type error, a function defined in one file and used from another, and a
// line with multi-byte characters before the symbol, so that a position
// converted in the wrong unit (bytes, UTF-16 code units) lands elsewhere.

// GoplsVersion is the gopls the tests run (installed by .ci/run).
const GoplsVersion = "v0.23.0"

// GoWorkspace is the Go workspace written by WriteGoWorkspace, with the
// places the tests ask about, as a model reads them: 1-based lines and
// 1-based columns counted in characters (Unicode code points).
type GoWorkspace struct {
	Dir, Main, Helper string // the folder, main.go, helper.go
	// UseLine is the line of main.go that calls Add after "日本語😀";
	// UseColumn is Add's column there in characters.
	UseLine, UseColumn int
	// DefLine and DefColumn are where Add is declared in helper.go.
	DefLine, DefColumn int
	// ErrLine and ErrColumn are where the type error starts in main.go
	// (the string literal); ErrEndColumn is its end (exclusive), after a
	// character outside the Basic Multilingual Plane.
	ErrLine, ErrColumn, ErrEndColumn int
	// ErrMessage is part of gopls' message for the type error.
	ErrMessage string
}

// goMain's line 6 has "日本語😀" (3 × 3 bytes + 4 bytes: 13 bytes, 5 UTF-16
// code units, 4 characters) before Add; line 7 has the type error, whose
// range ends after an emoji.
const goMain = "package main\n" +
	"\n" +
	"import \"fmt\"\n" +
	"\n" +
	"func main() {\n" +
	"\tgreeting := \"日本語😀\"; total := Add(1, 2)\n" +
	"\tvar count int = \"😀 many\"\n" +
	"\tfmt.Println(greeting, total, count, Counter{})\n" +
	"}\n"

const goHelper = "package main\n" +
	"\n" +
	"// Add returns the sum of a and b.\n" +
	"func Add(a, b int) int {\n" +
	"\treturn a + b\n" +
	"}\n" +
	"\n" +
	"// Counter counts.\n" +
	"type Counter struct {\n" +
	"\tN int\n" +
	"}\n" +
	"\n" +
	"// Inc adds one.\n" +
	"func (c *Counter) Inc() {\n" +
	"\tc.N++\n" +
	"}\n"

// WriteGoWorkspace writes the Go workspace into dir (usually a sandbox's
// Workspace) and says where things are in it.
func WriteGoWorkspace(t testing.TB, dir string) GoWorkspace {
	t.Helper()
	files := map[string]string{
		"go.mod":    "module example.com/tools\n\ngo 1.22\n",
		"main.go":   goMain,
		"helper.go": goHelper,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	ws := GoWorkspace{
		Dir: dir, Main: filepath.Join(dir, "main.go"), Helper: filepath.Join(dir, "helper.go"),
		UseLine: 6, DefLine: 4, DefColumn: 6, ErrLine: 7,
		ErrMessage: `cannot use "😀 many" (untyped string constant) as int value in variable declaration`,
	}
	lines := strings.Split(goMain, "\n")
	ws.UseColumn = CharColumn(lines[ws.UseLine-1], "Add(")
	ws.ErrColumn = CharColumn(lines[ws.ErrLine-1], `"😀`)
	ws.ErrEndColumn = ws.ErrColumn + len([]rune(`"😀 many"`))
	return ws
}

// CharColumn is the 1-based column, in characters, of the first sub in
// line (0 when it is not there).
func CharColumn(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		return 0
	}
	return len([]rune(line[:i])) + 1
}

// Gopls returns the gopls executable (PATH, else GOBIN or GOPATH/bin, where
// `go install golang.org/x/tools/gopls@v0.23.0` puts it), or fails (CI) /
// skips the test. Its folder is what the editors need on PATH.
func Gopls(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	for _, v := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			continue
		}
		dir := strings.TrimSpace(string(out))
		if v == "GOPATH" {
			dir = filepath.Join(filepath.SplitList(dir)[0], "bin")
		}
		if p := filepath.Join(dir, "gopls"); isExecutable(p) {
			return p
		}
	}
	tmuxdrive.Missing(t, "gopls is not installed (go install golang.org/x/tools/gopls@"+GoplsVersion+")")
	return ""
}

// GoplsCommand is the command line an editor runs gopls with in a test:
// its log in logDir, which also marks the process as this test's for
// AwaitGoplsExit.
func GoplsCommand(t testing.TB, logDir string) []string {
	t.Helper()
	return []string{Gopls(t), "-logfile", filepath.Join(logDir, "gopls.log")}
}

// GoplsEnv is the environment of an editor that runs gopls in the
// sandbox: the sandbox's, HOME its Home, Go on its local toolchain with
// module mode (gopls loads the workspace offline), and more.
func GoplsEnv(sb *Sandbox, more ...string) []string {
	return WithEnv(sb.Env(), append([]string{"HOME=" + sb.Home, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"}, more...)...)
}

// AwaitGoplsExit waits until the gopls started with GoplsCommand(logDir)
// has exited (its editor quit), so that it writes no more into the test's
// folders while they are removed.
func AwaitGoplsExit(t testing.TB, logDir string) {
	t.Helper()
	WaitNoProcess(t, filepath.Join(logDir, "gopls.log"))
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
