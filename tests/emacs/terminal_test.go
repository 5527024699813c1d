package emacs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// cliWindow is what Emacs shows of the CLI's terminal: its window's size
// and place on the screen, the size of the CLI's pty, and the text of the
// window.
type cliWindow struct {
	Cols    int      `json:"cols"`    // characters a line of the window shows
	Rows    int      `json:"rows"`    // lines of the window
	Left    int      `json:"left"`    // screen column of its first character
	Top     int      `json:"top"`     // screen line of its first line
	PtyRows int      `json:"ptyRows"` // the size the CLI is told
	PtyCols int      `json:"ptyCols"`
	Lines   []string `json:"lines"` // the window's text, line by line
}

// cliWindowOf reads what Emacs shows of the CLI's terminal.
func cliWindowOf(t testing.TB, em *Emacs) cliWindow {
	t.Helper()
	out := filepath.Join(t.TempDir(), "cli-window.json")
	em.Eval(t, fmt.Sprintf(`(let* ((b gemini-companion--cli-buffer)
       (w (get-buffer-window b t))
       (p (get-buffer-process b))
       (size (split-string (shell-command-to-string (format "stty size < %%s" (process-tty-name p)))))
       (start (window-start w))
       (end (window-end w t)))
  (with-temp-file %s
    (insert (json-encode
             (list :cols (window-max-chars-per-line w) :rows (window-body-height w)
                   :left (nth 0 (window-edges w)) :top (nth 1 (window-edges w))
                   :ptyRows (string-to-number (nth 0 size)) :ptyCols (string-to-number (nth 1 size))
                   :lines (with-current-buffer b (vconcat (split-string (buffer-substring-no-properties start end) "\n"))))))))`, quote(out)))
	var w cliWindow
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return w
}

// fits says what is wrong with the CLI's screen in Emacs, or "": the CLI
// must be told its window's size, draw no line wider than the window (on
// the screen, the window's last column, kept for Emacs' continuation and
// truncation marks, stays blank), and show its prompt once.
func (w cliWindow) fits(screen string) string {
	if w.PtyCols != w.Cols || w.PtyRows != w.Rows {
		return fmt.Sprintf("the CLI is told %dx%d, the window shows %dx%d", w.PtyCols, w.PtyRows, w.Cols, w.Rows)
	}
	for _, l := range w.Lines {
		// A separator rule spans the terminal: a shorter one is the end of
		// a rule drawn for a wider terminal, wrapped.
		if r := strings.TrimSpace(l); r != "" && strings.Trim(r, "─") == "" && len([]rune(r)) != w.PtyCols {
			return fmt.Sprintf("a rule of %d characters in a terminal of %d", len([]rune(r)), w.PtyCols)
		}
		if n := len([]rune(l)); n > w.Cols {
			return fmt.Sprintf("a line of %d characters in a window of %d: %q", n, w.Cols, l)
		}
		if strings.ContainsRune(l, '\uFFFD') {
			return fmt.Sprintf("a replacement character: %q", l)
		}
		// The window title the CLI sets (OSC 0), printed as text.
		if strings.Contains(l, "]0;") {
			return fmt.Sprintf("an escape sequence shown as text: %q", l)
		}
	}
	rows := strings.Split(screen, "\n")
	for i := w.Top; i < w.Top+w.Rows && i < len(rows); i++ {
		r := []rune(rows[i])
		if c := w.Left + w.Cols; c < len(r) && (r[c] == '\\' || r[c] == '$') {
			return fmt.Sprintf("screen line %d runs past the window's edge: %q", i, rows[i])
		}
	}
	for _, once := range []string{"Type your message", "workspace (/directory)"} {
		if n := strings.Count(screen, once); n != 1 {
			return fmt.Sprintf("%q shows %d times", once, n)
		}
	}
	return ""
}

// waitFits waits until the CLI's screen fits its window, as fits says.
func waitFits(t testing.TB, em *Emacs, what string) cliWindow {
	t.Helper()
	var w cliWindow
	var why, screen string
	if !testkit.Poll(cliTimeout, func() bool {
		screen = em.pane.Screen()
		w = cliWindowOf(t, em)
		why = w.fits(screen)
		return why == ""
	}) {
		t.Fatalf("%s: %s\nscreen:\n%s\nthe CLI's window:\n%s", what, why, screen, strings.Join(w.Lines, "\n"))
	}
	return w
}

// The real Gemini CLI in Emacs, in vterm and in term: it is told the size
// of the window it is shown in, from the start and after a resize, and
// draws its screen for that size, through a turn with a tool call: no
// line wider than the window, no escape sequence shown as text, the
// prompt box once.
func TestCLIScreenFitsItsWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	t.Run("vterm", func(t *testing.T) {
		if vterm, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/vterm-[0-9]*"); len(vterm) == 0 {
			tmuxdrive.Missing(t, "vterm is not installed (apt-get install elpa-vterm)")
		}
		cliScreenFits(t, "vterm")
	})
	t.Run("term", func(t *testing.T) { cliScreenFits(t, "ansi-term") })
}

func cliScreenFits(t *testing.T, terminal string) {
	requireEmacs(t)
	e := testkit.StartE2E(t)
	em := startEmacs(t, e.SB, e.Env, e.Gemini, terminal, "app.py")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	em.pane.Keys(t, "M-x")
	em.pane.Type(t, "gemini-companion-cli")
	em.pane.WaitFor(t, "Type your message", cliTimeout)
	before := waitFits(t, em, "at start")

	// The user makes the CLI's window narrower.
	em.Eval(t, `(with-selected-window (get-buffer-window gemini-companion--cli-buffer t) (shrink-window-horizontally 24))`)
	after := waitFits(t, em, "after the window shrank")
	if after.Cols >= before.Cols {
		t.Fatalf("the window did not shrink: %d columns, %d before", after.Cols, before.Cols)
	}
	// A turn with the model in it: the CLI sets the window title as it
	// works, draws a tool call's box, then the answer.
	e.API.Reply(fakegemini.Call("read_file", map[string]any{"file_path": e.File}))
	e.API.Reply(fakegemini.Text("It prints hello."))
	em.pane.Type(t, "What does app.py print?")
	em.pane.WaitFor(t, "It prints hello.", cliTimeout)
	em.pane.WaitFor(t, "ReadFile", waitTimeout)
	waitFits(t, em, "after a turn with a tool call")
}
