// Package protocol is the editor link's one definition: the method names and
// the Go types of the params and results of every message between an editor
// plugin and gemini-ide-companion --stdio (docs/editor-link.md). The sidecar
// encodes and decodes exactly these types; the JSON Schema beside this file
// (editor-link.schema.json) is generated from them (go generate), and the
// transcripts in transcripts/ are replayed against the sidecar by the Go
// tests and against each plugin by its own tests.
//
// The package holds data only and imports nothing of the project, so every
// layer may use it.
//
// Struct tags beyond json steer the schema: `schema:"required"` or
// `schema:"optional"` overrides the default (a field is required unless it
// is a pointer or has omitempty), `enum:"a,b"` lists the allowed values.
package protocol

//go:generate go run ./internal/schemagen -out editor-link.schema.json
//go:generate go run ./internal/rpcgen -out rpc/methods_gen.go

// Protocol versions. A plugin names the one it speaks in initialize; the
// sidecar speaks both.
const (
	// Version1 is the original protocol: newline-delimited JSON only, no
	// capabilities or policy in the handshake.
	Version1 = 1
	// Version2 adds client and server capabilities, the shared policy
	// (restart, limits, messages), terminal/env and status text.
	Version2 = 2
	// LatestVersion is the newest version this sidecar speaks.
	LatestVersion = Version2
)

// MaxMessageBytes is the biggest message (one NDJSON line or one
// Content-Length body) the sidecar reads; a bigger one is skipped and
// answered with CodeInvalidRequest.
const MaxMessageBytes = 256 << 20

// The JSON-RPC 2.0 error codes the sidecar answers with are link's
// (link.CodeParseError and the others); docs/editor-link.md says when each
// is sent.

// Methods, by direction. Plugin → sidecar requests:
const (
	// MethodInitialize starts the companion: InitializeParams →
	// InitializeResult.
	MethodInitialize = "initialize"
	// MethodShutdown stops it: no params, result null.
	MethodShutdown = "shutdown"
	// MethodStatusGet reports its state: no params → StatusGetResult.
	MethodStatusGet = "status/get"
	// MethodTerminalEnv returns the environment for an integrated terminal
	// opened now: no params → TerminalEnvResult.
	MethodTerminalEnv = "terminal/env"
)

// Plugin → sidecar notifications:
const (
	MethodFileFocused      = "context/fileFocused"      // FocusParams
	MethodSelectionChanged = "context/selectionChanged" // FocusParams
	MethodFileClosed       = "context/fileClosed"       // FileClosedParams
	MethodFileRenamed      = "context/fileRenamed"      // FileRenamedParams
	MethodFoldersChanged   = "workspace/foldersChanged" // FoldersChangedParams
	MethodTrustChanged     = "workspace/trustChanged"   // TrustChangedParams
	MethodDiffAccepted     = "diff/accepted"            // DiffAcceptedParams
	MethodDiffRejected     = "diff/rejected"            // DiffRejectedParams
)

// Sidecar → plugin requests:
const (
	MethodDiffOpen  = "diff/open"  // DiffOpenParams → DiffOpenResult
	MethodDiffClose = "diff/close" // DiffCloseParams → DiffCloseResult
)

// Sidecar → plugin notifications:
const (
	MethodDiffState  = "diff/state"           // DiffStateParams
	MethodStatus     = "status"               // StatusParams
	MethodLog        = "log"                  // LogParams
	MethodEnvChanged = "workspace/envChanged" // EnvChangedParams
)

// IDE names the editor.
type IDE struct {
	// Name is a short identifier ("neovim", "vim", "emacs").
	Name string `json:"name"`
	// DisplayName is what Gemini CLI shows ("Connected to Neovim").
	DisplayName string `json:"displayName"`
	// RestartCommand (v2) is how the user restarts the companion in this
	// editor (":GeminiRestart"); the sidecar puts it into the messages of
	// Policy.Messages.
	RestartCommand string `json:"restartCommand,omitempty"`
}

