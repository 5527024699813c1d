package protocol

// Direction says who sends a message.
type Direction string

// The two directions of the link.
const (
	FromPlugin  Direction = "plugin"
	FromSidecar Direction = "sidecar"
)

// Method describes one method of the editor link: the table below is what
// the schema generator, the documentation and the tests walk, so a method
// added here is added everywhere.
type Method struct {
	// Name is the JSON-RPC method name.
	Name string
	// From is who sends it.
	From Direction
	// Notification is true for notifications (no id, no answer).
	Notification bool
	// Since is the protocol version that introduced it.
	Since int
	// Params is a zero value of the params type; nil means no params
	// (absent, null or {}).
	Params any
	// Result is a zero value of the result type of a request; nil means
	// the result is null.
	Result any
	// Doc says what it is for, in one sentence.
	Doc string
}

// Methods lists every method of the link, in the order docs/editor-link.md
// presents them. Agent panel methods (agent/*) are defined by their own
// package and registered on the dispatcher separately.
var Methods = []Method{
	{Name: MethodInitialize, From: FromPlugin, Since: Version1, Params: InitializeParams{}, Result: InitializeResult{},
		Doc: "Start the companion: MCP server, discovery file, terminal environment."},
	{Name: MethodShutdown, From: FromPlugin, Since: Version1,
		Doc: "Stop serving, delete the discovery file and exit 0 after the reply."},
	{Name: MethodStatusGet, From: FromPlugin, Since: Version1, Result: StatusGetResult{},
		Doc: "The companion's state, for health checks and status lines."},
	{Name: MethodTerminalEnv, From: FromPlugin, Since: Version2, Result: TerminalEnvResult{},
		Doc: "The variables to set in an integrated terminal opened now."},
	{Name: MethodFileFocused, From: FromPlugin, Notification: true, Since: Version1, Params: FocusParams{},
		Doc: "A file-backed buffer became the active editor."},
	{Name: MethodSelectionChanged, From: FromPlugin, Notification: true, Since: Version1, Params: FocusParams{},
		Doc: "The cursor or selection moved in the active file; no selectedText clears it."},
	{Name: MethodFileClosed, From: FromPlugin, Notification: true, Since: Version1, Params: FileClosedParams{},
		Doc: "The file's last window or buffer closed."},
	{Name: MethodFileRenamed, From: FromPlugin, Notification: true, Since: Version1, Params: FileRenamedParams{},
		Doc: "A file was renamed or moved."},
	{Name: MethodFoldersChanged, From: FromPlugin, Notification: true, Since: Version1, Params: FoldersChangedParams{},
		Doc: "Workspace folders were added or removed; workspace/envChanged follows."},
	{Name: MethodTrustChanged, From: FromPlugin, Notification: true, Since: Version1, Params: TrustChangedParams{},
		Doc: "The editor's workspace trust changed."},
	{Name: MethodDiffAccepted, From: FromPlugin, Notification: true, Since: Version1, Params: DiffAcceptedParams{},
		Doc: "The user accepted a proposal, with their own edits."},
	{Name: MethodDiffRejected, From: FromPlugin, Notification: true, Since: Version1, Params: DiffRejectedParams{},
		Doc: "The user rejected a proposal."},
	{Name: MethodDiffOpen, From: FromSidecar, Since: Version1, Params: DiffOpenParams{}, Result: DiffOpenResult{},
		Doc: "Show a proposed change; answer once it is visible."},
	{Name: MethodDiffClose, From: FromSidecar, Since: Version1, Params: DiffCloseParams{}, Result: DiffCloseResult{},
		Doc: "Close the view and return the proposed side as it is now."},
	{Name: MethodDiffState, From: FromSidecar, Notification: true, Since: Version1, Params: DiffStateParams{},
		Doc: "Something happened to a shown proposal (queued, orphaned, changed on disk, expired...)."},
	{Name: MethodStatus, From: FromSidecar, Notification: true, Since: Version1, Params: StatusParams{},
		Doc: "A CLI connected or went; text (v2) is the status line to show."},
	{Name: MethodLog, From: FromSidecar, Notification: true, Since: Version1, Params: LogParams{},
		Doc: "A message for the user, shown as is."},
	{Name: MethodEnvChanged, From: FromSidecar, Notification: true, Since: Version1, Params: EnvChangedParams{},
		Doc: "Terminals opened from now on get this environment."},
}
