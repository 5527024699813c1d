package companion

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

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// ProtocolVersion is the newest editor link version this sidecar speaks;
// it also speaks every version from MinProtocolVersion up.
const ProtocolVersion = 2

// MinProtocolVersion is the oldest editor link version still spoken:
// plugins written for protocol 1 keep working unchanged.
const MinProtocolVersion = 1

// editorPoll is how often the editor process is checked for life.
const editorPoll = 500 * time.Millisecond

// EditorLink serves one editor plugin over the editor link: it turns the
// plugin's events into context and decisions, and shows diffs through it.
type EditorLink struct {
	s    *Server
	conn *link.Conn

	mu        sync.Mutex
	started   bool
	editorPID int
	// diffStates: the plugin shows diff/state notifications; without it,
	// their message goes out as a log notification.
	diffStates bool
	// noDiffs: the plugin said it cannot show diffs (capabilities.diff false).
	noDiffs bool
	ideName string
}

// ServeEditorLink runs the sidecar for the plugin at the other end of r and
// w until the plugin asks for shutdown, closes r, or its process dies, or ctx
// ends. It always cleans up (discovery file removed) before returning.
func ServeEditorLink(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	s := New(opts)
	el := &EditorLink{s: s}
	el.conn = link.New(r, w, el, link.WithFraming(opts.Framing), link.WithProblems(func(err error) {
		s.log.Warn().Err(err).Msg("editor link")
	}))
	s.SetEditor(el)

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
	// The discovery file goes first: the log below may be written to an
	// editor that is already gone.
	if cerr := s.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	s.log.Info().Str("reason", reason).Msg("shut down")
	if reason != linkEnded {
		// The reader may be blocked reading; closing the input (a pipe)
		// releases it. Readers that cannot be closed end with the process.
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
			select {
			case <-serveErr:
			case <-time.After(time.Second):
			}
		}
	}
	return err
}

type ideParam struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	// RestartCommand (protocol 2) is how the user restarts the companion in
	// this editor; the policy's messages name it.
	RestartCommand string `json:"restartCommand"`
}

// PluginCapabilities is what a plugin says it can do (initialize params).
// Absent means false, except Diff: every protocol-1 plugin shows diffs.
type PluginCapabilities struct {
	Diff        *bool `json:"diff"`
	DiffStates  bool  `json:"diffStates"`
	Selection   bool  `json:"selection"`
	Terminal    bool  `json:"terminal"`
	Diagnostics bool  `json:"diagnostics"`
	Agent       bool  `json:"agent"`
}

type initializeParams struct {
	ProtocolVersion  *int               `json:"protocolVersion"`
	IDE              *ideParam          `json:"ide"`
	ProcessID        *int               `json:"processId"`
	WorkspaceFolders []string           `json:"workspaceFolders"`
	IsTrusted        *bool              `json:"isTrusted"`
	Capabilities     PluginCapabilities `json:"capabilities"`
}

// SidecarCapabilities is what the sidecar will send or answer on this link
// (initialize result, protocol 2), so a plugin need not guess from versions.
type SidecarCapabilities struct {
	// DiffStates: diff/state notifications (else their text as log).
	DiffStates bool `json:"diffStates"`
	// EnvChanged: workspace/envChanged after the folders change.
	EnvChanged bool `json:"envChanged"`
	// TerminalEnv: the terminal/env request is answered.
	TerminalEnv bool `json:"terminalEnv"`
	// StatusText: status notifications carry the text to show.
	StatusText bool `json:"statusText"`
	// Agent: agent/* requests are answered.
	Agent bool `json:"agent"`
}

// InitializeResult is the answer to initialize. The fields after PID are
// protocol 2's; a protocol-1 plugin ignores them.
type InitializeResult struct {
	Port          int                  `json:"port"`
	AuthToken     string               `json:"authToken"`
	IDEPID        int                  `json:"idePid"`
	DiscoveryFile string               `json:"discoveryFile"`
	Env           map[string]string    `json:"env"`
	ServerVersion string               `json:"serverVersion"`
	PID           int                  `json:"pid"`
	Protocol      int                  `json:"protocolVersion"`
	Capabilities  *SidecarCapabilities `json:"capabilities,omitempty"`
	Policy        *Policy              `json:"policy,omitempty"`
}

