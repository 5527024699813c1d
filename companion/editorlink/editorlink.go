// Package editorlink is the editor frontend of the sidecar: it serves one
// editor plugin over the editor link (docs/editor-link.md), turning the
// plugin's messages into calls on a companion.Companion and showing its
// proposals and notices through the plugin. The companion never refers
// back to it except through the small interfaces it owns
// (proposals.Editor, proposals.StateNotifier, companion.Announcer). The
// messages are the types of package protocol.
package editorlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// editorPoll is how often the editor process is checked for life.
const editorPoll = 500 * time.Millisecond

// getppid is the sidecar's parent, the editor when initialize names none.
var getppid = os.Getppid

// Config configures Serve.
type Config struct {
	// Options configure the companion server behind the link.
	companion.Options
	// Framing is how messages are delimited (--framing).
	Framing link.Framing
	// Extensions add method namespaces to the link, such as the agent
	// panel's agent/*.
	Extensions []Extension
}

// Peer is the plugin as an extension sees it: it can be sent
// notifications and requests, and it said in initialize what it can do.
type Peer interface {
	Notify(method string, params any) error
	Call(ctx context.Context, method string, params, result any) error
	// PluginCapabilities is what the plugin said it can do in initialize;
	// the zero value before initialize.
	PluginCapabilities() protocol.ClientCapabilities
}

// Extension adds methods to the editor link: a namespace such as "agent/"
// (every method under it) or one method name. Its requests are served only
// after initialize, like every request but initialize and shutdown.
//
// The handler New returns may also implement:
//   - Decider: it is asked first about every diff/accepted and
//     diff/rejected, and takes the ones that are its own (proposals it
//     showed itself); the rest go to the companion server;
//   - io.Closer: Close is called once, when the link has ended, before
//     Serve returns (to stop what the extension started).
type Extension struct {
	// Pattern is the namespace (ending in "/") or method it handles.
	Pattern string
	// Capability is the initialize result capability it turns on: "agent"
	// (protocol.ServerCapabilities.Agent), or "" for none.
	Capability string
	// New makes the handler, once, before the link reads anything. peer
	// sends to the plugin (e.g. agent/event notifications); c is the
	// companion the link serves.
	New func(peer Peer, c *companion.Companion) link.Handler
}

// Decider is implemented by extension handlers that show proposals of
// their own: Decide takes the user's decision on one and reports whether
// it was theirs (diffID 0: a protocol-1 plugin named only the path).
type Decider interface {
	Decide(path string, diffID uint64, accepted bool, content string) bool
}

// EditorLink serves one editor plugin over the editor link: it turns the
// plugin's events into context and decisions, and shows diffs through it.
type EditorLink struct {
	c       *companion.Companion
	conn    *link.Conn
	mux     *link.Mux
	log     zerolog.Logger
	version string
	agent   bool // an extension answers agent/*
	// deciders and closers are the extension handlers that implement
	// Decider and io.Closer.
	deciders []Decider
	closers  []io.Closer

	mu        sync.Mutex
	started   bool
	editorPID int
	protocol  int
	// diffStates: the plugin shows diff/state notifications; without it,
	// their message goes out as a log notification.
	diffStates bool
	// noDiffs: the plugin said it cannot show diffs (capabilities.diff false).
	noDiffs bool
	ideName string
	caps    protocol.ClientCapabilities
	// answered holds, per file (fspath.Key), the diffId of the last
	// diff/open the plugin answered: the view a decision without diffId
	// is about. A note goes once its proposal has ended (forgetEnded): a
	// decision without a note is refused, as one about an ended proposal
	// is.
	answered map[string]uint64
}

