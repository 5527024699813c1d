package editorlink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// linkMethods serve the link's own plugin → sidecar methods
// (rpc.LinkHandler): the plugin's events become context, workspace
// changes and decisions.
type linkMethods struct{ el *EditorLink }

// Shutdown answers, then Serve cleans up: the reply goes out first.
func (m linkMethods) Shutdown(context.Context) error {
	m.el.log.Info().Msg("shutdown requested by the editor")
	return nil
}

// StatusGet reports the companion's state.
func (m linkMethods) StatusGet(context.Context) (protocol.StatusGetResult, error) {
	return protocol.StatusGetResult{Status: m.el.c.Status(), ServerVersion: m.el.version}, nil
}

// TerminalEnv is what a terminal opened now needs.
func (m linkMethods) TerminalEnv(context.Context) (protocol.TerminalEnvResult, error) {
	info := m.el.c.Info()
	return protocol.TerminalEnvResult{Env: info.Env, DiscoveryFile: info.DiscoveryFile}, nil
}

func invalid(format string, args ...any) error {
	return link.Errorf(link.CodeInvalidParams, format, args...)
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

// Initialize starts the companion for the editor p names.
func (m linkMethods) Initialize(ctx context.Context, p protocol.InitializeParams) (protocol.InitializeResult, error) {
	el := m.el
	if el.isStarted() {
		return protocol.InitializeResult{}, link.Errorf(link.CodeInvalidRequest, "already initialized")
	}
	if p.ProtocolVersion == nil || *p.ProtocolVersion < protocol.Version1 || *p.ProtocolVersion > protocol.LatestVersion {
		return protocol.InitializeResult{}, invalid("protocolVersion: this sidecar speaks versions %d and %d", protocol.Version1, protocol.LatestVersion)
	}
	if p.IDE == nil || strings.TrimSpace(p.IDE.Name) == "" || strings.TrimSpace(p.IDE.DisplayName) == "" {
		return protocol.InitializeResult{}, invalid("ide: name and displayName are required")
	}
	folders, err := checkFolders("workspaceFolders", p.WorkspaceFolders)
	if err != nil {
		return protocol.InitializeResult{}, err
	}
	var editorPID int
	if p.ProcessID != nil && *p.ProcessID != 0 {
		editorPID = *p.ProcessID
		if editorPID < 0 {
			return protocol.InitializeResult{}, invalid("processId: %d is not a process id", editorPID)
		}
	} else if editorPID = getppid(); editorPID <= 0 || !discovery.Alive(editorPID) {
		// On Windows a parent may be gone, or (a program started by a
		// non-Windows process, as under Wine) there may be none.
		return protocol.InitializeResult{}, invalid("processId: this sidecar has no parent process to take for the editor (parent PID %d is not running); pass processId, the PID of the editor process whose children are its terminals' shells", editorPID)
	}
	idePID, err := discovery.IDEPID(editorPID)
	if err != nil {
		return protocol.InitializeResult{}, invalid("processId: %v", err)
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
		return protocol.InitializeResult{}, fmt.Errorf("start companion: %w", err)
	}
	el.mu.Lock()
	el.started = true
	el.protocol = *p.ProtocolVersion
	el.diffStates = p.Capabilities.DiffStates
	el.noDiffs = p.Capabilities.Diff != nil && !*p.Capabilities.Diff
	el.ideName = p.IDE.DisplayName
	el.caps = p.Capabilities
	el.mu.Unlock()
	el.editorPID <- editorPID // buffered; initialize succeeds once
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
		policy := newPolicy(p.IDE.RestartCommand, el.editorTimeout)
		res.Policy = &policy
		res.Capabilities = &protocol.ServerCapabilities{
			DiffStates:  p.Capabilities.DiffStates,
			EnvChanged:  true,
			TerminalEnv: true,
			StatusText:  true,
			Agent:       el.agent,
			EditorTools: true,
		}
		st := el.statusParams(el.c.Status().ConnectedClients)
		res.Status = &st
	}
	return res, nil
}