// TerminalEnv is the answer to terminal/env and the params of
// workspace/envChanged: what a terminal opened now must have in its
// environment for the CLI in it to find this companion.
type TerminalEnv struct {
	Env           map[string]string `json:"env"`
	DiscoveryFile string            `json:"discoveryFile"`
}

// StatusParams are the params of the status notification.
type StatusParams struct {
	ConnectedClients int    `json:"connectedClients"`
	Text             string `json:"text"`
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

// HandleRequest implements link.Handler.
func (el *EditorLink) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return el.initialize(ctx, params)
	case "shutdown":
		// The reply goes out first; ServeEditorLink then cleans up.
		el.s.log.Info().Msg("shutdown requested by the editor")
		return link.Final{Result: nil}, nil
	case "status/get":
		if !el.isStarted() {
			return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
		}
		return struct {
			Status
			ServerVersion string `json:"serverVersion"`
		}{el.s.Status(), el.s.opts.Version}, nil
	case "terminal/env":
		if !el.isStarted() {
			return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
		}
		info := el.s.Info()
		return TerminalEnv{Env: info.Env, DiscoveryFile: info.DiscoveryFile}, nil
	}
	if !el.isStarted() {
		return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
	}
	return nil, link.Errorf(link.CodeMethodNotFound, "unknown method %q", method)
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
	var p initializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil || *p.ProtocolVersion < MinProtocolVersion || *p.ProtocolVersion > ProtocolVersion {
		return nil, invalid("protocolVersion: this sidecar speaks versions %d and %d", MinProtocolVersion, ProtocolVersion)
	}
	if p.IDE == nil || strings.TrimSpace(p.IDE.Name) == "" || strings.TrimSpace(p.IDE.DisplayName) == "" {
		return nil, invalid("ide: name and displayName are required")
	}
	folders, err := checkFolders("workspaceFolders", p.WorkspaceFolders)
	if err != nil {
		return nil, err
	}
	editorPID := os.Getppid()
	if p.ProcessID != nil && *p.ProcessID != 0 {
		editorPID = *p.ProcessID
	}
	if editorPID < 0 {
		return nil, invalid("processId: %d is not a process id", editorPID)
	}
	idePID, err := discovery.IDEPID(editorPID)
	if err != nil {
		return nil, invalid("processId: %v", err)
	}
	if p.IsTrusted != nil {
		el.s.Engine().SetTrusted(*p.IsTrusted)
	}
	info, err := el.s.Start(ctx, Identity{
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
	el.diffStates = p.Capabilities.DiffStates
	el.noDiffs = p.Capabilities.Diff != nil && !*p.Capabilities.Diff
	el.ideName = p.IDE.DisplayName
	el.mu.Unlock()
	el.warnNoDiscovery(info)
	res := InitializeResult{
		Port:          info.Port,
		AuthToken:     info.AuthToken,
		IDEPID:        info.IDEPID,
		DiscoveryFile: info.DiscoveryFile,
		Env:           info.Env,
		ServerVersion: el.s.opts.Version,
		PID:           os.Getpid(),
		Protocol:      *p.ProtocolVersion,
	}
	if res.Protocol >= 2 {
		policy := NewPolicy(p.IDE.RestartCommand)
		res.Policy = &policy
		res.Capabilities = &SidecarCapabilities{
			DiffStates:  p.Capabilities.DiffStates,
			EnvChanged:  true,
			TerminalEnv: true,
			StatusText:  true,
		}
	}
	return res, nil
}

type focusParams struct {
	Path         string         `json:"path"`
	Cursor       *idectx.Cursor `json:"cursor"`
	SelectedText *string        `json:"selectedText"`
}

// HandleNotification implements link.Handler.
func (el *EditorLink) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	if err := el.notification(method, params); err != nil {
		el.s.log.Warn().Str("method", method).Err(err).Msg("editor event dropped")
	}
}