// ClientCapabilities (v2) says what the plugin can do. Every field is
// optional; unknown names are ignored.
type ClientCapabilities struct {
	// Diff: the plugin shows diff/open (default true).
	Diff *bool `json:"diff,omitempty"`
	// DiffStates: the plugin shows diff/state notifications; without it
	// their message comes as a log notification (also in protocol 1).
	DiffStates bool `json:"diffStates,omitempty"`
	// UnifiedDiff: the plugin shows the unifiedDiff of diff/open and
	// diff/state (default true; also honoured in protocol 1). With false
	// the sidecar neither computes nor sends it (unifiedDiff is ""): a
	// plugin that shows the two texts side by side saves the diff's time
	// and memory, and the line's length, on large proposals.
	UnifiedDiff *bool `json:"unifiedDiff,omitempty"`
	// Selection: the plugin sends context/selectionChanged.
	Selection bool `json:"selection,omitempty"`
	// Terminal: the plugin opens integrated terminals and asks
	// terminal/env for each.
	Terminal bool `json:"terminal,omitempty"`
	// Diagnostics (v2): the plugin answers editor/getDiagnostics. This
	// and the capabilities below say, per feature, which editor tools
	// (docs/editor-tools.md) the plugin serves; the sidecar sends no
	// request the plugin did not declare, and tells the model instead.
	Diagnostics bool `json:"diagnostics,omitempty"`
	// Definition: the plugin answers editor/getDefinition.
	Definition bool `json:"definition,omitempty"`
	// References: the plugin answers editor/getReferences.
	References bool `json:"references,omitempty"`
	// Hover: the plugin answers editor/getHover.
	Hover bool `json:"hover,omitempty"`
	// DocumentSymbols: the plugin answers editor/getDocumentSymbols.
	DocumentSymbols bool `json:"documentSymbols,omitempty"`
	// WorkspaceSymbols: the plugin answers editor/searchWorkspaceSymbols.
	WorkspaceSymbols bool `json:"workspaceSymbols,omitempty"`
	// OpenEditors: the plugin answers editor/getOpenEditors (else the
	// sidecar answers from the context notifications it got).
	OpenEditors bool `json:"openEditors,omitempty"`
	// OpenFile: the plugin answers editor/openFile.
	OpenFile bool `json:"openFile,omitempty"`
	// Agent: the plugin has an agent panel (agent/* methods).
	Agent bool `json:"agent,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// ProtocolVersion is 1 or 2; anything else is refused with
	// CodeInvalidParams.
	ProtocolVersion *int `json:"protocolVersion" schema:"required" enum:"1,2"`
	// IDE names the editor; name and displayName must be non-empty.
	IDE *IDE `json:"ide" schema:"required"`
	// ProcessID is the PID of the process whose children are the editor's
	// terminal shells; 0 or absent means the sidecar's parent process.
	ProcessID *int `json:"processId,omitempty"`
	// WorkspaceFolders are absolute paths (may be empty).
	WorkspaceFolders []string `json:"workspaceFolders"`
	// IsTrusted is sent only by editors with a real workspace-trust model.
	IsTrusted *bool `json:"isTrusted,omitempty"`
	// Capabilities says what the plugin can do.
	Capabilities ClientCapabilities `json:"capabilities,omitzero"`
}

// ServerCapabilities (v2) says what the sidecar will send this plugin.
type ServerCapabilities struct {
	// DiffStates: diff/state notifications (else their message as log).
	DiffStates bool `json:"diffStates"`
	// EnvChanged: workspace/envChanged after the folders change.
	EnvChanged bool `json:"envChanged"`
	// TerminalEnv: terminal/env is answered.
	TerminalEnv bool `json:"terminalEnv"`
	// StatusText: status notifications carry text.
	StatusText bool `json:"statusText"`
	// Agent: agent/* requests are answered.
	Agent bool `json:"agent"`
	// EditorTools: the sidecar serves the editor tools and sends editor/*
	// requests for the features the plugin declared.
	EditorTools bool `json:"editorTools"`
}

// RestartPolicy says when a plugin restarts a sidecar that exited without
// being asked to.
type RestartPolicy struct {
	// DelaysMs: wait DelaysMs[n] before the restart, n being the number of
	// restarts within the last WindowMs (clamped to the last entry).
	DelaysMs []int `json:"delaysMs"`
	// WindowMs is the window restarts are counted in.
	WindowMs int `json:"windowMs"`
	// MaxRestarts within WindowMs, after which the plugin gives up.
	MaxRestarts int `json:"maxRestarts"`
}

// Limits are the sizes the sidecar works with.
type Limits struct {
	// MaxSelectionBytes: the plugin clips selectedText to this many bytes
	// before sending; the sidecar makes the exact UTF-16 cut.
	MaxSelectionBytes int `json:"maxSelectionBytes"`
	// MaxOpenFiles the CLI is told about (informative; the sidecar enforces
	// it).
	MaxOpenFiles int `json:"maxOpenFiles"`
	// MaxSelectedTextUtf16 code units of selected text the CLI gets
	// (informative; the sidecar enforces it).
	MaxSelectedTextUtf16 int `json:"maxSelectedTextUtf16"`
	// MaxMessageBytes is the biggest message the sidecar reads.
	MaxMessageBytes int `json:"maxMessageBytes"`
	// EditorRequestTimeoutMs (v2) is how long the sidecar waits for the
	// answer to an editor/* request before it tells the model the deadline
	// passed; a plugin gives its language server a little less.
	EditorRequestTimeoutMs int `json:"editorRequestTimeoutMs,omitempty"`
	// MaxToolResults (v2) is the most items (diagnostics, locations,
	// symbols) an editor tool returns; editor/* requests carry it as
	// maxResults.
	MaxToolResults int `json:"maxToolResults,omitempty"`
	// MaxToolResultBytes (v2) is the most bytes of JSON an editor tool
	// returns; the sidecar cuts longer answers and says so.
	MaxToolResultBytes int `json:"maxToolResultBytes,omitempty"`
}

// Messages are the texts a plugin shows about the sidecar's own life, as
// is, after replacing {reason} and {count}.
type Messages struct {
	// Restarting: the sidecar exited and is being restarted.
	Restarting string `json:"restarting"`
	// GaveUp: the sidecar exited MaxRestarts times within WindowMs.
	GaveUp string `json:"gaveUp"`
	// Restarted: the restarted sidecar is up again.
	Restarted string `json:"restarted"`
}

// Policy (v2) is what is the same for every editor, decided by the
// sidecar. A plugin keeps the last policy it got and uses DefaultPolicy's
// values before the first initialize.
type Policy struct {
	Restart  RestartPolicy `json:"restart"`
	Limits   Limits        `json:"limits"`
	Messages Messages      `json:"messages"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	// Port of the MCP server on 127.0.0.1.
	Port int `json:"port"`
	// AuthToken the CLI presents as a Bearer token.
	AuthToken string `json:"authToken"`
	// IDEPID names the discovery file: the PID the CLI's process walk finds.
	IDEPID int `json:"idePid"`
	// DiscoveryFile is its path, "" when none could be written safely.
	DiscoveryFile string `json:"discoveryFile"`
	// Env is what to set in every integrated terminal.
	Env map[string]string `json:"env"`
	// ServerVersion is the sidecar's version.
	ServerVersion string `json:"serverVersion"`
	// PID is the sidecar's own process ID.
	PID int `json:"pid"`
	// ProtocolVersion is the version spoken on this link: the plugin's.
	ProtocolVersion int `json:"protocolVersion"`
	// Capabilities (v2) is what the sidecar will send this plugin.
	Capabilities *ServerCapabilities `json:"capabilities,omitempty"`
	// Policy (v2) is the shared restart, limits and messages policy.
	Policy *Policy `json:"policy,omitempty"`
	// Status (v2) is the status at initialize, as a status notification
	// would carry it, so a plugin has a status line to show at once.
	Status *StatusParams `json:"status,omitempty"`
}

