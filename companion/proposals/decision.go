package proposals

// Decision is the user's answer to a proposal, as the editor reports it.
type Decision struct {
	FilePath string
	// DiffID names the proposal answered; 0 means whichever is shown for
	// FilePath (plugins that predate diff IDs).
	DiffID   uint64
	Accepted bool
	Content  string
	// OverDiskChange says the user chose to accept although the file
	// changed or was deleted on disk since the proposal was shown.
	OverDiskChange bool
	// Shown, for a decision without DiffID, is the proposal whose view the
	// editor showed last for FilePath when it decided (0: not known;
	// NoneShown: that proposal has ended). The decision is refused when
	// another proposal is open now: one the CLI made while the decision was
	// on its way, which the user never saw.
	Shown uint64
}

// NoneShown is Decision.Shown from an editor that shows no open proposal
// for the file: the one it showed last has ended, or it has shown none.
// The decision is refused. Diff IDs count up from 1 and never reach it.
const NoneShown = ^uint64(0)

// Verdict is what became of a Decision.
type Verdict int

const (
	// Taken: the decision ends the proposal; it went to the CLI session
	// that made it (or, if that session is gone, the editor was told).
	Taken Verdict = iota
	// NeedsConfirmation: an accept of a file that changed or was deleted
	// on disk since the proposal was shown. The editor was told why; the
	// proposal is still open, and a Decision with OverDiskChange takes it.
	NeedsConfirmation
	// Refused: no such proposal is open (decided, closed, replaced, or
	// unknown). Nothing was sent to any CLI; for an accept the editor was
	// told, with the text, that the proposal expired.
	Refused
)

func (v Verdict) String() string {
	switch v {
	case Taken:
		return "taken"
	case NeedsConfirmation:
		return "needs confirmation"
	case Refused:
		return "refused"
	}
	return "Verdict(?)"
}

// Delivery is a decision on its way to the CLI that made the proposal: the
// ide/diffAccepted or ide/diffRejected notification it gets.
type Delivery struct {
	FilePath string
	Accepted bool
	// Content is the accepted text (with the user's edits).
	Content string
}

// Sessions is how proposals reach the CLI sessions that make them: the
// only thing they need of the MCP server.
type Sessions interface {
	// Deliver sends the decision to the session owner, and to no other:
	// the CLI matches decisions by file path alone, so any other session
	// waiting on the same path would take it as its own. lost is called,
	// once, if it reaches no CLI (that session is gone, or ends before its
	// CLI has read the decision).
	Deliver(owner string, d Delivery, lost func())
}
