package agentpanel

import (
	"fmt"
	"strings"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// ContextMode says how the editor's context reaches the agent. Gemini CLI's
// A2A server 0.25.2 runs its core with ideMode off, so it never connects to
// an IDE companion whatever its environment says; the panel therefore sends
// the context as a second text part of every prompt.
const ContextMode = "prompt"

// contextText renders the editor's context (open files, most recent first;
// the active one with cursor and selection) as the text the agent gets with
// a prompt, or "" when no file is open.
func contextText(c idectx.IdeContext) string {
	if c.WorkspaceState == nil || len(c.WorkspaceState.OpenFiles) == 0 {
		return ""
	}
	files := append([]idectx.File(nil), c.WorkspaceState.OpenFiles...)
	// Newest first, as the user last looked at them.
	for i := range files {
		for j := i + 1; j < len(files); j++ {
			if files[j].Timestamp > files[i].Timestamp {
				files[i], files[j] = files[j], files[i]
			}
		}
	}
	var b strings.Builder
	b.WriteString("Context from the user's editor (open files, most recently used first):\n")
	for _, f := range files {
		fmt.Fprintf(&b, "- %s", f.Path)
		if f.IsActive {
			b.WriteString(" (active")
			if f.Cursor != nil {
				fmt.Fprintf(&b, ", cursor at line %d, character %d", f.Cursor.Line, f.Cursor.Character)
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
		if f.IsActive && f.SelectedText != nil && *f.SelectedText != "" {
			fmt.Fprintf(&b, "  Selected text in %s:\n```\n%s\n```\n", f.Path, *f.SelectedText)
		}
	}
	return b.String()
}
