package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
)

// The states a diff/state notification reports (see docs/editor-link.md).
const (
	StateQueued            = protocol.StateQueued
	StateOrphaned          = protocol.StateOrphaned
	StateChangedOnDisk     = protocol.StateChangedOnDisk
	StateDeletedOnDisk     = protocol.StateDeletedOnDisk
	StateUnchangedOnDisk   = protocol.StateUnchangedOnDisk
	StateNeedsConfirmation = protocol.StateNeedsConfirmation
	StateExpired           = protocol.StateExpired
	StateUndelivered       = protocol.StateUndelivered
)

// DiffState is the params of the editor link's diff/state notification:
// something happened to a proposal that the user must see.
type DiffState = protocol.DiffStateParams

// DiffStateNotifier is implemented by editors that can show what happens to
// a proposal after it is shown.
type DiffStateNotifier interface {
	DiffState(DiffState)
}

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

func (s *Server) notifyState(st DiffState) {
	s.mu.Lock()
	e := s.editor
	s.mu.Unlock()
	if n, ok := e.(DiffStateNotifier); ok {
		n.DiffState(st)
		return
	}
	if a, ok := e.(Announcer); ok {
		a.Announce(Notice{Level: "warn", Message: st.Message})
	}
}

// unifiedFor is the unified diff from original to proposed for editor:
// empty, and not computed, for an editor that does not show it.
func unifiedFor(editor Editor, path string, original *string, proposed string) string {
	if !wantsUnified(editor) {
		return ""
	}
	return diffview.Unified(path, original, proposed)
}

func ownerLabel(owner string) string {
	if len(owner) > 6 {
		owner = owner[:6]
	}
	return owner
}

// show asks the editor to show d and, once shown, watches its file. On
// failure d is closed and the next queued proposal for its path, if any, is
// shown.
func (s *Server) show(ctx context.Context, d diffview.Diff) error {
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	if editor == nil {
		s.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
		return errors.New("no editor is attached to show the diff")
	}
	proposed, err := d.ProposedText()
	if err != nil {
		s.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
		return err
	}
	outside := !s.inWorkspace(d.Path)
	title := diffTitle(d.Path, d.IsNew())
	notice := ""
	if outside {
		title += " (outside the workspace)"
		notice = fmt.Sprintf("%s is outside every workspace folder of this editor.", d.Path)
	}
	dr := DiffRequest{
		FilePath:         d.Path,
		NewContent:       proposed,
		OriginalContent:  d.Original,
		UnifiedDiff:      unifiedFor(editor, d.Path, d.Original, proposed),
		Title:            title,
		DiffID:           d.ID,
		Owner:            ownerLabel(d.Owner),
		OutsideWorkspace: outside,
		Notice:           notice,
		Queued:           s.diffs.Queued(d.Path),
	}
	octx, cancel := context.WithTimeout(ctx, s.opts.EditorTimeout)
	defer cancel()
	err = editor.OpenDiff(octx, dr)
	if err == nil {
		s.watchDisk(d.Path, d.ID)
		// The editor holds both texts now: large ones leave memory until
		// needed again (closeDiff without an answer from the editor, a
		// change on disk).
		if err := s.diffs.Stow(d.Path, d.ID, s.spool); err != nil {
			s.log.Warn().Err(err).Str("path", d.Path).Msg("the proposal stays in memory")
		}
		return nil
	}
	s.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
	timedOut := errors.Is(err, context.DeadlineExceeded)
	s.later(func() {
		if timedOut {
			// The CLI has its error; a view the editor shows late must not
			// stay open to take a decision nobody waits for.
			cctx, cancel := context.WithTimeout(s.ctx, s.opts.EditorTimeout)
			_, cerr := editor.CloseDiff(cctx, d.Path)
			cancel()
			if cerr != nil {
				s.log.Warn().Err(cerr).Str("path", d.Path).Msg("could not close the expired diff in the editor")
			}
		}
		s.showNext(d.Path)
	})
	if timedOut {
		return fmt.Errorf("the editor did not show the diff within %s", s.opts.EditorTimeout)
	}
	return err
}

// later runs f on a goroutine the server waits for, or not at all when the
// server is not running.
func (s *Server) later(f func()) {
	s.mu.Lock()
	running := s.started && !s.closed
	s.mu.Unlock()
	if running {
		s.goFunc(f)
	}
}

