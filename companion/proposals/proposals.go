// Package proposals is the one home of the changes Gemini CLI proposes: it
// shows them in the editor, queues one session's proposal behind another's
// for the same file, takes the user's decision, delivers it to the session
// that made the proposal, orphans the proposals of a session that went,
// and tells the editor when a proposed file changes on disk.
//
// It reaches the CLI sessions only through Sessions (deliver this decision
// to that session) and the editor only through Editor and the small
// interfaces beside it; the MCP tools call Propose and Withdraw.
package proposals

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// Options configure Proposals.
type Options struct {
	// EditorTimeout bounds how long the editor may take to show or close a
	// diff.
	EditorTimeout time.Duration
	// Workspace returns the editor's workspace folders now: a proposal
	// outside all of them is shown with a notice.
	Workspace func() []string
	// Sessions reach the CLI sessions that make proposals.
	Sessions Sessions
	// Logger receives the logs.
	Logger zerolog.Logger
}

// Proposals holds the proposals of every CLI session of one companion.
type Proposals struct {
	opts  Options
	log   zerolog.Logger
	diffs *diffview.Registry
	spool *diffview.Spool // large texts of shown proposals
	disk  *diffview.DiskWatch

	mu      sync.Mutex
	editor  Editor
	ctx     context.Context // of the running companion; nil before Start
	running bool
	wg      sync.WaitGroup
}

// New returns Proposals that show nothing until Start.
func New(opts Options) *Proposals {
	if opts.Workspace == nil {
		opts.Workspace = func() []string { return nil }
	}
	p := &Proposals{
		opts:  opts,
		log:   opts.Logger,
		diffs: diffview.NewRegistry(),
		spool: diffview.NewSpool(""),
	}
	p.disk = diffview.NewDiskWatch(p.diffs, p.diskChanged, func(path string, err error) {
		p.log.Debug().Err(err).Str("path", path).Msg("cannot read a proposed file after a change on disk")
	})
	return p
}

// SetEditor sets what shows proposals. Without one, Propose fails.
func (p *Proposals) SetEditor(e Editor) {
	p.mu.Lock()
	p.editor = e
	p.mu.Unlock()
}

func (p *Proposals) editorNow() Editor {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.editor
}

// Start lets the proposals run work of their own (the next queued proposal
// once one is decided, closing a view the editor showed too late) within
// ctx, the companion's life, and watch the files of shown proposals with
// dw (nil: changes on disk are seen only when a decision looks).
func (p *Proposals) Start(ctx context.Context, dw *dirwatch.Watcher) {
	p.mu.Lock()
	p.ctx, p.running = ctx, true
	p.mu.Unlock()
	p.disk.Attach(dw)
}

// Close stops watching files, waits for the work Start allowed (its
// context must have ended or be about to) and deletes the texts kept on
// disk. It is safe to call more than once, and without Start.
func (p *Proposals) Close() error {
	p.mu.Lock()
	p.running = false
	p.mu.Unlock()
	p.disk.Attach(nil)
	p.wg.Wait()
	return p.spool.Close()
}

// later runs f on a goroutine Close waits for, or not at all when the
// proposals are not running.
func (p *Proposals) later(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
}

// ShownID is the ID of the proposal on screen in the editor for path, or 0
// when there is none.
func (p *Proposals) ShownID(path string) uint64 {
	d, _ := p.diffs.Get(path)
	return d.ID
}

// Shown returns the paths with a proposal on screen, sorted.
func (p *Proposals) Shown() []string {
	open := p.diffs.Paths()
	slices.Sort(open)
	return open
}

