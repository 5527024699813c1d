package diffview

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// contextLines is how many unchanged lines surround each hunk, as in
// `diff -u`.
const contextLines = 3

// MaxLineDiff is the most lines (old and new together, past the lines the
// two texts share at their start and end) that are diffed line by line.
// go-diff maps each distinct line to one rune and panics past about 1.1
// million of them; a change that large is shown as one replacement.
const MaxLineDiff = 1 << 20

// Unified returns a unified diff (the format of `diff -u` and `git diff`)
// from original to proposed, labelled with path. A nil original means the
// file is new. The text is empty when nothing changed.
func Unified(path string, original *string, proposed string) string {
	text, _ := unified(path, original, proposed)
	return text
}

// unified is Unified that also reports whether the changed region was
// diffed line by line (exact) or, being over MaxLineDiff lines, shown
// coarsely as the old lines all removed and the new ones all added, under a
// line saying so. Both are valid diffs that turn original into proposed.
func unified(path string, original *string, proposed string) (text string, exact bool) {
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
	w := window(oldText, proposed)
	oldLines := splitLines(oldText[w.start:w.oldEnd])
	newLines := splitLines(proposed[w.start:w.newEnd])
	ops, exact := lineOps(oldLines, newLines)

	var b strings.Builder
	if len(oldLines) == 0 || len(newLines) == 0 {
		// All added or all removed: the text is every line once more.
		b.Grow(64 + 2*len(path) + w.oldEnd + w.newEnd - 2*w.start + len(oldLines) + len(newLines))
	}
	if !exact {
		// Text before the "---" header is ignored by patch and git apply,
		// and tells a reader why the diff is coarse.
		fmt.Fprintf(&b, "Changed region over %d lines: shown as one replacement, not line by line.\n", MaxLineDiff)
	}
	fmt.Fprintf(&b, "--- %s\n+++ b%s\n", oldLabel, path)
	for _, h := range hunks(ops) {
		writeHunk(&b, h, ops, oldLines, newLines, w.line)
	}
	return b.String(), exact
}

// span is the part of two texts a diff needs to look at: from start (the
// same in both) to oldEnd and newEnd. Outside it the texts are the same
// whole lines, and no nearer than contextLines to a change. line is the
// number of lines before start.
type span struct {
	start, oldEnd, newEnd, line int
}

// window finds the span of a and b that differs, widened by contextLines
// lines on each side: a proposal usually changes a small part of a large
// file, and the diff then costs time and memory for that part only.
func window(a, b string) span {
	// The common run of whole lines at the start.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	head := strings.LastIndexByte(a[:p], '\n') + 1
	// The common run of whole lines at the end, not overlapping head.
	k := 0
	for k < min(len(a), len(b))-head && a[len(a)-1-k] == b[len(b)-1-k] {
		k++
	}
	lineStart := func(t string, i int) bool { return i == head || t[i-1] == '\n' }
	tailA, tailB := len(a)-k, len(b)-k
	if !lineStart(a, tailA) || !lineStart(b, tailB) {
		skip := strings.IndexByte(a[tailA:], '\n') + 1
		if skip == 0 {
			skip = k
		}
		tailA += skip
		tailB += skip
	}
	// contextLines lines of context on each side.
	start := head
	for n := 0; n < contextLines && start > 0; n++ {
		start = strings.LastIndexByte(a[:start-1], '\n') + 1
	}
	after := 0
	for n := 0; n < contextLines && tailA+after < len(a); n++ {
		i := strings.IndexByte(a[tailA+after:], '\n')
		if i < 0 {
			after = len(a) - tailA
			break
		}
		after += i + 1
	}
	return span{start: start, oldEnd: tailA + after, newEnd: tailB + after, line: strings.Count(a[:start], "\n")}
}

// op is one line-level edit: a run of n lines kept, deleted or inserted.
type op struct {
	kind diffmatchpatch.Operation
	n    int
}

// lineOps diffs two texts, given as lines, line by line. Lines the two
// share at the start and the end are counted directly (a proposal usually
// changes a small middle part of a large file); go-diff's line mode diffs
// the rest: lines are mapped to single runes, diffed, and the runs counted
// back in lines. A rest of over MaxLineDiff lines is not diffed: it is
// reported as deleted and inserted whole, and exact is false.
func lineOps(a, b []string) (ops []op, exact bool) {
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

// splitLines splits text into lines that keep their newline, the way
// go-diff's line mode counts them.
func splitLines(s string) []string {
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
type hunk struct {
	from, to int // op indexes of the first and last+1 changed runs
}

// hunks groups changed runs that are close enough to share context.
func hunks(ops []op) []hunk {
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

// writeHunk writes hunk h; base is the number of the first line of
// oldLines and newLines in their texts.
func writeHunk(b *strings.Builder, h hunk, ops []op, oldLines, newLines []string, base int) {
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
	fmt.Fprintf(b, "@@ -%s +%s @@\n", rangeSpec(base+oldStart, oldCount), rangeSpec(base+newStart, newCount))
	for _, l := range oldLines[oldStart : oldStart+lead] {
		writeLine(b, ' ', l)
	}
	o, n := oldPos, newPos
	for _, op := range ops[h.from:h.to] {
		switch op.kind {
		case diffmatchpatch.DiffEqual:
			for _, l := range oldLines[o : o+op.n] {
				writeLine(b, ' ', l)
			}
			o += op.n
			n += op.n
		case diffmatchpatch.DiffDelete:
			for _, l := range oldLines[o : o+op.n] {
				writeLine(b, '-', l)
			}
			o += op.n
		case diffmatchpatch.DiffInsert:
			for _, l := range newLines[n : n+op.n] {
				writeLine(b, '+', l)
			}
			n += op.n
		}
	}
	for _, l := range oldLines[o : o+trail] {
		writeLine(b, ' ', l)
	}
}

// rangeSpec formats a hunk range the way diff -u does: 1-based start, count
// omitted when 1, start one before the hunk when the range is empty.
func rangeSpec(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func writeLine(b *strings.Builder, prefix byte, line string) {
	b.WriteByte(prefix)
	if strings.HasSuffix(line, "\n") {
		b.WriteString(line)
		return
	}
	b.WriteString(line)
	b.WriteString("\n\\ No newline at end of file\n")
}