// showNext shows the first proposal queued for path, now that the one
// before it is decided. A proposal that cannot be shown is rejected to its
// CLI, which is waiting for an answer.
func (s *Server) showNext(path string) {
	d, ok := s.diffs.Next(path)
	if !ok {
		return
	}
	// The file may have changed since the proposal was queued (the first
	// one was applied): show it against the file as it is now.
	if cur, err := diffview.ReadFile(d.Path, nil); err == nil {
		if r := s.diffs.Rebase(d.Path, d.ID, cur); r.ID != 0 {
			d = r
		}
	}
	if err := s.show(s.ctx, d); err != nil {
		s.log.Warn().Err(err).Str("path", d.Path).Msg("queued proposal could not be shown; rejected")
		s.announce(Notice{Level: "warn", Message: fmt.Sprintf("A queued proposal for %s could not be shown (%v); Gemini CLI was told it was rejected.", filepath.Base(d.Path), err)})
		s.deliver(d, false, "")
	}
}

// Accept reports that the user accepted the diff shown for path with content
// (the proposal including their own edits). It returns false, and writes
// nothing, when no diff is shown for path.
func (s *Server) Accept(path, content string) bool {
	return s.Decide(Decision{FilePath: path, Accepted: true, Content: content})
}

// Reject reports that the user rejected the diff shown for path. It returns
// false when no diff is shown for path.
func (s *Server) Reject(path string) bool {
	return s.Decide(Decision{FilePath: path})
}

// Decide takes the user's decision on a proposal and sends it to the CLI
// session that made the proposal, and to no other: the CLI matches decisions
// by file path alone, so any other session waiting on the same path would
// take it as its own. It returns false when the decision was refused (the
// proposal is unknown or expired, or the file changed on disk and the user
// did not confirm); the editor is told why.
func (s *Server) Decide(dc Decision) bool {
	d, ok := s.diffs.Get(dc.FilePath)
	if ok && dc.DiffID != 0 && d.ID != dc.DiffID {
		ok = false
	}
	if ok && dc.DiffID == 0 && dc.Shown != 0 && d.ID != dc.Shown {
		ok = false
	}
	if ok && dc.Accepted && dc.DiffID != 0 && !dc.OverDiskChange {
		// Look at the file now rather than trust the watcher to have seen
		// a change made a moment ago.
		s.disk.Check(d.Path, d.ID)
		d, ok = s.diffs.Get(dc.FilePath)
		ok = ok && d.ID == dc.DiffID
	}
	if ok && dc.Accepted && dc.DiffID != 0 && d.Disk != diffview.Unchanged && !dc.OverDiskChange {
		msg := fmt.Sprintf("%s changed on disk after this proposal was shown; accepting would overwrite that change. Confirm to accept anyway.", filepath.Base(d.Path))
		if d.Disk == diffview.Deleted {
			msg = fmt.Sprintf("%s was deleted on disk after this proposal was shown; accepting would create it again. Confirm to accept anyway.", filepath.Base(d.Path))
		}
		s.notifyState(DiffState{FilePath: d.Path, DiffID: d.ID, State: StateNeedsConfirmation, Message: msg})
		return false
	}
	to := diffview.Rejected
	if dc.Accepted {
		to = diffview.Accepted
	}
	if ok {
		d, ok = s.diffs.ResolveID(d.Path, d.ID, to)
	}
	if !ok {
		s.log.Info().Str("path", dc.FilePath).Uint64("diffId", dc.DiffID).Str("decision", to.String()).Msg("decision refused: no such proposal is open (late or unknown)")
		if dc.Accepted {
			content := dc.Content
			s.notifyState(DiffState{FilePath: dc.FilePath, DiffID: dc.DiffID, State: StateExpired, Content: &content,
				Message: fmt.Sprintf("This proposal for %s expired; nothing was written.", filepath.Base(dc.FilePath))})
		}
		return false
	}
	s.disk.Unwatch(d.ID)
	s.log.Info().Str("path", d.Path).Int("bytes", len(dc.Content)).Msg("diff " + to.String())
	if d.Orphaned {
		if dc.Accepted {
			s.lost(d, true, dc.Content)
		}
	} else {
		s.deliver(d, dc.Accepted, dc.Content)
	}
	s.later(func() { s.showNext(d.Path) })
	return true
}