func (el *EditorLink) notification(method string, params json.RawMessage) error {
	eng := el.s.Engine()
	switch method {
	case "context/fileFocused", "context/selectionChanged":
		var p focusParams
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
		if method == "context/fileFocused" {
			eng.Focus(p.Path, p.Cursor, sel)
		} else {
			eng.Select(p.Path, p.Cursor, sel)
		}
	case "context/fileClosed":
		var p struct {
			Path string `json:"path"`
		}
		if err := decode(params, &p); err != nil {
			return err
		}
		eng.Close(p.Path)
	case "context/fileRenamed":
		var p struct {
			OldPath string `json:"oldPath"`
			NewPath string `json:"newPath"`
		}
		if err := decode(params, &p); err != nil {
			return err
		}
		if !filepath.IsAbs(p.NewPath) || strings.ContainsRune(p.NewPath, 0) {
			return invalid("newPath: %q is not an absolute path", p.NewPath)
		}
		eng.Rename(p.OldPath, p.NewPath)
	case "workspace/foldersChanged":
		var p struct {
			WorkspaceFolders []string `json:"workspaceFolders"`
		}
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
		info := el.s.SetWorkspace(folders)
		el.warnNoDiscovery(info)
		return el.conn.Notify("workspace/envChanged", TerminalEnv{Env: info.Env, DiscoveryFile: info.DiscoveryFile})
	case "workspace/trustChanged":
		var p struct {
			IsTrusted *bool `json:"isTrusted"`
		}
		if err := decode(params, &p); err != nil {
			return err
		}
		if p.IsTrusted == nil {
			return invalid("isTrusted is required")
		}
		eng.SetTrusted(*p.IsTrusted)
	case "diff/accepted", "diff/rejected":
		var p struct {
			FilePath       string  `json:"filePath"`
			Content        *string `json:"content"`
			DiffID         *uint64 `json:"diffId"`
			OverDiskChange bool    `json:"overDiskChange"`
		}
		if err := decode(params, &p); err != nil {
			return err
		}
		dc := Decision{FilePath: p.FilePath, Accepted: method == "diff/accepted", OverDiskChange: p.OverDiskChange}
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
		}
		el.s.Decide(dc)
	default:
		el.s.log.Debug().Str("method", method).Msg("unknown notification ignored")
	}
	return nil
}

// OpenDiff implements Editor by asking the plugin to show the diff.
func (el *EditorLink) OpenDiff(ctx context.Context, req DiffRequest) error {
	el.mu.Lock()
	noDiffs, name := el.noDiffs, el.ideName
	el.mu.Unlock()
	if noDiffs {
		return fmt.Errorf("%s does not show diffs; review the change in Gemini CLI instead", name)
	}
	var res json.RawMessage
	if err := el.conn.Call(ctx, "diff/open", req, &res); err != nil {
		var rpcErr *link.Error
		if errors.As(err, &rpcErr) {
			return fmt.Errorf("the editor could not show the diff: %s", rpcErr.Message)
		}
		return err
	}
	return nil
}

// CloseDiff implements Editor by asking the plugin to close the view.
func (el *EditorLink) CloseDiff(ctx context.Context, path string) (*string, error) {
	var res struct {
		Content *string `json:"content"`
	}
	if err := el.conn.Call(ctx, "diff/close", map[string]string{"filePath": path}, &res); err != nil {
		return nil, err
	}
	return res.Content, nil
}

// warnNoDiscovery tells the user when no discovery file could be written:
// the CLI then finds the editor only through a terminal's environment, and
// trusts it only in terminals it recognises by itself.
func (el *EditorLink) warnNoDiscovery(info Info) {
	if info.DiscoveryFile != "" {
		return
	}
	el.Announce(Notice{Level: "warn", Message: fmt.Sprintf(
		"No discovery file could be written (%v); Gemini CLI may not find this editor. See docs/security.md.", info.DiscoveryErr)})
}

// DiffState implements DiffStateNotifier: a diff/state notification for
// plugins that said they show them, a log notification for the others.
func (el *EditorLink) DiffState(st DiffState) {
	el.mu.Lock()
	states := el.diffStates
	el.mu.Unlock()
	if states {
		_ = el.conn.Notify("diff/state", st)
		return
	}
	if st.Message != "" {
		el.Announce(Notice{Level: "warn", Message: st.Message})
	}
}

// Announce implements Announcer with a log notification.
func (el *EditorLink) Announce(n Notice) {
	_ = el.conn.Notify("log", n)
}

// ClientsChanged implements Announcer with a status notification.
func (el *EditorLink) ClientsChanged(connected int) {
	_ = el.conn.Notify("status", StatusParams{ConnectedClients: connected, Text: StatusText(connected)})
}
