package protocol

// The editor's knowledge, for the model (docs/editor-tools.md): requests the
// sidecar sends a plugin when an agent calls one of the editor tools
// (getDiagnostics, getDefinition...). Each is sent only to a plugin that
// declared the matching capability in initialize; the plugin answers from
// the editor's own tooling (its language client, linter, tags, index).
//
// Positions here are as a model reads them, not as LSP counts them: Line is
// 1-based and Character is the 1-based column counted in characters
// (Unicode code points). The plugin converts (LSP is 0-based, in UTF-16
// units). This differs from Cursor, which counts UTF-16 units.

// Sidecar → plugin requests of the editor tools:
const (
	MethodEditorGetDiagnostics         = "editor/getDiagnostics"         // DiagnosticsParams → DiagnosticsResult
	MethodEditorGetDefinition          = "editor/getDefinition"          // PositionParams → LocationsResult
	MethodEditorGetReferences          = "editor/getReferences"          // PositionParams → LocationsResult
	MethodEditorGetHover               = "editor/getHover"               // PositionParams → HoverResult
	MethodEditorGetDocumentSymbols     = "editor/getDocumentSymbols"     // DocumentSymbolsParams → DocumentSymbolsResult
	MethodEditorSearchWorkspaceSymbols = "editor/searchWorkspaceSymbols" // WorkspaceSymbolsParams → WorkspaceSymbolsResult
	MethodEditorGetOpenEditors         = "editor/getOpenEditors"         // OpenEditorsParams → OpenEditorsResult
	MethodEditorOpenFile               = "editor/openFile"               // OpenFileParams → Empty
)

// Error codes of the editor tools' requests, in the JSON-RPC range for
// implementations. A plugin answers with them; the sidecar passes the
// message on to the model as the tool's error, as is.
const (
	// CodeNotAvailable: the editor has no source for this feature here (no
	// language server for this file, no linter, no tags). The message says
	// what to install or enable, naming the editor and the file: "Vim has
	// no language server for main.go: install ALE".
	CodeNotAvailable = -32010
	// CodeDeadlinePassed: the editor's own tooling (its language server)
	// did not answer within the plugin's timeout. The sidecar also tells
	// the model so, without a code, when the plugin itself does not answer
	// within policy.limits.editorRequestTimeoutMs.
	CodeDeadlinePassed = -32011
)

// The editor tools' deadline and caps (policy.limits, docs/editor-tools.md).
const (
	// EditorRequestTimeoutMs is how long the sidecar waits for the answer
	// to an editor/* request.
	EditorRequestTimeoutMs = 10000
	// MaxToolResults is the most items an editor tool returns.
	MaxToolResults = 200
	// MaxToolResultBytes is the most bytes of JSON an editor tool returns.
	MaxToolResultBytes = 64 << 10
	// MaxQueryChars is the longest searchWorkspaceSymbols query.
	MaxQueryChars = 256
	// MaxLocationTextChars is the longest Location.Text the model gets.
	MaxLocationTextChars = 400
)

// Severities of a diagnostic, most severe first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
	SeverityHint    = "hint"
)

// SymbolKinds are the kinds of a symbol: LSP's SymbolKind 1..26 in order
// ("file" is 1, "typeParameter" is 26), then "other" for anything an
// editor cannot map (a tag kind with no equivalent).
var SymbolKinds = []string{
	"file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable",
	"constant", "string", "number", "boolean", "array", "object", "key",
	"null", "enumMember", "struct", "event", "operator", "typeParameter",
	"other",
}

// Position is a place in a file as a model reads it: Line is 1-based;
// Character is the 1-based column counted in characters (Unicode code
// points), neither bytes nor UTF-16 units.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of text: End is exclusive, the position just after its
// last character (as in LSP); an empty range has End equal to Start.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is one problem the editor knows of in a file.
type Diagnostic struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Range the problem covers.
	Range Range `json:"range"`
	// Severity is error, warning, info or hint.
	Severity string `json:"severity" enum:"error,warning,info,hint"`
	// Source is the tool that reported it ("compiler", "gopls", "eslint").
	Source string `json:"source,omitempty"`
	// Code is the tool's code for it, as text.
	Code string `json:"code,omitempty"`
	// Message is what the tool says.
	Message string `json:"message"`
}

// DiagnosticsParams are the params of editor/getDiagnostics.
type DiagnosticsParams struct {
	// Path limits the answer to one file (absolute); absent means every
	// file the editor knows diagnostics for.
	Path string `json:"path,omitempty"`
	// Severity is the least severe to include: "warning" means errors and
	// warnings; absent means all.
	Severity string `json:"severity,omitempty" enum:"error,warning,info,hint"`
	// MaxResults: the plugin should send at most this many, most severe
	// first, and set truncated when it cut (encoding thousands costs it
	// and the link more than the cut); the sidecar cuts to it anyway.
	MaxResults int `json:"maxResults"`
}

// DiagnosticsResult is the result of editor/getDiagnostics and the output
// of the getDiagnostics tool.
type DiagnosticsResult struct {
	// Diagnostics, most severe first, then by path and position.
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Truncated: there were more than these (cut at maxResults or at the
	// size cap).
	Truncated bool `json:"truncated,omitempty"`
}

// PositionParams are the params of editor/getDefinition,
// editor/getReferences and editor/getHover: a place in a file.
type PositionParams struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Line is 1-based.
	Line int `json:"line"`
	// Character is the 1-based column in characters (code points).
	Character int `json:"character"`
	// MaxResults: the plugin may stop after this many locations and set
	// truncated; the sidecar cuts to it anyway (0 for getHover).
	MaxResults int `json:"maxResults,omitempty"`
}

