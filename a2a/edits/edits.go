// Package edits corrects a file edit that Gemini CLI's A2A server proposes
// before a user (the agent panel) or a supervising agent (the bridge) sees
// it, and makes the file on disk match what they approved.
//
// The server (0.25.2) trims leading and trailing whitespace off a write_file
// proposal over an existing file, and writes the trimmed text when the edit
// is approved: an agent's edit would silently drop the file's final newline.
// When the file ends with a newline and the proposal does not, the proposal
// shown keeps the file's final newline, says so, and once the server has
// written its trimmed text the newline is put back.
package edits

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
)

// Fix is a proposal with the file's final newline kept.
type Fix struct {
	// Path is the file.
	Path string
	// Proposed is the server's proposal (what it writes when approved).
	Proposed string
	// Content is the proposal with the file's final newline, and Diff the
	// unified diff from the file to it.
	Content string
	Diff    string
	// Note says so, in a sentence for the user.
	Note string
}

// KeepFinalNewline returns the proposal to show for an edit of path from
// original (the file's content, nil when it does not exist) to proposed,
// and whether it differs from proposed: when the file ends with a newline
// and the proposal does not, the file's newline ("\n" or "\r\n") is kept.
func KeepFinalNewline(path string, original *string, proposed string) (Fix, bool) {
	if original == nil || proposed == "" {
		return Fix{}, false
	}
	nl := ""
	switch {
	case strings.HasSuffix(*original, "\r\n"):
		nl = "\r\n"
	case strings.HasSuffix(*original, "\n"):
		nl = "\n"
	}
	if nl == "" || strings.HasSuffix(proposed, "\n") {
		return Fix{}, false
	}
	content := proposed + nl
	return Fix{
		Path:     path,
		Proposed: proposed,
		Content:  content,
		Diff:     diffview.Unified(path, original, content),
		Note: fmt.Sprintf("The agent's text for %s ended without the file's final newline (Gemini CLI's A2A server trims the end of a proposal); the newline is kept.",
			filepath.Base(path)),
	}, true
}

// Restore puts the final newline back once the server has written its
// trimmed proposal: when the file holds exactly f.Proposed it is rewritten
// as f.Content (its permissions kept). It reports whether it wrote; a file
// that holds anything else is left alone.
func Restore(f Fix) (bool, error) {
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return false, fmt.Errorf("keeping the final newline of %s: %w", f.Path, err)
	}
	if string(b) != f.Proposed {
		return false, nil
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(f.Path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.WriteFile(f.Path, []byte(f.Content), mode); err != nil {
		return false, fmt.Errorf("keeping the final newline of %s: %w", f.Path, err)
	}
	return true, nil
}
