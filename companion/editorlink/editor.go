package editorlink

import (
	"context"
	"errors"
	"fmt"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/edtools"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// The editor link as the companion's editor: it shows proposals and
// notices through the plugin (proposals.Editor, proposals.StateNotifier,
// companion.Announcer), and lets extensions send to the plugin (Peer).

// forgetEnded drops the note of the view the plugin shows for path once
// its proposal is no longer the one on screen (decided, closed by its CLI,
// replaced, or never shown after all). It runs after each way a proposal
// ends on this link: a decision, diff/open and diff/close returning.
func (el *EditorLink) forgetEnded(path string) {
	key := fspath.Key(path)
	el.mu.Lock()
	defer el.mu.Unlock()
	if id, ok := el.answered[key]; ok && el.c.Proposals().ShownID(path) != id {
		delete(el.answered, key)
	}
}

// Notify implements Peer: a notification to the plugin.
func (el *EditorLink) Notify(method string, params any) error { return el.conn.Notify(method, params) }

// CallThen implements Peer: a request to the plugin, waiting for its
// answer (see link.Conn.CallThen).
func (el *EditorLink) CallThen(ctx context.Context, method string, params, result any, then func()) error {
	return el.conn.CallThen(ctx, method, params, result, then)
}

// EditorName implements edtools.Editor: the editor's display name.
func (el *EditorLink) EditorName() string {
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.ideName == "" {
		return "the editor"
	}
	return el.ideName
}

// CallEditor implements edtools.Editor: an editor/* request to the
// plugin, its error answer as an *edtools.PluginError.
func (el *EditorLink) CallEditor(ctx context.Context, method string, params, result any) error {
	err := el.conn.CallThen(ctx, method, params, result, nil)
	var rpcErr *link.Error
	if errors.As(err, &rpcErr) {
		return &edtools.PluginError{Code: rpcErr.Code, Message: rpcErr.Message}
	}
	return err
}

// PluginCapabilities implements Peer.
func (el *EditorLink) PluginCapabilities() protocol.ClientCapabilities {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.caps
}

// WantsUnifiedDiff implements proposals.UnifiedDiffPreference: false when
// the plugin said capabilities.unifiedDiff false.
func (el *EditorLink) WantsUnifiedDiff() bool {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.caps.UnifiedDiff == nil || *el.caps.UnifiedDiff
}

// OpenDiff implements proposals.Editor by asking the plugin to show the
// diff.
func (el *EditorLink) OpenDiff(ctx context.Context, req protocol.DiffOpenParams) error {
	el.mu.Lock()
	noDiffs, name := el.noDiffs, el.ideName
	el.mu.Unlock()
	if noDiffs {
		return fmt.Errorf("%s does not show diffs; review the change in Gemini CLI instead", name)
	}
	// Noted as the answer is read, before the plugin's next message: a
	// decision the plugin sends after it is about this proposal, one sent
	// before it about an earlier one.
	shown := func() {
		el.mu.Lock()
		if el.answered == nil {
			el.answered = map[string]uint64{}
		}
		el.answered[fspath.Key(req.FilePath)] = req.DiffID
		el.mu.Unlock()
	}
	// A proposal shown in place of another ends that one; one that could
	// not be shown, or ended while it was, leaves no note.
	defer el.forgetEnded(req.FilePath)
	if _, err := el.plugin.DiffOpen(ctx, req, shown); err != nil {
		var rpcErr *link.Error
		if errors.As(err, &rpcErr) {
			return fmt.Errorf("the editor could not show the diff: %s", rpcErr.Message)
		}
		return err
	}
	return nil
}

// CloseDiff implements proposals.Editor by asking the plugin to close the
// view.
func (el *EditorLink) CloseDiff(ctx context.Context, path string) (*string, error) {
	defer el.forgetEnded(path)
	res, err := el.plugin.DiffClose(ctx, protocol.DiffCloseParams{FilePath: path})
	if err != nil {
		return nil, err
	}
	return res.Content, nil
}

// warnNoDiscovery tells the user when no discovery file could be written:
// the CLI then finds the editor only through a terminal's environment, and
// trusts it only in terminals it recognises by itself.
func (el *EditorLink) warnNoDiscovery(info companion.Info) {
	if info.DiscoveryFile != "" {
		return
	}
	el.Announce(protocol.LogParams{Level: protocol.LevelWarn, Message: fmt.Sprintf(
		"No discovery file could be written (%v); Gemini CLI may not find this editor. See docs/security.md.", info.DiscoveryErr)})
}

// DiffState implements proposals.StateNotifier: a diff/state
// notification for plugins that said they show them, a log notification
// for the others.
func (el *EditorLink) DiffState(st protocol.DiffStateParams) {
	el.mu.Lock()
	states := el.diffStates
	el.mu.Unlock()
	if states {
		_ = el.plugin.DiffState(st)
		return
	}
	if st.Message != "" {
		el.Announce(protocol.LogParams{Level: protocol.LevelWarn, Message: st.Message})
	}
}

// Announce implements companion.Announcer with a log notification.
func (el *EditorLink) Announce(n protocol.LogParams) {
	_ = el.plugin.Log(n)
}

// ClientsChanged implements companion.Announcer with a status
// notification.
func (el *EditorLink) ClientsChanged(connected int) {
	_ = el.plugin.Status(el.statusParams(connected))
}

// statusParams is the status for this plugin: with the text to show for
// protocol 2, as protocol 1 had it otherwise.
func (el *EditorLink) statusParams(connected int) protocol.StatusParams {
	el.mu.Lock()
	v := el.protocol
	el.mu.Unlock()
	st := protocol.StatusParams{ConnectedClients: connected}
	if v >= protocol.Version2 {
		st.Text = statusText(connected)
	}
	return st
}