// Status is the state of a running companion, for health checks and
// status lines.
type Status struct {
	// ConnectedClients counts the CLI sessions connected now.
	ConnectedClients int `json:"connectedClients"`
	// Port of the MCP server.
	Port int `json:"port"`
	// DiscoveryFile is the discovery file's path ("" when none).
	DiscoveryFile string `json:"discoveryFile"`
	// IDEPID names the discovery file.
	IDEPID int `json:"idePid"`
	// WorkspaceFolders served now.
	WorkspaceFolders []string `json:"workspaceFolders"`
	// OpenDiffs are the paths with a proposal shown, sorted.
	OpenDiffs []string `json:"openDiffs"`
	// Sessions counts MCP sessions, including ones still initializing.
	Sessions int `json:"sessions"`
	// Goroutines and HeapInuse let health checks and soak tests see that
	// nothing accumulates over days of use.
	Goroutines int    `json:"goroutines"`
	HeapInuse  uint64 `json:"heapInuse"`
}

// StatusGetResult is the result of status/get.
type StatusGetResult struct {
	Status
	// ServerVersion is the sidecar's version.
	ServerVersion string `json:"serverVersion"`
}

// TerminalEnvResult (v2) is the result of terminal/env: what to set in an
// integrated terminal opened now.
type TerminalEnvResult struct {
	// Env maps variable names to values.
	Env map[string]string `json:"env"`
	// DiscoveryFile is the discovery file's path ("" when none).
	DiscoveryFile string `json:"discoveryFile"`
}

// EnvChangedParams are the params of workspace/envChanged: terminals opened
// from now on get Env.
type EnvChangedParams TerminalEnvResult

// Cursor is a position: Line 1-based, Character in UTF-16 code units + 1.
type Cursor struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// FocusParams are the params of context/fileFocused and
// context/selectionChanged.
type FocusParams struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Cursor is where the cursor is.
	Cursor *Cursor `json:"cursor,omitempty"`
	// SelectedText is the selection; absent clears it.
	SelectedText *string `json:"selectedText,omitempty"`
}

