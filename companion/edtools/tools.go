// Package edtools is the editor tools (docs/editor-tools.md): the MCP tools
// that give a model what the user's editor knows (diagnostics, definitions,
// references, hover, outlines, workspace symbols, open editors) and let it
// show a file. The table of tools is defined here once, for the companion's
// endpoints and for the stdio server of `gemini-ide-companion tools`, which
// forwards to them. A Service checks a call's arguments, asks the editor
// through the editor link's editor/* requests with a deadline, and caps
// the answer.
package edtools

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// Tool is one editor tool: its MCP name and input schema, and the editor
// link request and plugin capability behind it.
type Tool struct {
	// Name is the MCP tool name.
	Name string
	// Method is the editor/* request the plugin answers.
	Method string
	// Capability is the ClientCapabilities field (JSON name) that says the
	// plugin answers Method.
	Capability string
	// Description tells the model what the tool gives and when to use it.
	Description string
	// Input is the JSON Schema of the arguments.
	Input map[string]any
	// Shows: the tool changes what the user sees (openFile); the others
	// only read, and say so to the client (readOnlyHint), which may then
	// run them without asking.
	Shows bool
}

func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var (
	pathProp = map[string]any{"type": "string", "description": "Absolute path of the file."}
	lineProp = map[string]any{"type": "integer", "minimum": 1, "description": "1-based line number."}
	charProp = map[string]any{"type": "integer", "minimum": 1, "description": "1-based column, counted in characters (not bytes)."}
	position = obj([]string{"path", "line", "character"}, map[string]any{"path": pathProp, "line": lineProp, "character": charProp})
)

const positions = " Lines and characters are 1-based; characters are counted in characters, not bytes."

// Tools lists the editor tools, in the order of docs/editor-tools.md.
var Tools = []Tool{
	{Name: "getDiagnostics", Method: protocol.MethodEditorGetDiagnostics, Capability: "diagnostics",
		Description: "The errors and warnings the user's editor shows (compiler, linter, language server): each with its file, range, severity, source, code and message. " +
			"Give path for one file, or omit it for every file the editor knows diagnostics for. Use it to see what is broken before or after changing code." + positions,
		Input: obj(nil, map[string]any{
			"path":     map[string]any{"type": "string", "description": "Absolute path of a file; omit for every file the editor knows diagnostics for."},
			"severity": map[string]any{"type": "string", "enum": []string{"error", "warning", "info", "hint"}, "description": "The least severe to include: warning means errors and warnings. Omit for all."},
		})},
	{Name: "getDefinition", Method: protocol.MethodEditorGetDefinition, Capability: "definition",
		Description: "Where the symbol at a position is defined, as the editor's language tooling knows it: locations, each with the text of its line. " +
			"Use it to find the code behind a name instead of searching for it." + positions,
		Input: position},
	{Name: "getReferences", Method: protocol.MethodEditorGetReferences, Capability: "references",
		Description: "Every place the symbol at a position is used, as the editor's language tooling knows it: locations, each with the text of its line. " +
			"Use it before changing or renaming a function, type or variable, to find its callers." + positions,
		Input: position},
	{Name: "getHover", Method: protocol.MethodEditorGetHover, Capability: "hover",
		Description: "The type and documentation of the symbol at a position, as the editor shows it on hover." + positions,
		Input:       position},
	{Name: "getDocumentSymbols", Method: protocol.MethodEditorGetDocumentSymbols, Capability: "documentSymbols",
		Description: "The outline of a file: its functions, types, methods and variables with their kinds and ranges, nested. " +
			"Use it to learn what a file contains without reading all of it." + positions,
		Input: obj([]string{"path"}, map[string]any{"path": pathProp})},
	{Name: "searchWorkspaceSymbols", Method: protocol.MethodEditorSearchWorkspaceSymbols, Capability: "workspaceSymbols",
		Description: "Symbols (functions, types, ...) anywhere in the workspace whose names match a query, with their files and ranges." + positions,
		Input: obj([]string{"query"}, map[string]any{
			"query": map[string]any{"type": "string", "maxLength": protocol.MaxQueryChars, "description": "Text to look for in symbol names."},
		})},
	{Name: "getOpenEditors", Method: protocol.MethodEditorGetOpenEditors, Capability: "openEditors",
		Description: "The files open in the user's editor: which one is active, the cursor, the selection and its text, and which have unsaved changes." + positions,
		Input:       obj(nil, map[string]any{})},
	{Name: "openFile", Method: protocol.MethodEditorOpenFile, Capability: "openFile", Shows: true,
		Description: "Show a file to the user in their editor, at a line, or with lines line..endLine selected. Use it to point the user at something; it changes nothing.",
		Input: obj([]string{"path"}, map[string]any{
			"path":    pathProp,
			"line":    map[string]any{"type": "integer", "minimum": 1, "description": "1-based line to show."},
			"endLine": map[string]any{"type": "integer", "minimum": 1, "description": "With line: the last line of the range to select."},
		})},
}

// Lookup returns the tool named name.
func Lookup(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Result is a tool's answer: Text is what the model reads (the output's
// JSON, or the error), IsError marks an error. It is also the JSON of the
// companion's /tools endpoint.
type Result struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError,omitempty"`
}

// CallFunc answers one call of the tool named name with the arguments
// args (a JSON object, or empty).
type CallFunc func(ctx context.Context, name string, args json.RawMessage) Result

// Register adds every editor tool to srv, each answered by call.
func Register(srv *mcp.Server, call CallFunc) {
	for _, t := range Tools {
		no := false
		ann := &mcp.ToolAnnotations{ReadOnlyHint: !t.Shows, DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no}
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Input, Annotations: ann},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r := call(ctx, t.Name, req.Params.Arguments)
				return &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}}, nil
			})
	}
}
