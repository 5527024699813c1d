package diffview_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
)

// TestUnifiedBoundsHugeLineDiffs proposes a change on more distinct lines
// than go-diff can map to runes (it panicked past about 1.1 million): the
// diff is coarse, says so, and still turns the old text into the new.
func TestUnifiedBoundsHugeLineDiffs(t *testing.T) {
	const n = 600_000 // old and new: 1.2 million distinct lines in all
	var ob, nb strings.Builder
	ob.WriteString("same start\n")
	nb.WriteString("same start\n")
	for i := range n {
		fmt.Fprintf(&ob, "old %d\n", i)
		fmt.Fprintf(&nb, "new %d\n", i)
	}
	ob.WriteString("same end\n")
	nb.WriteString("same end\n")
	old, proposed := ob.String(), nb.String()

	text, exact := diffview.UnifiedBounded("/w/big.txt", &old, proposed)
	if exact {
		t.Fatal("a 1.2-million-line change reported as diffed line by line")
	}
	head, body, ok := strings.Cut(text, "--- a/w/big.txt\n")
	if !ok || !strings.Contains(head, "shown as one replacement") {
		t.Fatalf("the coarse diff does not say so: %.200q", text)
	}
	if got := applyUnified(t, old, "--- a/w/big.txt\n"+body); got != proposed {
		t.Fatal("the coarse diff does not turn the old text into the proposal")
	}
	if diffview.Unified("/w/big.txt", &old, proposed) != text {
		t.Fatal("Unified and UnifiedBounded disagree")
	}
}

// TestUnifiedStaysExactBelowTheBound checks that an ordinary change is
// still diffed line by line.
func TestUnifiedStaysExactBelowTheBound(t *testing.T) {
	old := "a\nb\nc\n"
	text, exact := diffview.UnifiedBounded("/w/f", &old, "a\nB\nc\n")
	want := "--- a/w/f\n+++ b/w/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	if !exact || text != want {
		t.Fatalf("exact=%v\n%s", exact, text)
	}
}

// applyUnified applies a unified diff (as Unified writes it: full-line
// hunks, in order) to old and returns the result.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	oldLines := strings.SplitAfter(old, "\n")
	var out strings.Builder
	pos := 0
	lines := strings.SplitAfter(diff, "\n")
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@ "):
			var start int
			if _, err := fmt.Sscanf(l, "@@ -%d", &start); err != nil {
				t.Fatalf("hunk header %q: %v", l, err)
			}
			for ; pos < start-1; pos++ {
				out.WriteString(oldLines[pos])
			}
		case l[0] == ' ':
			out.WriteString(l[1:])
			pos++
		case l[0] == '-':
			if oldLines[pos] != l[1:] {
				t.Fatalf("line %d: diff removes %q, text has %q", pos+1, l[1:], oldLines[pos])
			}
			pos++
		case l[0] == '+':
			out.WriteString(l[1:])
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
	}
	for ; pos < len(oldLines); pos++ {
		out.WriteString(oldLines[pos])
	}
	return out.String()
}