// FileClosedParams are the params of context/fileClosed.
type FileClosedParams struct {
	Path string `json:"path"`
}

// FileRenamedParams are the params of context/fileRenamed.
type FileRenamedParams struct {
	OldPath string `json:"oldPath"`
	NewPath string `json:"newPath"`
}

// FoldersChangedParams are the params of workspace/foldersChanged.
type FoldersChangedParams struct {
	// WorkspaceFolders are absolute paths.
	WorkspaceFolders []string `json:"workspaceFolders"`
}

// TrustChangedParams are the params of workspace/trustChanged.
type TrustChangedParams struct {
	IsTrusted *bool `json:"isTrusted" schema:"required"`
}

// DiffAcceptedParams are the params of diff/accepted: the user accepted the
// proposal shown for FilePath.
type DiffAcceptedParams struct {
	FilePath string `json:"filePath"`
	// Content is the proposed side including the user's own edits.
	Content *string `json:"content" schema:"required"`
	// DiffID echoes diff/open's diffId; absent applies to whatever
	// proposal is shown for FilePath (protocol-1 plugins).
	DiffID *uint64 `json:"diffId,omitempty"`
	// OverDiskChange: the user chose to accept although the file changed
	// or was deleted on disk since the proposal was shown.
	OverDiskChange bool `json:"overDiskChange,omitempty"`
}

// DiffRejectedParams are the params of diff/rejected.
type DiffRejectedParams struct {
	FilePath string `json:"filePath"`
	// DiffID as in DiffAcceptedParams.
	DiffID *uint64 `json:"diffId,omitempty"`
}

// DiffOpenParams are the params of diff/open: what the editor needs to show
// a proposed change.
type DiffOpenParams struct {
	// FilePath is the absolute path of the file.
	FilePath string `json:"filePath"`
	// NewContent is the proposed text.
	NewContent string `json:"newContent"`
	// OriginalContent is the file now; null when it does not exist yet.
	OriginalContent *string `json:"originalContent" schema:"required"`
	// UnifiedDiff is from OriginalContent to NewContent.
	UnifiedDiff string `json:"unifiedDiff"`
	// Title names the view.
	Title string `json:"title"`
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

// DiffOpenResult is the result of diff/open, sent once the view is shown.
type DiffOpenResult struct{}

// DiffCloseParams are the params of diff/close.
type DiffCloseParams struct {
	FilePath string `json:"filePath"`
}

// DiffCloseResult is the result of diff/close: the proposed side as it is
// now, null when there is no such view.
type DiffCloseResult struct {
	Content *string `json:"content" schema:"required"`
}

// The states of diff/state (see docs/editor-link.md).
const (
	StateQueued            = "queued"
	StateOrphaned          = "orphaned"
	StateChangedOnDisk     = "changedOnDisk"
	StateDeletedOnDisk     = "deletedOnDisk"
	StateUnchangedOnDisk   = "unchangedOnDisk"
	StateNeedsConfirmation = "needsConfirmation"
	StateExpired           = "expired"
	StateUndelivered       = "undelivered"
)

// DiffStateParams are the params of diff/state: something happened to a
// proposal that the user must see. Message is the text to show as is, so
// every plugin says the same thing.
type DiffStateParams struct {
	FilePath string `json:"filePath"`
	DiffID   uint64 `json:"diffId"`
	State    string `json:"state" enum:"queued,orphaned,changedOnDisk,deletedOnDisk,unchangedOnDisk,needsConfirmation,expired,undelivered"`
	Message  string `json:"message"`
	// DiskContent is the file on disk now (changedOnDisk, unchangedOnDisk;
	// absent when deleted): the new "before" side of the view.
	DiskContent *string `json:"diskContent,omitempty"`
	// UnifiedDiff is from DiskContent to the proposal.
	UnifiedDiff string `json:"unifiedDiff,omitempty"`
	// Content is the text the user accepted, for expired and undelivered
	// decisions: nothing was written, and the user may want to save it.
	Content *string `json:"content,omitempty"`
	// Queued counts the proposals waiting behind the one shown for the file
	// (state queued; sent again with no message when the count drops).
	Queued int `json:"queued"`
}

// StatusParams are the params of status, sent whenever a CLI connects or
// goes.
type StatusParams struct {
	// ConnectedClients counts the CLI sessions connected now.
	ConnectedClients int `json:"connectedClients"`
	// Text (v2, with capability statusText) is the status line to show as
	// is.
	Text string `json:"text,omitempty"`
}

// Log levels.
const (
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// LogParams are the params of log: a message for the user, shown as is.
type LogParams struct {
	Level   string `json:"level" enum:"info,warn,error"`
	Message string `json:"message"`
}
