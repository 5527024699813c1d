package emacs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The package's ERT suite in batch Emacs, against the real (race-built)
// sidecar, with every editor-link transcript replayed through the
// package's own code. No test may be skipped: the sidecar and the
// transcripts are given.
func TestERT(t *testing.T) {
	sb := testkit.NewSandbox(t)
	dirs := transcriptDirs(t)
	env := testkit.WithEnv(sb.Env(),
		"HOME="+sb.Home,
		"GIC_BINARY="+testkit.Binary(t),
		"GEMINI_COMPANION_TRANSCRIPTS="+strings.Join(dirs, string(os.PathListSeparator)))
	// The sources, even if a checkout holds .elc files older than them.
	args := []string{"--eval", "(setq load-prefer-newer t)", "-L", testkit.PluginDir(t, "emacs")}
	// Debian's elpa-vterm, for the test of the CLI in vterm (batch Emacs
	// with -Q does not load site packages).
	vterm, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/vterm-[0-9]*")
	if len(vterm) > 0 {
		args = append(args, "-L", vterm[len(vterm)-1])
	}
	out, err := runBatch(t, env, append(args,
		"-l", filepath.Join(testkit.PluginDir(t, "emacs"), "test", "gemini-companion-test.el"),
		"-f", "ert-run-tests-batch-and-exit")...)
	summary := ertSummary(out)
	if err != nil || summary == "" {
		t.Fatalf("ERT failed (%v): %s\n%s", err, summary, out)
	}
	if !regexp.MustCompile(`^Ran (\d+) tests, (\d+) results as expected, 0 unexpected`).MatchString(summary) {
		t.Fatalf("ERT: %s\n%s", summary, out)
	}
	if strings.Contains(summary, "skipped") {
		// Only the vterm test may skip, and only where vterm is missing.
		if len(vterm) == 0 && strings.Contains(summary, ", 1 skipped") &&
			strings.Contains(out, "SKIPPED  gemini-companion-test-cli-in-vterm") {
			tmuxdrive.Missing(t, "vterm is not installed (apt-get install elpa-vterm); the rest of ERT passed")
		}
		t.Fatalf("ERT: %s (no test may be skipped here)\n%s", summary, out)
	}
	t.Logf("ERT: %s; transcripts from %v", summary, dirs)
}

// packageLintDir finds Debian's elpa-package-lint.
func packageLintDir(t testing.TB) string {
	matches, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/package-lint-[0-9]*")
	if len(matches) == 0 {
		tmuxdrive.Missing(t, "package-lint is not installed (apt-get install elpa-package-lint)")
	}
	return matches[len(matches)-1]
}

// lintScript byte-compiles every file with warnings as errors, runs
// checkdoc and package-lint on them, and prints one "LINT: " line per
// finding.
const lintScript = `
(require 'package)
(require 'checkdoc)
(setq byte-compile-error-on-warn t
      package-lint-main-file "gemini-companion.el")
(require 'package-lint)
(let ((files (directory-files default-directory nil "^gemini-companion.*\\.el$"))
      (byte-compile-dest-file-function (lambda (f) (concat (make-temp-file "gc") ".elc"))))
  (dolist (f files)
    (let ((byte-compile-log-buffer (format "*compile %s*" f)))
      (unless (byte-compile-file f)
        (princ (format "LINT: %s does not byte-compile cleanly:\n%s\n" f
                       (with-current-buffer byte-compile-log-buffer (buffer-string))))))
    (with-current-buffer (find-file-noselect f)
      (let ((checkdoc-diagnostic-buffer (format "*checkdoc %s*" f)))
        (checkdoc-current-buffer t)
        (with-current-buffer checkdoc-diagnostic-buffer
          (goto-char (point-min))
          (while (re-search-forward "^\\(gemini-companion.*\\.el:[0-9]+: .*\\)$" nil t)
            (princ (format "LINT: checkdoc: %s\n" (match-string 1))))))
      (dolist (issue (package-lint-buffer))
        (princ (format "LINT: package-lint: %s:%d:%d: %s: %s\n"
                       f (nth 0 issue) (nth 1 issue) (nth 2 issue) (nth 3 issue)))))))
`

// The package byte-compiles without warnings and is checkdoc and
// package-lint clean. Debian's package-lint (0.16) predates Emacs 28 and
// warns about any package that needs it; that one warning is expected.
func TestPackageLint(t *testing.T) {
	dir := packageLintDir(t)
	script := filepath.Join(t.TempDir(), "lint.el")
	if err := os.WriteFile(script, []byte(lintScript), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runBatch(t, testkit.WithEnv(os.Environ(), "HOME="+t.TempDir()),
		"-L", testkit.PluginDir(t, "emacs"), "-L", dir,
		"--eval", "(setq default-directory "+quote(testkit.PluginDir(t, "emacs")+"/")+")",
		"-l", script)
	if err != nil {
		t.Fatalf("the lint run failed: %v\n%s", err, out)
	}
	var findings []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "LINT: ") {
			continue
		}
		if strings.Contains(l, "uninstallable in all released Emacs versions") && strings.Contains(dir, "package-lint-0.") {
			continue
		}
		findings = append(findings, l)
	}
	if len(findings) > 0 {
		t.Fatalf("lint findings:\n%s\n\nfull output:\n%s", strings.Join(findings, "\n"), out)
	}
}

// quote makes s an Emacs Lisp string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
