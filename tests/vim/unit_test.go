package vim

import (
	"path/filepath"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// The plugin's own assert_* tests (tests/vim/unit/test_*.vim), each file
// in a fresh Vim against the real sidecar; every Test_* function is a
// subtest and every v:errors entry a failure.
func TestVimUnit(t *testing.T) {
	requireVim(t)
	dir := filepath.Join(testkit.ModuleRoot(t), "tests", "vim", "unit")
	files, err := filepath.Glob(filepath.Join(dir, "test_*.vim"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no unit test files in %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sb := testkit.NewSandbox(t)
			v := startVim(t, sb, Options{})
			v.Ex(t, "source "+filepath.Join(dir, "runner.vim"))
			v.Ex(t, "source "+file)
			var names []string
			v.EvalJSON(t, &names, "GicTests()")
			if len(names) == 0 {
				t.Fatalf("%s defines no Test_* function", file)
			}
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					var errs []string
					v.EvalJSON(t, &errs, "GicRunTest("+vimString(name)+")")
					for _, e := range errs {
						t.Error(e)
					}
					if t.Failed() {
						t.Log(v.diagnostics())
					}
				})
			}
		})
	}
}
