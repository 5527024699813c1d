package companion

import "context"

// DiffRequest is what an editor needs to show a proposed change: the
// params of the editor link's diff/open.
type DiffRequest struct {
	FilePath        string  `json:"filePath"`
	NewContent      string  `json:"newContent"`
	OriginalContent *string `json:"originalContent"`
	UnifiedDiff     string  `json:"unifiedDiff"`
	Title           string  `json:"title"`
	// DiffID names this proposal; plugins echo it in their decision so a
	// late answer for an earlier proposal of the same file is refused.
	DiffID uint64 `json:"diffId"`
	// Owner is a short label of the CLI session that made the proposal.
	Owner string `json:"owner"`
	// OutsideWorkspace is set when the file is under no workspace folder;
	// Notice then says so, for the plugin to show with the view.
	OutsideWorkspace bool   `json:"outsideWorkspace,omitempty"`
	Notice           string `json:"notice,omitempty"`
	// Queued counts proposals from other sessions waiting for this one.
	Queued int `json:"queued,omitempty"`
}

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

// Notice is what the user should hear about (a CLI connecting, a decision
// that could not be delivered). Editors that can show messages implement
// Announcer.
type Notice struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Announcer is implemented by editors that can tell the user things and show
// how many CLI sessions are connected.
type Announcer interface {
	Announce(Notice)
	ClientsChanged(connected int)
}
