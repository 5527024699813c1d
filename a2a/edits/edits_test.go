package edits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

func TestKeepFinalNewline(t *testing.T) {
	for _, c := range []struct {
		name           string
		original       *string
		proposed, want string
		fixed          bool
	}{
		{"lost only the newline", ptr("one\ntwo\n"), "one\ntwo", "one\ntwo\n", true},
		{"changed and lost it", ptr("one\ntwo\n"), "one\n2", "one\n2\n", true},
		{"CRLF file", ptr("one\r\n"), "uno", "uno\r\n", true},
		{"kept it", ptr("one\n"), "uno\n", "", false},
		{"file had none", ptr("one"), "uno", "", false},
		{"new file", nil, "uno", "", false},
		{"emptied", ptr("one\n"), "", "", false},
	} {
		f, ok := KeepFinalNewline("/w/a.txt", c.original, c.proposed)
		if ok != c.fixed || (ok && f.Content != c.want) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, f.Content, ok, c.want, c.fixed)
		}
		if ok && (!strings.Contains(f.Note, "final newline") || strings.Contains(f.Diff, "No newline at end of file") == strings.HasSuffix(f.Content, "\n")) {
			t.Errorf("%s: note %q, diff %q", c.name, f.Note, f.Diff)
		}
	}
}

// Restore rewrites only the server's own trimmed text, keeping the mode.
func TestRestore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.txt")
	f, _ := KeepFinalNewline(path, ptr("one\n"), "uno")
	if err := os.WriteFile(path, []byte("uno"), 0o600); err != nil {
		t.Fatal(err)
	}
	if wrote, err := Restore(f); !wrote || err != nil {
		t.Fatalf("Restore = %v, %v", wrote, err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "uno\n" || (st.Mode().Perm() != 0o600 && os.PathSeparator == '/') {
		t.Fatalf("file %q mode %v", b, st.Mode())
	}
	if err := os.WriteFile(path, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if wrote, _ := Restore(f); wrote {
		t.Fatal("Restore overwrote a file that did not hold the server's text")
	}
}