// Propose takes owner's proposal of content for the file at path: it is
// shown in the editor, or queued behind another session's proposal for the
// same file, and replaces owner's own earlier one. It returns once the
// editor shows it (or it is queued); the error says, for the CLI, why it
// could not be.
func (p *Proposals) Propose(ctx context.Context, owner, path, content string) error {
	if why := checkPath(path); why != "" {
		p.log.Warn().Str("path", path).Str("reason", why).Msg("openDiff refused")
		return errors.New(why)
	}
	if !inWorkspace(p.opts.Workspace(), path) {
		p.log.Warn().Str("path", path).Msg("openDiff for a file outside the workspace folders")
	}
	// A file proposed again is usually unchanged on disk since the last
	// proposal read it: share that text instead of holding it twice.
	var known *string
	if d, ok := p.diffs.Get(path); ok {
		known = d.Original
	}
	original, err := diffview.ReadFile(path, known)
	if err != nil {
		p.log.Warn().Err(err).Str("path", path).Msg("openDiff refused")
		return err
	}
	if p.editorNow() == nil {
		return errors.New("no editor is attached to show the diff")
	}

	d, replaced := p.diffs.Propose(path, owner, original, content)
	if replaced != nil {
		// Unwatched once the new proposal watches the same file: the watch
		// on its folder then carries over instead of being dropped and
		// made again. Logged once, with "diff shown" below: a CLI that
		// proposes a file again replaces its own proposal, and a line each
		// would double the log writes of every such call.
		defer p.disk.Unwatch(replaced.ID)
	}
	if d.State == diffview.Queued {
		// Another session's proposal for this file is on screen: this one
		// waits its turn, and its CLI waits for the decision as usual.
		p.log.Info().Str("path", path).Msg("diff queued behind another session's proposal for the same file")
		p.notify(protocol.DiffStateParams{FilePath: path, DiffID: d.ID, State: protocol.StateQueued, Queued: p.diffs.Queued(path),
			Message: fmt.Sprintf("Another Gemini CLI session proposed a change to %s; it will be shown when you decide the one open now.", filepath.Base(path))})
		return nil
	}
	if err := p.show(ctx, d); err != nil {
		p.log.Warn().Str("path", path).Str("reason", err.Error()).Msg("diff could not be shown")
		return err
	}
	p.log.Info().Str("path", path).Bool("newFile", original == nil).Int("bytes", len(content)).
		Bool("replacedOwnProposal", replaced != nil).Msg("diff shown")
	return nil
}

// Withdraw ends owner's proposal for path (closeDiff), shown or queued, and
// returns its proposed text as the user left it in the editor, or as
// proposed when the editor does not say; nil when owner has no proposal
// for path.
func (p *Proposals) Withdraw(ctx context.Context, owner, path string) (*string, error) {
	if why := checkPath(path); why != "" {
		return nil, errors.New(why)
	}
	// Close first: from here on a decision from the editor for this diff
	// is late and refused, so none can follow the close.
	d, shown, ok, err := p.diffs.Close(path, owner)
	if errors.Is(err, diffview.ErrNotOwner) {
		p.log.Warn().Str("path", path).Msg("closeDiff refused: the diff belongs to another session")
		return nil, fmt.Errorf("the diff for %s was proposed by another Gemini CLI session; a session can close only its own proposals", path)
	}
	defer d.Release()
	var content *string
	if ok && shown {
		p.disk.Unwatch(d.ID)
		if editor := p.editorNow(); editor != nil {
			cctx, cancel := context.WithTimeout(ctx, p.opts.EditorTimeout)
			got, err := editor.CloseDiff(cctx, path)
			cancel()
			if err != nil {
				p.log.Warn().Err(err).Str("path", path).Msg("editor did not close the diff; returning the original proposal")
			} else if got != nil {
				content = got
			}
		}
		p.log.Info().Str("path", path).Msg("diff closed by the CLI")
		p.later(func() { p.showNext(path) })
	} else if ok {
		p.log.Info().Str("path", path).Msg("queued diff withdrawn by the CLI")
		p.queueChanged(path)
	}
	if ok && content == nil {
		// The proposal as the CLI made it: the editor has no other text.
		proposed, err := d.ProposedText()
		if err != nil {
			p.log.Error().Err(err).Str("path", path).Msg("closeDiff cannot return the proposed text")
			return nil, fmt.Errorf("the diff was closed, but %v", err)
		}
		content = &proposed
	}
	return content, nil
}

// show asks the editor to show d and, once shown, watches its file. On
// failure d is closed and the next queued proposal for its path, if any, is
// shown.
func (p *Proposals) show(ctx context.Context, d diffview.Diff) error {
	editor := p.editorNow()
	if editor == nil {
		p.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
		return errors.New("no editor is attached to show the diff")
	}
	proposed, err := d.ProposedText()
	if err != nil {
		p.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
		return err
	}
	outside := !inWorkspace(p.opts.Workspace(), d.Path)
	title := diffTitle(d.Path, d.IsNew())
	notice := ""
	if outside {
		title += " (outside the workspace)"
		notice = fmt.Sprintf("%s is outside every workspace folder of this editor.", d.Path)
	}
	req := protocol.DiffOpenParams{
		FilePath:         d.Path,
		NewContent:       proposed,
		OriginalContent:  d.Original,
		UnifiedDiff:      unifiedFor(editor, d.Path, d.Original, proposed),
		Title:            title,
		DiffID:           d.ID,
		Owner:            ownerLabel(d.Owner),
		OutsideWorkspace: outside,
		Notice:           notice,
		Queued:           p.diffs.Queued(d.Path),
	}
	octx, cancel := context.WithTimeout(ctx, p.opts.EditorTimeout)
	defer cancel()
	err = editor.OpenDiff(octx, req)
	if err == nil {
		if err := p.disk.Watch(d.Path, d.ID); err != nil {
			p.log.Warn().Err(err).Str("path", d.Path).Msg("changes on disk to this file will not be noticed")
		}
		// The editor holds both texts now: large ones leave memory until
		// needed again (closeDiff without an answer from the editor, a
		// change on disk).
		if err := p.diffs.Stow(d.Path, d.ID, p.spool); err != nil {
			p.log.Warn().Err(err).Str("path", d.Path).Msg("the proposal stays in memory")
		}
		return nil
	}
	p.diffs.ResolveID(d.Path, d.ID, diffview.Closed)
	timedOut := errors.Is(err, context.DeadlineExceeded)
	p.later(func() {
		if timedOut {
			// The CLI has its error; a view the editor shows late must not
			// stay open to take a decision nobody waits for.
			cctx, cancel := context.WithTimeout(p.ctx, p.opts.EditorTimeout)
			_, cerr := editor.CloseDiff(cctx, d.Path)
			cancel()
			if cerr != nil {
				p.log.Warn().Err(cerr).Str("path", d.Path).Msg("could not close the expired diff in the editor")
			}
		}
		p.showNext(d.Path)
	})
	if timedOut {
		return fmt.Errorf("the editor did not show the diff within %s", p.opts.EditorTimeout)
	}
	return err
}

