package diffview_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
)

// benchText returns about size bytes of distinct numbered lines, the shape of
// source code as far as a line diff is concerned.
func benchText(size int) string {
	var b strings.Builder
	b.Grow(size + 80)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %07d: the quick brown fox jumps over the lazy dog, again.\n", i)
	}
	return b.String()[:size]
}

// changeEvery replaces every n-th line (n ≤ 0: only the middle one).
func changeEvery(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if n <= 0 {
		lines[len(lines)/2] = "this line was changed by the proposed edit\n"
		return strings.Join(lines, "")
	}
	for i := min(n/2, len(lines)/2); i < len(lines); i += n {
		lines[i] = fmt.Sprintf("changed line %d\n", i)
	}
	return strings.Join(lines, "")
}

var sizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}}

// BenchmarkUnified is the diff text sent with every diff/open: one changed
// line (the common edit), a change every 100 lines, and a new file.
func BenchmarkUnified(b *testing.B) {
	for _, sz := range sizes {
		if sz.n > 1<<20 && testing.Short() {
			continue
		}
		original := benchText(sz.n)
		cases := []struct {
			name     string
			original *string
			proposed string
		}{
			{"oneLine", &original, changeEvery(original, 0)},
			{"every100", &original, changeEvery(original, 100)},
			{"newFile", nil, original},
		}
		for _, c := range cases {
			b.Run(sz.name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.proposed)))
				b.ReportAllocs()
				for b.Loop() {
					if diffview.Unified("/w/f.txt", c.original, c.proposed) == "" {
						b.Fatal("empty diff")
					}
				}
			})
		}
	}
}

// BenchmarkRegistryOpen is the bookkeeping of one openDiff that replaces the
// previous proposal for the same file.
func BenchmarkRegistryOpen(b *testing.B) {
	r := diffview.NewRegistry()
	original := benchText(1 << 10)
	b.ReportAllocs()
	for b.Loop() {
		r.Open("/w/f.txt", &original, original)
	}
}
