package diffview

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// The unified diff as it was before it was windowed: every line of both
// texts split and diffed. The windowed one must write the same text.

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
	oldLines := refSplitLines(oldText)
	newLines := refSplitLines(proposed)
	ops, exact := refLineOps(oldLines, newLines)

	var b strings.Builder
	if !exact {
		// Text before the "---" header is ignored by patch and git apply,
		// and tells a reader why the diff is coarse.
		fmt.Fprintf(&b, "Changed region over %d lines: shown as one replacement, not line by line.\n", MaxLineDiff)
	}
	fmt.Fprintf(&b, "--- %s\n+++ b%s\n", oldLabel, path)
	for _, h := range refHunks(ops) {
		refWriteHunk(&b, h, ops, oldLines, newLines)
	}
	return b.String(), exact
}

// op is one line-level edit: a run of n lines kept, deleted or inserted.

// refLineOps diffs two texts, given as lines, line by line. Lines the two
// share at the start and the end are counted directly (a proposal usually
// changes a small middle part of a large file); go-diff's line mode diffs
// the rest: lines are mapped to single runes, diffed, and the runs counted
// back in lines. A rest of over MaxLineDiff lines is not diffed: it is
// reported as deleted and inserted whole, and exact is false.
func refLineOps(a, b []string) (ops []op, exact bool) {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	exact = true
	add := func(kind diffmatchpatch.Operation, n int) {
		if n == 0 {
			return
		}
		if k := len(ops); k > 0 && ops[k-1].kind == kind {
			ops[k-1].n += n
			return
		}
		ops = append(ops, op{kind: kind, n: n})
	}
	add(diffmatchpatch.DiffEqual, pre)
	midA := strings.Join(a[pre:len(a)-suf], "")
	midB := strings.Join(b[pre:len(b)-suf], "")
	switch {
	case midA == "":
		add(diffmatchpatch.DiffInsert, len(b)-pre-suf)
	case midB == "":
		add(diffmatchpatch.DiffDelete, len(a)-pre-suf)
	case len(a)+len(b)-2*(pre+suf) > MaxLineDiff:
		exact = false
		add(diffmatchpatch.DiffDelete, len(a)-pre-suf)
		add(diffmatchpatch.DiffInsert, len(b)-pre-suf)
	default:
		dmp := diffmatchpatch.New()
		ra, rb, _ := dmp.DiffLinesToRunes(midA, midB)
		for _, d := range dmp.DiffMainRunes(ra, rb, false) {
			add(d.Type, utf8.RuneCountInString(d.Text))
		}
	}
	add(diffmatchpatch.DiffEqual, suf)
	return ops, exact
}

// refSplitLines splits text into lines that keep their newline, the way
// go-diff's line mode counts them.
func refSplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// hunk is a range of ops [from, to) plus the context around them.

// refHunks groups changed runs that are close enough to share context.
func refHunks(ops []op) []hunk {
	var out []hunk
	for i, o := range ops {
		if o.kind == diffmatchpatch.DiffEqual {
			continue
		}
		if n := len(out); n > 0 {
			// Merge with the previous hunk if the equal run between is short.
			gap := 0
			for j := out[n-1].to; j < i; j++ {
				gap += ops[j].n
			}
			if gap <= 2*contextLines {
				out[n-1].to = i + 1
				continue
			}
		}
		out = append(out, hunk{from: i, to: i + 1})
	}
	return out
}

func refWriteHunk(b *strings.Builder, h hunk, ops []op, oldLines, newLines []string) {
	// Line positions (0-based) at the start of op h.from.
	oldPos, newPos := 0, 0
	for _, o := range ops[:h.from] {
		if o.kind != diffmatchpatch.DiffInsert {
			oldPos += o.n
		}
		if o.kind != diffmatchpatch.DiffDelete {
			newPos += o.n
		}
	}
	lead := 0
	if h.from > 0 && ops[h.from-1].kind == diffmatchpatch.DiffEqual {
		lead = min(contextLines, ops[h.from-1].n)
	}
	trail := 0
	if h.to < len(ops) && ops[h.to].kind == diffmatchpatch.DiffEqual {
		trail = min(contextLines, ops[h.to].n)
	}
	oldStart, newStart := oldPos-lead, newPos-lead
	oldCount, newCount := lead+trail, lead+trail
	for _, o := range ops[h.from:h.to] {
		switch o.kind {
		case diffmatchpatch.DiffEqual:
			oldCount += o.n
			newCount += o.n
		case diffmatchpatch.DiffDelete:
			oldCount += o.n
		case diffmatchpatch.DiffInsert:
			newCount += o.n
		}
	}
	fmt.Fprintf(b, "@@ -%s +%s @@\n", refRangeSpec(oldStart, oldCount), refRangeSpec(newStart, newCount))
	for _, l := range oldLines[oldStart : oldStart+lead] {
		refWriteLine(b, ' ', l)
	}
	o, n := oldPos, newPos
	for _, op := range ops[h.from:h.to] {
		switch op.kind {
		case diffmatchpatch.DiffEqual:
			for _, l := range oldLines[o : o+op.n] {
				refWriteLine(b, ' ', l)
			}
			o += op.n
			n += op.n
		case diffmatchpatch.DiffDelete:
			for _, l := range oldLines[o : o+op.n] {
				refWriteLine(b, '-', l)
			}
			o += op.n
		case diffmatchpatch.DiffInsert:
			for _, l := range newLines[n : n+op.n] {
				refWriteLine(b, '+', l)
			}
			n += op.n
		}
	}
	for _, l := range oldLines[o : o+trail] {
		refWriteLine(b, ' ', l)
	}
}

// refRangeSpec formats a hunk range the way diff -u does: 1-based start, count
// omitted when 1, start one before the hunk when the range is empty.
func refRangeSpec(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func refWriteLine(b *strings.Builder, prefix byte, line string) {
	b.WriteByte(prefix)
	if strings.HasSuffix(line, "\n") {
		b.WriteString(line)
		return
	}
	b.WriteString(line)
	b.WriteString("\n\\ No newline at end of file\n")
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
		got, exact := UnifiedBounded("/w/f", orig, proposed)
		if got != want || exact != wantExact {
			t.Fatalf("old %q new %q:\nwindowed:\n%s\nwhole:\n%s", old, proposed, got, want)
		}
	}
}
