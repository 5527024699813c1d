package diffview

import (
	"os"
	"strings"
	"testing"
)

// TestReadFileSharesAnUnchangedText: a file that still holds the text
// of the last proposal's original is not read into a second copy, and any
// difference (anywhere, or in length) reads it afresh.
func TestReadFileSharesAnUnchangedText(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f.txt"
	known := strings.Repeat("0123456789abcdef", 10000) // several read chunks
	cases := map[string]string{
		"same":         known,
		"first byte":   "X" + known[1:],
		"middle":       known[:70000] + "X" + known[70001:],
		"last byte":    known[:len(known)-1] + "X",
		"shorter":      known[:len(known)-1],
		"longer":       known + "!",
		"empty":        "",
		"other length": known[:40000],
	}
	for name, content := range cases {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path, &known)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *got != content {
			t.Fatalf("%s: read %d bytes that differ from the file", name, len(*got))
		}
		if shared := got == &known; shared != (name == "same") {
			t.Fatalf("%s: shared the known text: %v", name, shared)
		}
		if got, err := ReadFile(path, nil); err != nil || *got != content {
			t.Fatalf("%s: ReadFile without a known text: %v", name, err)
		}
	}
}
