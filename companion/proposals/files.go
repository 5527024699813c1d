package proposals

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// checkPath returns why path cannot name a file to propose a change to,
// or "".
func checkPath(path string) string {
	switch {
	case path == "":
		return "filePath is empty"
	case strings.ContainsRune(path, 0):
		return "filePath contains a NUL byte"
	case !filepath.IsAbs(path):
		return fmt.Sprintf("filePath %q is not absolute", path)
	case strings.HasSuffix(path, string(filepath.Separator)) || filepath.Base(path) == "." || filepath.Base(path) == "..":
		// Such a path can never be written as a file, whatever exists on
		// disk ("/a/missing/.." does not exist, yet cleans to "/a").
		return fmt.Sprintf("filePath %q names a directory, not a file", path)
	}
	return ""
}

// inWorkspace reports whether path lies in one of folders.
func inWorkspace(folders []string, path string) bool {
	for _, f := range folders {
		if fspath.Within(f, path) {
			return true
		}
	}
	return false
}

// diffTitle names the view of a proposal.
func diffTitle(path string, isNew bool) string {
	if isNew {
		return filepath.Base(path) + " (new file) ↔ proposed by Gemini CLI"
	}
	return filepath.Base(path) + " ↔ proposed by Gemini CLI"
}

// ownerLabel is the short label of the session that made a proposal.
func ownerLabel(owner string) string {
	if len(owner) > 6 {
		owner = owner[:6]
	}
	return owner
}

// unifiedFor is the unified diff from original to proposed for editor:
// empty, and not computed, for an editor that does not show it.
func unifiedFor(editor Editor, path string, original *string, proposed string) string {
	if !wantsUnified(editor) {
		return ""
	}
	return diffview.Unified(path, original, proposed)
}
