package diffview

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// refUnifiedBounded is the unified diff as it was before it was windowed:
// every line of both texts split and diffed, with the same line diff and
// hunk writer. The windowed one must write the same text, so this checks
// the window and the line numbers it shifts.
func refUnifiedBounded(path string, original *string, proposed string) (text string, exact bool) {
	oldText := ""
	oldLabel := "a" + path
	if original != nil {
		oldText = *original
	} else {
		oldLabel = "/dev/null"
	}
	if original != nil && oldText == proposed {
		return "", true
	}
	oldLines := splitLines(oldText)
	newLines := splitLines(proposed)
	ops, exact := lineOps(oldLines, newLines)

	var b strings.Builder
	if !exact {
		fmt.Fprintf(&b, "Changed region over %d lines: shown as one replacement, not line by line.\n", MaxLineDiff)
	}
	fmt.Fprintf(&b, "--- %s\n+++ b%s\n", oldLabel, path)
	for _, h := range hunks(ops) {
		writeHunk(&b, h, ops, oldLines, newLines, 0)
	}
	return b.String(), exact
}

// TestWindowedUnifiedMatchesTheWholeDiff compares the windowed diff with
// the whole-text one on random edits of random line texts: changes at the
// start, the end, next to each other, lines without a final newline, new
// and emptied files, and texts with repeated lines (where the common head
// and tail could be mistaken).
func TestWindowedUnifiedMatchesTheWholeDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a\n", "b\n", "c\n", "\n", "ab\n", "a", "b", "same\n", "x\ny\n"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	edit := func(s string) string {
		for range 1 + r.IntN(3) {
			i := r.IntN(len(s) + 1)
			j := min(len(s), i+r.IntN(6))
			s = s[:i] + text(r.IntN(3)) + s[j:]
		}
		return s
	}
	for i := range 20000 {
		old := text(r.IntN(30))
		proposed := edit(old)
		var orig *string
		switch i % 10 {
		case 0:
			orig = nil
		case 1:
			proposed = ""
			orig = &old
		default:
			orig = &old
		}
		want, wantExact := refUnifiedBounded("/w/f", orig, proposed)
		got, exact := unified("/w/f", orig, proposed)
		if got != want || exact != wantExact {
			t.Fatalf("old %q new %q:\nwindowed:\n%s\nwhole:\n%s", old, proposed, got, want)
		}
	}
}
