package diffview

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// bigText returns a text of at least n bytes that is not valid UTF-8 in
// places and holds NULs, CRs and astral characters: it must come back from
// the spool byte for byte.
func bigText(n int, seed byte) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("line ")
		b.WriteByte('0' + byte(i%10))
		b.WriteByte(seed)
		b.WriteString(" \x00 \xff\xfe 😀 \r\n")
	}
	return b.String()
}

func TestStowMovesLargeTextsOutOfMemoryAndBack(t *testing.T) {
	sp := NewSpool(t.TempDir())
	defer sp.Close()
	r := NewRegistry()
	orig, prop := bigText(SpoolMin+10, 'a'), bigText(2*SpoolMin, 'b')
	d, _ := r.Propose("/w/big.txt", "A", &orig, prop)
	if err := r.Stow(d.Path, d.ID, sp); err != nil {
		t.Fatal(err)
	}
	got, ok := r.Get("/w/big.txt")
	if !ok || !got.Stowed() || got.Proposed != "" || got.Original != nil || got.OriginalPrint == nil {
		t.Fatalf("after Stow: stowed %v, proposed %d bytes, original in memory %v, print %v", got.Stowed(), len(got.Proposed), got.Original != nil, got.OriginalPrint)
	}
	if sp.Len() != 1 {
		t.Fatalf("spool holds %d texts, want 1", sp.Len())
	}
	if text, err := got.ProposedText(); err != nil || text != prop {
		t.Fatalf("read back: %d bytes, equal %v, err %v", len(text), text == prop, err)
	}
	// What checkDisk needs from the original: existence and equality.
	same := strings.Clone(orig)
	other := strings.Replace(orig, "line 5a", "line 5z", 1)
	if got.IsNew() || !got.OriginalIs(&same) || got.OriginalIs(&other) || got.OriginalIs(nil) || got.OriginalIs(&prop) {
		t.Fatal("the stowed original no longer compares as the original")
	}
	// Stowing twice is harmless.
	if err := r.Stow(d.Path, d.ID, sp); err != nil || sp.Len() != 1 {
		t.Fatalf("second Stow: %v, %d texts", err, sp.Len())
	}
	// A decision ends the proposal and its file.
	if _, ok := r.Resolve("/w/big.txt", Accepted); !ok || sp.Len() != 0 {
		t.Fatalf("after Resolve the spool holds %d texts", sp.Len())
	}
}

func TestStowLeavesSmallAndUnshownDiffsAlone(t *testing.T) {
	sp := NewSpool(t.TempDir())
	defer sp.Close()
	r := NewRegistry()
	small := "v1"
	d, _ := r.Propose("/w/a.go", "A", &small, "v2")
	if err := r.Stow(d.Path, d.ID, sp); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("/w/a.go"); got.Stowed() || got.Proposed != "v2" || got.Original == nil {
		t.Fatalf("a small diff was stowed: %+v", got)
	}
	// Queued proposals stay in memory until shown.
	big := bigText(SpoolMin, 'q')
	q, _ := r.Propose("/w/a.go", "B", nil, big)
	if err := r.Stow(q.Path, q.ID, sp); err != nil || sp.Len() != 0 {
		t.Fatalf("a queued diff was stowed: %v, %d texts", err, sp.Len())
	}
	// A new file stays new once stowed.
	n, _ := r.Propose("/w/new.txt", "A", nil, big)
	if err := r.Stow(n.Path, n.ID, sp); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("/w/new.txt"); !got.Stowed() || !got.IsNew() || !got.OriginalIs(nil) {
		t.Fatalf("stowed new file: stowed %v new %v", got.Stowed(), got.IsNew())
	}
}