// showNext shows the first proposal queued for path, now that the one
// before it is decided. A proposal that cannot be shown is rejected to its
// CLI, which is waiting for an answer.
func (p *Proposals) showNext(path string) {
	d, ok := p.diffs.Next(path)
	if !ok {
		return
	}
	// The file may have changed since the proposal was queued (the first
	// one was applied): show it against the file as it is now.
	if cur, err := diffview.ReadFile(d.Path, nil); err == nil {
		if r := p.diffs.Rebase(d.Path, d.ID, cur); r.ID != 0 {
			d = r
		}
	}
	if err := p.show(p.ctx, d); err != nil {
		p.log.Warn().Err(err).Str("path", d.Path).Msg("queued proposal could not be shown; rejected")
		p.announce(fmt.Sprintf("A queued proposal for %s could not be shown (%v); Gemini CLI was told it was rejected.", filepath.Base(d.Path), err))
		p.deliver(d, false, "")
	}
}

// Decide takes the user's decision on a proposal and sends it to the CLI
// session that made the proposal. A decision that names its proposal
// (DiffID) is an accept only while the file on disk is as it was when the
// proposal was shown, or with OverDiskChange; otherwise the editor is told
// why and asked to confirm. The editor is told, too, when the decision is
// refused.
func (p *Proposals) Decide(dc Decision) Verdict {
	d, ok := p.diffs.Get(dc.FilePath)
	if ok && dc.DiffID != 0 && d.ID != dc.DiffID {
		ok = false
	}
	if ok && dc.DiffID == 0 && dc.Shown != 0 && d.ID != dc.Shown {
		ok = false
	}
	if ok && dc.Accepted && dc.DiffID != 0 && !dc.OverDiskChange {
		// Look at the file now rather than trust the watcher to have seen
		// a change made a moment ago.
		p.disk.Check(d.Path, d.ID)
		d, ok = p.diffs.Get(dc.FilePath)
		ok = ok && d.ID == dc.DiffID
	}
	if ok && dc.Accepted && dc.DiffID != 0 && d.Disk != diffview.Unchanged && !dc.OverDiskChange {
		msg := fmt.Sprintf("%s changed on disk after this proposal was shown; accepting would overwrite that change. Confirm to accept anyway.", filepath.Base(d.Path))
		if d.Disk == diffview.Deleted {
			msg = fmt.Sprintf("%s was deleted on disk after this proposal was shown; accepting would create it again. Confirm to accept anyway.", filepath.Base(d.Path))
		}
		p.notify(protocol.DiffStateParams{FilePath: d.Path, DiffID: d.ID, State: protocol.StateNeedsConfirmation, Message: msg})
		return NeedsConfirmation
	}
	to := diffview.Rejected
	if dc.Accepted {
		to = diffview.Accepted
	}
	if ok {
		d, ok = p.diffs.ResolveID(d.Path, d.ID, to)
	}
	if !ok {
		p.log.Info().Str("path", dc.FilePath).Uint64("diffId", dc.DiffID).Str("decision", to.String()).Msg("decision refused: no such proposal is open (late or unknown)")
		if dc.Accepted {
			content := dc.Content
			p.notify(protocol.DiffStateParams{FilePath: dc.FilePath, DiffID: dc.DiffID, State: protocol.StateExpired, Content: &content,
				Message: fmt.Sprintf("This proposal for %s expired; nothing was written.", filepath.Base(dc.FilePath))})
		}
		return Refused
	}
	p.disk.Unwatch(d.ID)
	p.log.Info().Str("path", d.Path).Int("bytes", len(dc.Content)).Msg("diff " + to.String())
	if d.Orphaned {
		if dc.Accepted {
			p.lost(d, true, dc.Content)
		}
	} else {
		p.deliver(d, dc.Accepted, dc.Content)
	}
	p.later(func() { p.showNext(d.Path) })
	return Taken
}