// Serve runs the sidecar for the plugin at the other end of r and w until
// the plugin asks for shutdown, closes r, or its process dies, or ctx ends.
// It always cleans up (discovery file removed) before returning.
func Serve(ctx context.Context, r io.Reader, w io.Writer, cfg Config) error {
	c := companion.New(cfg.Options)
	el := &EditorLink{c: c, log: cfg.Logger, version: cfg.Version, mux: link.NewMux()}
	el.conn = link.New(r, w, el, link.WithFraming(cfg.Framing), link.WithMaxLine(protocol.MaxMessageBytes),
		link.WithProblems(func(err error) {
			el.log.Warn().Err(err).Msg("editor link")
		}))
	el.routes()
	for _, ext := range cfg.Extensions {
		h := ext.New(el, c)
		el.mux.Register(ext.Pattern, h)
		if ext.Capability == "agent" {
			el.agent = true
		}
		if d, ok := h.(Decider); ok {
			el.deciders = append(el.deciders, d)
		}
		if c, ok := h.(io.Closer); ok {
			el.closers = append(el.closers, c)
		}
	}
	c.SetEditor(el)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	go func() { serveErr <- el.conn.Serve(ctx) }()

	ticker := time.NewTicker(editorPoll)
	defer ticker.Stop()
	var err error
	const linkEnded = "editor link closed or shutdown requested"
	reason := ""
loop:
	for {
		select {
		case err = <-serveErr:
			reason = linkEnded
			break loop
		case <-ctx.Done():
			reason = "stopped"
			break loop
		case <-ticker.C:
			el.mu.Lock()
			pid := el.editorPID
			el.mu.Unlock()
			if pid > 0 && !discovery.Alive(pid) {
				reason = fmt.Sprintf("editor process %d is gone", pid)
				break loop
			}
		}
	}
	for _, c := range el.closers {
		if cerr := c.Close(); cerr != nil {
			el.log.Warn().Err(cerr).Msg("editor link extension did not stop cleanly")
		}
	}
	// The discovery file goes first: the log below may be written to an
	// editor that is already gone.
	if cerr := c.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	el.log.Info().Str("reason", reason).Msg("shut down")
	if reason != linkEnded {
		// The reader may be blocked reading; closing the input (a pipe)
		// releases it. On Windows the close itself waits for a pending
		// read of a pipe, which a dead editor may never end (its stdin's
		// write end can live on in another process): the close runs
		// aside, and Serve returns after a second whatever it does.
		// Readers that cannot be closed end with the process.
		if c, ok := r.(io.Closer); ok {
			go func() { _ = c.Close() }()
			select {
			case <-serveErr:
			case <-time.After(time.Second):
			}
		}
	}
	return err
}

// routes registers the link's own methods; Extensions add theirs.
func (el *EditorLink) routes() {
	m := el.mux
	m.HandleFunc(protocol.MethodInitialize, el.initialize)
	m.HandleFunc(protocol.MethodShutdown, func(context.Context, json.RawMessage) (any, error) {
		// The reply goes out first; Serve then cleans up.
		el.log.Info().Msg("shutdown requested by the editor")
		return link.Final{Result: nil}, nil
	})
	m.HandleFunc(protocol.MethodStatusGet, func(context.Context, json.RawMessage) (any, error) {
		return protocol.StatusGetResult{Status: el.c.Status(), ServerVersion: el.version}, nil
	})
	m.HandleFunc(protocol.MethodTerminalEnv, func(context.Context, json.RawMessage) (any, error) {
		info := el.c.Info()
		return protocol.TerminalEnvResult{Env: info.Env, DiscoveryFile: info.DiscoveryFile}, nil
	})
	el.on(protocol.MethodFileFocused, el.focus(false))
	el.on(protocol.MethodSelectionChanged, el.focus(true))
	el.on(protocol.MethodFileClosed, el.fileClosed)
	el.on(protocol.MethodFileRenamed, el.fileRenamed)
	el.on(protocol.MethodFoldersChanged, el.foldersChanged)
	el.on(protocol.MethodTrustChanged, el.trustChanged)
	el.on(protocol.MethodDiffAccepted, el.decision(true))
	el.on(protocol.MethodDiffRejected, el.decision(false))
	m.Unhandled = func(method string) {
		el.log.Debug().Str("method", method).Msg("unknown notification ignored")
	}
}

// on registers a notification whose failures are logged: a notification
// has no answer to carry them.
func (el *EditorLink) on(method string, f func(json.RawMessage) error) {
	el.mux.NotifyFunc(method, func(_ context.Context, params json.RawMessage) {
		if err := f(params); err != nil {
			el.log.Warn().Str("method", method).Err(err).Msg("editor event dropped")
		}
	})
}

// HandleRequest implements link.Handler: before initialize only initialize
// and shutdown are served; everything goes through the dispatcher.
func (el *EditorLink) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != protocol.MethodInitialize && method != protocol.MethodShutdown && !el.isStarted() {
		return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
	}
	return el.mux.HandleRequest(ctx, method, params)
}

// HandleNotification implements link.Handler.
func (el *EditorLink) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	el.mux.HandleNotification(ctx, method, params)
}

func invalid(format string, args ...any) error {
	return link.Errorf(link.CodeInvalidParams, format, args...)
}

func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return invalid("params are required")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid("%s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return invalid("params: %v", err)
	}
	return nil
}