func TestReplacedAndClosedDiffsReleaseTheirFiles(t *testing.T) {
	sp := NewSpool(t.TempDir())
	defer sp.Close()
	r := NewRegistry()
	first := bigText(SpoolMin, '1')
	d, _ := r.Propose("/w/f", "A", nil, first)
	_ = r.Stow(d.Path, d.ID, sp)
	second := bigText(SpoolMin, '2')
	d2, replaced := r.Propose("/w/f", "A", nil, second)
	if replaced == nil || sp.Len() != 0 {
		t.Fatalf("replacing did not release the old text: %d texts", sp.Len())
	}
	_ = r.Stow(d2.Path, d2.ID, sp)
	got, shown, ok, err := r.Close("/w/f", "A")
	if err != nil || !ok || !shown {
		t.Fatalf("Close: %v %v %v", shown, ok, err)
	}
	// The caller of Close can still read the text, until it releases it.
	if text, err := got.ProposedText(); err != nil || text != second {
		t.Fatalf("closed diff's text: equal %v, %v", text == second, err)
	}
	got.Release()
	got.Release()
	if sp.Len() != 0 {
		t.Fatalf("released diff still in the spool")
	}
	if _, err := got.ProposedText(); err == nil || !strings.Contains(err.Error(), "cannot be read back") {
		t.Fatalf("read after release: %v", err)
	}
}

func TestSpoolFilesArePrivateAndGoneAfterClose(t *testing.T) {
	parent := t.TempDir()
	sp := NewSpool(parent)
	r := NewRegistry()
	text := bigText(SpoolMin, 'p')
	d, _ := r.Propose("/w/p", "A", nil, text)
	if err := r.Stow(d.Path, d.ID, sp); err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(parent, "gemini-ide-companion-proposals-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("spool directory: %v %v", dirs, err)
	}
	st, err := os.Stat(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if st.Mode().Perm() != 0o700 {
			t.Fatalf("spool directory mode %v, want 0700", st.Mode().Perm())
		}
		// Unlinked at once: nothing on disk to find or leave behind.
		if names, _ := os.ReadDir(dirs[0]); len(names) != 0 {
			t.Fatalf("spool directory lists %d files", len(names))
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Fatalf("spool directory after Close: %v", err)
	}
	got, _ := r.Get("/w/p")
	if _, err := got.ProposedText(); err == nil {
		t.Fatal("a text read back after the spool closed")
	}
	// A closed spool refuses new texts; the diff stays in memory.
	d2, _ := r.Propose("/w/q", "A", nil, text)
	if err := r.Stow(d2.Path, d2.ID, sp); err == nil {
		t.Fatal("Stow into a closed spool succeeded")
	}
	if got, _ := r.Get("/w/q"); got.Stowed() || got.Proposed != text {
		t.Fatal("a diff that could not be stowed lost its text")
	}
}

func TestSpoolDetectsAFileThatNoLongerHoldsItsText(t *testing.T) {
	sp := NewSpool(t.TempDir())
	defer sp.Close()
	r := NewRegistry()
	text := bigText(SpoolMin, 'c')
	d, _ := r.Propose("/w/c", "A", nil, text)
	if err := r.Stow(d.Path, d.ID, sp); err != nil {
		t.Fatal(err)
	}
	got, _ := r.Get("/w/c")
	// Something overwrites a byte of the file, then cuts it short.
	if _, err := got.stored.f.WriteAt([]byte("X"), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := got.ProposedText(); err == nil || !strings.Contains(err.Error(), "no longer holds") {
		t.Fatalf("changed spool file: %v", err)
	}
	if err := got.stored.f.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if _, err := got.ProposedText(); err == nil || !strings.Contains(err.Error(), "of") {
		t.Fatalf("truncated spool file: %v", err)
	}
}

// BenchmarkStow measures moving a shown 16 MiB proposal over a 16 MiB file
// out of memory: writing the proposed text and hashing both.
func BenchmarkStow(b *testing.B) {
	sp := NewSpool(b.TempDir())
	defer sp.Close()
	r := NewRegistry()
	orig, prop := bigText(16<<20, 'o'), bigText(16<<20, 'p')
	b.SetBytes(int64(len(orig) + len(prop)))
	for b.Loop() {
		d, _ := r.Propose("/w/f", "A", &orig, prop)
		if err := r.Stow(d.Path, d.ID, sp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadBack measures reading a stowed 16 MiB proposal back.
func BenchmarkReadBack(b *testing.B) {
	sp := NewSpool(b.TempDir())
	defer sp.Close()
	r := NewRegistry()
	prop := bigText(16<<20, 'p')
	d, _ := r.Propose("/w/f", "A", nil, prop)
	if err := r.Stow(d.Path, d.ID, sp); err != nil {
		b.Fatal(err)
	}
	got, _ := r.Get("/w/f")
	b.SetBytes(int64(len(prop)))
	for b.Loop() {
		if _, err := got.ProposedText(); err != nil {
			b.Fatal(err)
		}
	}
}
