package companion

import (
	"context"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// DiffRequest is what an editor needs to show a proposed change: the
// params of the editor link's diff/open.
type DiffRequest = protocol.DiffOpenParams

// Editor is whatever shows diffs to the user: an editor plugin over the
// editor link, or the standalone terminal reviewer. The user's decision comes
// back later through Server.Accept or Server.Reject.
type Editor interface {
	// OpenDiff shows the diff and returns once it is visible, or with the
	// reason it could not be shown.
	OpenDiff(ctx context.Context, req DiffRequest) error
	// CloseDiff closes the view for path and returns the proposed text as it
	// is now (with the user's edits), or nil if there is no such view.
	CloseDiff(ctx context.Context, path string) (*string, error)
}

// UnifiedDiffPreference is implemented by editors that may not show a
// unified diff (an editor-link plugin that said capabilities.unifiedDiff
// false). When WantsUnifiedDiff is false the companion does not compute
// one: DiffRequest.UnifiedDiff and DiffState.UnifiedDiff stay empty. Editors
// without the method get it.
type UnifiedDiffPreference interface {
	WantsUnifiedDiff() bool
}

// wantsUnified reports whether e shows unified diffs.
func wantsUnified(e Editor) bool {
	p, ok := e.(UnifiedDiffPreference)
	return !ok || p.WantsUnifiedDiff()
}

// Notice is what the user should hear about (a CLI connecting, a decision
// that could not be delivered): the params of the editor link's log.
// Editors that can show messages implement Announcer.
type Notice = protocol.LogParams

// Announcer is implemented by editors that can tell the user things and show
// how many CLI sessions are connected.
type Announcer interface {
	Announce(Notice)
	ClientsChanged(connected int)
}