// checkFolders validates workspace folders and returns them cleaned.
func checkFolders(field string, folders []string) ([]string, error) {
	out := make([]string, 0, len(folders))
	for i, f := range folders {
		if f == "" || strings.ContainsRune(f, 0) || !filepath.IsAbs(f) {
			return nil, invalid("%s[%d]: %q is not an absolute path", field, i, f)
		}
		if strings.ContainsRune(f, os.PathListSeparator) {
			return nil, invalid("%s[%d]: %q contains the path list separator", field, i, f)
		}
		out = append(out, filepath.Clean(f))
	}
	return out, nil
}

func (el *EditorLink) isStarted() bool {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.started
}

func (el *EditorLink) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	if el.isStarted() {
		return nil, link.Errorf(link.CodeInvalidRequest, "already initialized")
	}
	var p protocol.InitializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil || *p.ProtocolVersion < protocol.Version1 || *p.ProtocolVersion > protocol.LatestVersion {
		return nil, invalid("protocolVersion: this sidecar speaks versions %d and %d", protocol.Version1, protocol.LatestVersion)
	}
	if p.IDE == nil || strings.TrimSpace(p.IDE.Name) == "" || strings.TrimSpace(p.IDE.DisplayName) == "" {
		return nil, invalid("ide: name and displayName are required")
	}
	folders, err := checkFolders("workspaceFolders", p.WorkspaceFolders)
	if err != nil {
		return nil, err
	}
	var editorPID int
	if p.ProcessID != nil && *p.ProcessID != 0 {
		editorPID = *p.ProcessID
		if editorPID < 0 {
			return nil, invalid("processId: %d is not a process id", editorPID)
		}
	} else if editorPID = getppid(); editorPID <= 0 || !discovery.Alive(editorPID) {
		// On Windows a parent may be gone, or (a program started by a
		// non-Windows process, as under Wine) there may be none.
		return nil, invalid("processId: this sidecar has no parent process to take for the editor (parent PID %d is not running); pass processId, the PID of the editor process whose children are its terminals' shells", editorPID)
	}
	idePID, err := discovery.IDEPID(editorPID)
	if err != nil {
		return nil, invalid("processId: %v", err)
	}
	if p.IsTrusted != nil {
		el.c.Engine().SetTrusted(*p.IsTrusted)
	}
	info, err := el.c.Start(ctx, companion.Identity{
		IDE:       discovery.IDEInfo{Name: p.IDE.Name, DisplayName: p.IDE.DisplayName},
		Workspace: folders,
		IDEPID:    idePID,
	})
	if err != nil {
		return nil, fmt.Errorf("start companion: %w", err)
	}
	el.mu.Lock()
	el.started = true
	el.editorPID = editorPID
	el.protocol = *p.ProtocolVersion
	el.diffStates = p.Capabilities.DiffStates
	el.noDiffs = p.Capabilities.Diff != nil && !*p.Capabilities.Diff
	el.ideName = p.IDE.DisplayName
	el.caps = p.Capabilities
	el.mu.Unlock()
	el.warnNoDiscovery(info)
	res := protocol.InitializeResult{
		Port:            info.Port,
		AuthToken:       info.AuthToken,
		IDEPID:          info.IDEPID,
		DiscoveryFile:   info.DiscoveryFile,
		Env:             info.Env,
		ServerVersion:   el.version,
		PID:             os.Getpid(),
		ProtocolVersion: *p.ProtocolVersion,
	}
	if res.ProtocolVersion >= protocol.Version2 {
		policy := newPolicy(p.IDE.RestartCommand)
		res.Policy = &policy
		res.Capabilities = &protocol.ServerCapabilities{
			DiffStates:  p.Capabilities.DiffStates,
			EnvChanged:  true,
			TerminalEnv: true,
			StatusText:  true,
			Agent:       el.agent,
		}
		st := el.statusParams(el.c.Status().ConnectedClients)
		res.Status = &st
	}
	return res, nil
}

// focus handles context/fileFocused (select false) and
// context/selectionChanged (select true).
func (el *EditorLink) focus(selection bool) func(json.RawMessage) error {
	return func(params json.RawMessage) error {
		var p protocol.FocusParams
		if err := decode(params, &p); err != nil {
			return err
		}
		if !filepath.IsAbs(p.Path) || strings.ContainsRune(p.Path, 0) {
			return invalid("path: %q is not an absolute path", p.Path)
		}
		sel := ""
		if p.SelectedText != nil {
			sel = *p.SelectedText
		}
		var cur *idectx.Cursor
		if p.Cursor != nil {
			cur = &idectx.Cursor{Line: p.Cursor.Line, Character: p.Cursor.Character}
		}
		if selection {
			el.c.Engine().Select(p.Path, cur, sel)
		} else {
			el.c.Engine().Focus(p.Path, cur, sel)
		}
		return nil
	}
}