// deliver queues the decision on d's owner session. It counts as delivered
// once the CLI has read it; if the session ends first, the editor is told.
func (s *Server) deliver(d diffview.Diff, accepted bool, content string) {
	method, params := methodDiffRejected, map[string]string{"filePath": d.Path}
	if accepted {
		method, params = methodDiffAccepted, map[string]string{"filePath": d.Path, "content": content}
	}
	data, err := json.Marshal(params)
	if err != nil {
		s.log.Error().Err(err).Msg("encode decision")
		return
	}
	n := note{method: method, params: data, fate: &fate{lost: func() { s.lost(d, accepted, content) }}}
	s.mu.Lock()
	sess := s.sessions[d.Owner]
	if s.closed || sess == nil {
		s.mu.Unlock()
		s.lost(d, accepted, content)
		return
	}
	// Queued while s.mu is held, so that a session ending meanwhile hands
	// it back (to lost) instead of dropping it.
	sess.push(n)
	s.mu.Unlock()
}

// lost tells the editor that a decision reached no CLI.
func (s *Server) lost(d diffview.Diff, accepted bool, content string) {
	base := filepath.Base(d.Path)
	s.log.Warn().Str("path", d.Path).Bool("accepted", accepted).Msg("decision not delivered: the proposing CLI session is gone")
	st := DiffState{FilePath: d.Path, DiffID: d.ID, State: StateUndelivered,
		Message: fmt.Sprintf("Your decision on %s did not reach the Gemini CLI session that proposed it (it is gone); nothing was written.", base)}
	if accepted {
		st.Content = &content
		st.Message = fmt.Sprintf("Your accepted change to %s did not reach the Gemini CLI session that proposed it (it is gone); nothing was written. The accepted text is kept so you can save it yourself.", base)
	}
	s.notifyState(st)
}

// route takes a decision that no session could write and that carries no
// handler of its own; every diff decision has one, so this only logs.
func (s *Server) route(n note) {
	s.log.Warn().Str("method", n.method).Msg("notification not delivered: its session ended")
}

// queueChanged tells the editor how many proposals now wait behind the one
// shown for path, after one left the queue without being shown.
func (s *Server) queueChanged(path string) {
	if d, ok := s.diffs.Get(path); ok {
		s.notifyState(DiffState{FilePath: d.Path, DiffID: d.ID, State: StateQueued, Queued: s.diffs.Queued(path)})
	}
}

// orphanProposals tells the editor that owner's open proposals can no
// longer reach anyone.
func (s *Server) orphanProposals(owner string) {
	shown, unqueued := s.diffs.Orphan(owner)
	for _, path := range unqueued {
		s.queueChanged(path)
	}
	for _, d := range shown {
		s.disk.Unwatch(d.ID)
		s.log.Info().Str("path", d.Path).Msg("proposal orphaned: its CLI session is gone")
		s.notifyState(DiffState{FilePath: d.Path, DiffID: d.ID, State: StateOrphaned,
			Message: fmt.Sprintf("The Gemini CLI session that proposed this change to %s is gone: accepting writes nothing. Save the proposed text yourself if you want it.", filepath.Base(d.Path))})
	}
}

// watchDisk starts watching the file of diff id for changes made outside
// the diff.
func (s *Server) watchDisk(path string, id uint64) {
	if err := s.disk.Watch(path, id); err != nil {
		s.log.Warn().Err(err).Str("path", path).Msg("changes on disk to this file will not be noticed")
	}
}

// diskChanged tells the editor that the file of a shown proposal changed
// on disk, was deleted, or is back to what it was.
func (s *Server) diskChanged(c diffview.DiskChange) {
	d, cur, path := c.Diff, c.Current, c.Diff.Path
	disk := d.Disk
	base := filepath.Base(path)
	st := DiffState{FilePath: d.Path, DiffID: d.ID, DiskContent: cur}
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	if wantsUnified(editor) {
		if proposed, err := d.ProposedText(); err == nil {
			st.UnifiedDiff = diffview.Unified(d.Path, cur, proposed)
		} else {
			// The editor still shows the proposal and the file as it is
			// now; only the diff between them is missing.
			s.log.Warn().Err(err).Str("path", path).Msg("the diff against the file on disk cannot be computed")
		}
	}
	switch disk {
	case diffview.Changed:
		st.State = StateChangedOnDisk
		st.Message = fmt.Sprintf("%s changed on disk while this proposal is open; the original side now shows the file as it is. Accepting will overwrite that change.", base)
	case diffview.Deleted:
		st.State = StateDeletedOnDisk
		st.Message = fmt.Sprintf("%s was deleted on disk while this proposal is open. Accepting will create it again.", base)
	default:
		st.State = StateUnchangedOnDisk
		st.Message = fmt.Sprintf("%s on disk is back to what it was when this proposal was shown.", base)
	}
	s.log.Info().Str("path", path).Str("disk", st.State).Msg("proposed file changed on disk")
	s.notifyState(st)
}