// deliver sends the decision on d to its owner session.
func (p *Proposals) deliver(d diffview.Diff, accepted bool, content string) {
	p.opts.Sessions.Deliver(d.Owner, Delivery{FilePath: d.Path, Accepted: accepted, Content: content},
		func() { p.lost(d, accepted, content) })
}

// lost tells the editor that a decision reached no CLI.
func (p *Proposals) lost(d diffview.Diff, accepted bool, content string) {
	base := filepath.Base(d.Path)
	p.log.Warn().Str("path", d.Path).Bool("accepted", accepted).Msg("decision not delivered: the proposing CLI session is gone")
	st := protocol.DiffStateParams{FilePath: d.Path, DiffID: d.ID, State: protocol.StateUndelivered,
		Message: fmt.Sprintf("Your decision on %s did not reach the Gemini CLI session that proposed it (it is gone); nothing was written.", base)}
	if accepted {
		st.Content = &content
		st.Message = fmt.Sprintf("Your accepted change to %s did not reach the Gemini CLI session that proposed it (it is gone); nothing was written. The accepted text is kept so you can save it yourself.", base)
	}
	p.notify(st)
}

// queueChanged tells the editor how many proposals now wait behind the one
// shown for path, after one left the queue without being shown.
func (p *Proposals) queueChanged(path string) {
	if d, ok := p.diffs.Get(path); ok {
		p.notify(protocol.DiffStateParams{FilePath: d.Path, DiffID: d.ID, State: protocol.StateQueued, Queued: p.diffs.Queued(path)})
	}
}

// Orphan tells the editor that owner's open proposals can no longer reach
// anyone (its session ended), and drops the ones it still had queued.
func (p *Proposals) Orphan(owner string) {
	shown, unqueued := p.diffs.Orphan(owner)
	for _, path := range unqueued {
		p.queueChanged(path)
	}
	for _, d := range shown {
		p.disk.Unwatch(d.ID)
		p.log.Info().Str("path", d.Path).Msg("proposal orphaned: its CLI session is gone")
		p.notify(protocol.DiffStateParams{FilePath: d.Path, DiffID: d.ID, State: protocol.StateOrphaned,
			Message: fmt.Sprintf("The Gemini CLI session that proposed this change to %s is gone: accepting writes nothing. Save the proposed text yourself if you want it.", filepath.Base(d.Path))})
	}
}

// diskChanged tells the editor that the file of a shown proposal changed
// on disk, was deleted, or is back to what it was.
func (p *Proposals) diskChanged(c diffview.DiskChange) {
	d, cur := c.Diff, c.Current
	base := filepath.Base(d.Path)
	st := protocol.DiffStateParams{FilePath: d.Path, DiffID: d.ID, DiskContent: cur}
	if wantsUnified(p.editorNow()) {
		if proposed, err := d.ProposedText(); err == nil {
			st.UnifiedDiff = diffview.Unified(d.Path, cur, proposed)
		} else {
			// The editor still shows the proposal and the file as it is
			// now; only the diff between them is missing.
			p.log.Warn().Err(err).Str("path", d.Path).Msg("the diff against the file on disk cannot be computed")
		}
	}
	switch d.Disk {
	case diffview.Changed:
		st.State = protocol.StateChangedOnDisk
		st.Message = fmt.Sprintf("%s changed on disk while this proposal is open; the original side now shows the file as it is. Accepting will overwrite that change.", base)
	case diffview.Deleted:
		st.State = protocol.StateDeletedOnDisk
		st.Message = fmt.Sprintf("%s was deleted on disk while this proposal is open. Accepting will create it again.", base)
	default:
		st.State = protocol.StateUnchangedOnDisk
		st.Message = fmt.Sprintf("%s on disk is back to what it was when this proposal was shown.", base)
	}
	p.log.Info().Str("path", d.Path).Str("disk", st.State).Msg("proposed file changed on disk")
	p.notify(st)
}

// notify tells the editor what happened to a proposal: as a diff/state if
// it shows them, else as a message.
func (p *Proposals) notify(st protocol.DiffStateParams) {
	e := p.editorNow()
	if n, ok := e.(StateNotifier); ok {
		n.DiffState(st)
		return
	}
	if a, ok := e.(Announcer); ok {
		a.Announce(protocol.LogParams{Level: protocol.LevelWarn, Message: st.Message})
	}
}

// announce tells the user something as a warning.
func (p *Proposals) announce(msg string) {
	if a, ok := p.editorNow().(Announcer); ok {
		a.Announce(protocol.LogParams{Level: protocol.LevelWarn, Message: msg})
	}
}