func (el *EditorLink) fileClosed(params json.RawMessage) error {
	var p protocol.FileClosedParams
	if err := decode(params, &p); err != nil {
		return err
	}
	el.c.Engine().Close(p.Path)
	return nil
}

func (el *EditorLink) fileRenamed(params json.RawMessage) error {
	var p protocol.FileRenamedParams
	if err := decode(params, &p); err != nil {
		return err
	}
	if !filepath.IsAbs(p.NewPath) || strings.ContainsRune(p.NewPath, 0) {
		return invalid("newPath: %q is not an absolute path", p.NewPath)
	}
	el.c.Engine().Rename(p.OldPath, p.NewPath)
	return nil
}

func (el *EditorLink) foldersChanged(params json.RawMessage) error {
	var p protocol.FoldersChangedParams
	if err := decode(params, &p); err != nil {
		return err
	}
	folders, err := checkFolders("workspaceFolders", p.WorkspaceFolders)
	if err != nil {
		return err
	}
	if !el.isStarted() {
		return errors.New("not initialized")
	}
	info := el.c.SetWorkspace(folders)
	el.warnNoDiscovery(info)
	if err := el.conn.Notify(protocol.MethodEnvChanged, protocol.EnvChangedParams{Env: info.Env, DiscoveryFile: info.DiscoveryFile}); err != nil {
		return err
	}
	if n := el.c.Status().ConnectedClients; n > 0 {
		el.Announce(protocol.LogParams{Level: protocol.LevelInfo, Message: foldersChangedText})
	}
	return nil
}

// foldersChangedText is what the user hears when the workspace folders
// change while CLIs are connected.
const foldersChangedText = "Workspace folders changed: terminals opened from now on get the new folders; Gemini CLI sessions already running keep the old ones until they reconnect with /ide enable."

func (el *EditorLink) trustChanged(params json.RawMessage) error {
	var p protocol.TrustChangedParams
	if err := decode(params, &p); err != nil {
		return err
	}
	if p.IsTrusted == nil {
		return invalid("isTrusted is required")
	}
	el.c.Engine().SetTrusted(*p.IsTrusted)
	return nil
}

// decision handles diff/accepted (accepted true) and diff/rejected.
func (el *EditorLink) decision(accepted bool) func(json.RawMessage) error {
	return func(params json.RawMessage) error {
		var p protocol.DiffAcceptedParams
		if err := decode(params, &p); err != nil {
			return err
		}
		dc := proposals.Decision{FilePath: p.FilePath, Accepted: accepted, OverDiskChange: p.OverDiskChange}
		if dc.Accepted {
			if p.Content == nil {
				return invalid("content is required")
			}
			dc.Content = *p.Content
		}
		if p.DiffID != nil {
			if *p.DiffID == 0 {
				return invalid("diffId: 0 names no proposal")
			}
			dc.DiffID = *p.DiffID
		} else {
			// A plugin without diffIds decides on the view it shows: the
			// proposal of the last diff/open it answered for the file, if
			// that proposal is still open.
			el.mu.Lock()
			shown, ok := el.answered[fspath.Key(p.FilePath)]
			el.mu.Unlock()
			dc.Shown = shown
			if !ok {
				dc.Shown = proposals.NoneShown
			}
		}
		defer el.forgetEnded(p.FilePath)
		for _, d := range el.deciders {
			if d.Decide(dc.FilePath, dc.DiffID, dc.Accepted, dc.Content) {
				return nil
			}
		}
		el.c.Proposals().Decide(dc)
		return nil
	}
}

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

// Call implements Peer: a request to the plugin, waiting for its answer.
func (el *EditorLink) Call(ctx context.Context, method string, params, result any) error {
	return el.conn.Call(ctx, method, params, result)
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
	var res json.RawMessage
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
	if err := el.conn.CallThen(ctx, protocol.MethodDiffOpen, diffOpenStream(req), &res, shown); err != nil {
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
	var res protocol.DiffCloseResult
	if err := el.conn.Call(ctx, protocol.MethodDiffClose, protocol.DiffCloseParams{FilePath: path}, &res); err != nil {
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
		_ = el.conn.Notify(protocol.MethodDiffState, diffStateStream(st))
		return
	}
	if st.Message != "" {
		el.Announce(protocol.LogParams{Level: protocol.LevelWarn, Message: st.Message})
	}
}

// Announce implements companion.Announcer with a log notification.
func (el *EditorLink) Announce(n protocol.LogParams) {
	_ = el.conn.Notify(protocol.MethodLog, n)
}

// ClientsChanged implements companion.Announcer with a status
// notification.
func (el *EditorLink) ClientsChanged(connected int) {
	_ = el.conn.Notify(protocol.MethodStatus, el.statusParams(connected))
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
