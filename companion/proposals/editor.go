package proposals

import (
	"context"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// Editor is whatever shows proposals to the user: an editor plugin over the
// editor link, or the standalone terminal reviewer. The user's decision
// comes back later through Proposals.Decide.
type Editor interface {
	// OpenDiff shows the proposal and returns once it is visible, or with
	// the reason it could not be shown.
	OpenDiff(ctx context.Context, req protocol.DiffOpenParams) error
	// CloseDiff closes the view for path and returns the proposed text as
	// it is now (with the user's edits), or nil if there is no such view.
	CloseDiff(ctx context.Context, path string) (*string, error)
}

// StateNotifier is implemented by editors that can show what happens to a
// proposal after it is shown (diff/state). Editors without it hear the
// message through Announcer, if they have that.
type StateNotifier interface {
	DiffState(protocol.DiffStateParams)
}

// Announcer is implemented by editors that can tell the user things.
type Announcer interface {
	Announce(protocol.LogParams)
}

// UnifiedDiffPreference is implemented by editors that may not show a
// unified diff (an editor-link plugin that said capabilities.unifiedDiff
// false). When WantsUnifiedDiff is false no unified diff is computed:
// DiffOpenParams.UnifiedDiff and DiffStateParams.UnifiedDiff stay empty.
// Editors without the method get it.
type UnifiedDiffPreference interface {
	WantsUnifiedDiff() bool
}

// wantsUnified reports whether e shows unified diffs.
func wantsUnified(e Editor) bool {
	p, ok := e.(UnifiedDiffPreference)
	return !ok || p.WantsUnifiedDiff()
}