// ContextFileFocused takes the file the user now works in.
func (m linkMethods) ContextFileFocused(_ context.Context, p protocol.FocusParams) error {
	return m.focus(p, false)
}

// ContextSelectionChanged takes where the cursor and selection are now.
func (m linkMethods) ContextSelectionChanged(_ context.Context, p protocol.FocusParams) error {
	return m.focus(p, true)
}

// focus takes context/fileFocused (selection false) and
// context/selectionChanged (selection true).
func (m linkMethods) focus(p protocol.FocusParams, selection bool) error {
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
		m.el.c.Engine().Select(p.Path, cur, sel)
	} else {
		m.el.c.Engine().Focus(p.Path, cur, sel)
	}
	return nil
}

// ContextFileClosed takes a file the user closed.
func (m linkMethods) ContextFileClosed(_ context.Context, p protocol.FileClosedParams) error {
	m.el.c.Engine().Close(p.Path)
	return nil
}

// ContextFileRenamed takes a file renamed or moved.
func (m linkMethods) ContextFileRenamed(_ context.Context, p protocol.FileRenamedParams) error {
	if !filepath.IsAbs(p.NewPath) || strings.ContainsRune(p.NewPath, 0) {
		return invalid("newPath: %q is not an absolute path", p.NewPath)
	}
	m.el.c.Engine().Rename(p.OldPath, p.NewPath)
	return nil
}

// WorkspaceFoldersChanged takes the editor's new workspace folders.
func (m linkMethods) WorkspaceFoldersChanged(_ context.Context, p protocol.FoldersChangedParams) error {
	el := m.el
	folders, err := checkFolders("workspaceFolders", p.WorkspaceFolders)
	if err != nil {
		return err
	}
	if !el.isStarted() {
		return errors.New("not initialized")
	}
	info := el.c.SetWorkspace(folders)
	el.warnNoDiscovery(info)
	if err := el.plugin.WorkspaceEnvChanged(protocol.EnvChangedParams{Env: info.Env, DiscoveryFile: info.DiscoveryFile}); err != nil {
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

// WorkspaceTrustChanged takes the editor's workspace trust.
func (m linkMethods) WorkspaceTrustChanged(_ context.Context, p protocol.TrustChangedParams) error {
	if p.IsTrusted == nil {
		return invalid("isTrusted is required")
	}
	m.el.c.Engine().SetTrusted(*p.IsTrusted)
	return nil
}

// DiffAccepted takes the user's accept of a proposal, with their edits.
func (m linkMethods) DiffAccepted(_ context.Context, p protocol.DiffAcceptedParams) error {
	if p.Content == nil {
		return invalid("content is required")
	}
	return m.decide(proposals.Decision{FilePath: p.FilePath, Accepted: true, Content: *p.Content, OverDiskChange: p.OverDiskChange}, p.DiffID)
}

// DiffRejected takes the user's rejection of a proposal.
func (m linkMethods) DiffRejected(_ context.Context, p protocol.DiffRejectedParams) error {
	return m.decide(proposals.Decision{FilePath: p.FilePath}, p.DiffID)
}

// decide hands a decision to the extension that showed its proposal, or
// else to the companion's proposals. Without diffID it is about the view
// the plugin shows: the proposal of the last diff/open it answered for
// the file, if that proposal is still open.
func (m linkMethods) decide(dc proposals.Decision, diffID *uint64) error {
	el := m.el
	if diffID != nil {
		if *diffID == 0 {
			return invalid("diffId: 0 names no proposal")
		}
		dc.DiffID = *diffID
	} else {
		el.mu.Lock()
		shown, ok := el.answered[fspath.Key(dc.FilePath)]
		el.mu.Unlock()
		dc.Shown = shown
		if !ok {
			dc.Shown = proposals.NoneShown
		}
	}
	defer el.forgetEnded(dc.FilePath)
	for _, d := range el.deciders {
		if d.Decide(dc.FilePath, dc.DiffID, dc.Accepted, dc.Content) {
			return nil
		}
	}
	el.c.Proposals().Decide(dc)
	return nil
}