// Location is a place a symbol is defined or used.
type Location struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Range of the symbol there.
	Range Range `json:"range"`
	// Text is the text of the range's first line, as the editor has it
	// (unsaved changes included), without its line break. A plugin may
	// leave it out: the sidecar then reads the line from the file on disk.
	Text string `json:"text,omitempty"`
}

// LocationsResult is the result of editor/getDefinition and
// editor/getReferences, and the output of their tools.
type LocationsResult struct {
	// Locations found; empty when there are none.
	Locations []Location `json:"locations"`
	// Truncated: there were more than these.
	Truncated bool `json:"truncated,omitempty"`
}

// HoverResult is the result of editor/getHover and the output of the
// getHover tool.
type HoverResult struct {
	// Contents is the type and documentation text at the position
	// (Markdown or plain text); "" when the editor knows nothing there.
	Contents string `json:"contents"`
	// Range the hover applies to, when the editor says.
	Range *Range `json:"range,omitempty"`
	// Truncated: Contents was cut at the size cap.
	Truncated bool `json:"truncated,omitempty"`
}

// DocumentSymbolsParams are the params of editor/getDocumentSymbols.
type DocumentSymbolsParams struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// MaxResults: the plugin may stop after this many symbols (counting
	// children) and set truncated; the sidecar cuts to it anyway.
	MaxResults int `json:"maxResults"`
}

// DocumentSymbol is one entry of a file's outline.
type DocumentSymbol struct {
	// Name of the symbol.
	Name string `json:"name"`
	// Kind is one of SymbolKinds (LSP's names; "other" when unknown).
	Kind string `json:"kind" enum:"file,module,namespace,package,class,method,property,field,constructor,enum,interface,function,variable,constant,string,number,boolean,array,object,key,null,enumMember,struct,event,operator,typeParameter,other"`
	// Detail is more about it, such as a signature.
	Detail string `json:"detail,omitempty"`
	// Range is the whole symbol, body included; an editor that knows only
	// where it starts (tags, imenu) gives an empty range there.
	Range Range `json:"range"`
	// Children are the symbols inside it.
	Children []DocumentSymbol `json:"children,omitempty"`
}

// DocumentSymbolsResult is the result of editor/getDocumentSymbols and
// the output of the getDocumentSymbols tool.
type DocumentSymbolsResult struct {
	// Symbols is the outline: the top-level symbols, in file order.
	Symbols []DocumentSymbol `json:"symbols"`
	// Truncated: there were more than these.
	Truncated bool `json:"truncated,omitempty"`
}

// WorkspaceSymbolsParams are the params of editor/searchWorkspaceSymbols.
type WorkspaceSymbolsParams struct {
	// Query is the text to look for in symbol names (at most 256
	// characters; the sidecar refuses longer ones).
	Query string `json:"query"`
	// MaxResults: the plugin may stop after this many and set truncated;
	// the sidecar cuts to it anyway.
	MaxResults int `json:"maxResults"`
}

// WorkspaceSymbol is a symbol found in the workspace.
type WorkspaceSymbol struct {
	// Name of the symbol.
	Name string `json:"name"`
	// Kind as in DocumentSymbol.
	Kind string `json:"kind" enum:"file,module,namespace,package,class,method,property,field,constructor,enum,interface,function,variable,constant,string,number,boolean,array,object,key,null,enumMember,struct,event,operator,typeParameter,other"`
	// Path of its file, absolute.
	Path string `json:"path"`
	// Range of the symbol (or of its name) there.
	Range Range `json:"range"`
	// ContainerName is what it is inside (a type, a package), if known.
	ContainerName string `json:"containerName,omitempty"`
}

// WorkspaceSymbolsResult is the result of editor/searchWorkspaceSymbols and
// the output of the searchWorkspaceSymbols tool.
type WorkspaceSymbolsResult struct {
	// Symbols found; empty when there are none.
	Symbols []WorkspaceSymbol `json:"symbols"`
	// Truncated: there were more than these.
	Truncated bool `json:"truncated,omitempty"`
}

// OpenEditorsParams are the params of editor/getOpenEditors.
type OpenEditorsParams struct {
	// MaxResults: the plugin may stop after this many files (the active
	// one first) and set truncated; the sidecar cuts to it anyway.
	MaxResults int `json:"maxResults"`
}

// OpenEditor is a file open in the editor.
type OpenEditor struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Active: the editor the user is in (at most one).
	Active bool `json:"active,omitempty"`
	// Cursor is where the cursor is in it.
	Cursor *Position `json:"cursor,omitempty"`
	// Selection is the selected range, if any.
	Selection *Range `json:"selection,omitempty"`
	// SelectedText is the selected text, if any.
	SelectedText string `json:"selectedText,omitempty"`
	// Dirty: it has unsaved changes.
	Dirty bool `json:"dirty,omitempty"`
}

// OpenEditorsResult is the result of editor/getOpenEditors and the output
// of the getOpenEditors tool.
type OpenEditorsResult struct {
	// Editors are the open files, the active one first.
	Editors []OpenEditor `json:"editors"`
	// Truncated: there were more than these.
	Truncated bool `json:"truncated,omitempty"`
}

// OpenFileParams are the params of editor/openFile: show a location to
// the user.
type OpenFileParams struct {
	// Path of the file, absolute.
	Path string `json:"path"`
	// Line to show and put the cursor on (1-based); absent keeps the
	// file's last position.
	Line int `json:"line,omitempty"`
	// EndLine, with Line, selects or highlights Line..EndLine.
	EndLine int `json:"endLine,omitempty"`
}
