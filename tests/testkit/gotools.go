package testkit

import (
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

func pos(line, char int) protocol.Position { return protocol.Position{Line: line, Character: char} }

// CheckGoTools calls each editor tool about the Go workspace ws through
// tc, as an agent does, and checks what the model reads: gopls' type
// error, Add's definition, references, hover, helper.go's outline, the
// workspace symbol, each at the right line and character although line 6
// has multi-byte characters before Add; and the errors of a position past
// the end of a line and of notes (a file no language server answers for),
// which must start with "<editor> has no language server for notes.txt".
// The editor has loaded main.go and knows gopls' diagnostics for it.
// flatOutline: the editor's language client asks for flat outlines (ALE
// does: hierarchicalDocumentSymbolSupport false), for which gopls leaves
// out what is inside a type.
func CheckGoTools(t *testing.T, tc *ToolsClient, ws GoWorkspace, editor, notes string, flatOutline bool, more func() string) {
	call := func(t *testing.T, tool string, args map[string]any, result any) {
		t.Helper()
		tc.MustCall(t, tool, args, result, more)
	}

	t.Run("getDiagnostics", func(t *testing.T) {
		var res protocol.DiagnosticsResult
		call(t, "getDiagnostics", map[string]any{"path": ws.Main}, &res)
		var found *protocol.Diagnostic
		for i, d := range res.Diagnostics {
			if strings.Contains(d.Message, ws.ErrMessage) {
				found = &res.Diagnostics[i]
			}
		}
		if found == nil {
			t.Fatalf("no diagnostic %q in %+v", ws.ErrMessage, res.Diagnostics)
		}
		want := protocol.Range{Start: pos(ws.ErrLine, ws.ErrColumn), End: pos(ws.ErrLine, ws.ErrEndColumn)}
		if found.Path != ws.Main || found.Range != want || found.Severity != "error" {
			t.Errorf("diagnostic = %+v, want path %s, range %+v, severity error", *found, ws.Main, want)
		}
		if found.Source == "" || found.Code == "" {
			t.Errorf("diagnostic has no source or code: %+v", *found)
		}
		// Every file's, errors only: main.go's error first, nothing less
		// severe.
		var all protocol.DiagnosticsResult
		call(t, "getDiagnostics", map[string]any{"severity": "error"}, &all)
		if len(all.Diagnostics) == 0 || all.Diagnostics[0].Path != ws.Main {
			t.Errorf("all diagnostics (errors) = %+v, want main.go's error first", all.Diagnostics)
		}
		for _, d := range all.Diagnostics {
			if d.Severity != "error" {
				t.Errorf("severity error let through %+v", d)
			}
		}
	})

	t.Run("getDefinition", func(t *testing.T) {
		var res protocol.LocationsResult
		call(t, "getDefinition", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn}, &res)
		want := protocol.Location{
			Path:  ws.Helper,
			Range: protocol.Range{Start: pos(ws.DefLine, ws.DefColumn), End: pos(ws.DefLine, ws.DefColumn+3)},
			Text:  "func Add(a, b int) int {",
		}
		if len(res.Locations) != 1 || res.Locations[0] != want {
			t.Fatalf("definition of Add = %+v, want %+v", res.Locations, want)
		}
	})

	t.Run("getReferences", func(t *testing.T) {
		var res protocol.LocationsResult
		call(t, "getReferences", map[string]any{"path": ws.Helper, "line": ws.DefLine, "character": ws.DefColumn + 1}, &res)
		var use *protocol.Location
		for i, l := range res.Locations {
			if l.Path == ws.Main {
				use = &res.Locations[i]
			}
		}
		want := protocol.Range{Start: pos(ws.UseLine, ws.UseColumn), End: pos(ws.UseLine, ws.UseColumn+3)}
		if len(res.Locations) != 2 || use == nil || use.Range != want || !strings.Contains(use.Text, "total := Add(1, 2)") {
			t.Fatalf("references of Add = %+v, want the declaration and main.go at %+v", res.Locations, want)
		}
	})

	t.Run("getHover", func(t *testing.T) {
		var res protocol.HoverResult
		call(t, "getHover", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn + 1}, &res)
		if !strings.Contains(res.Contents, "func Add(a int, b int) int") || !strings.Contains(res.Contents, "Add returns the sum of a and b.") {
			t.Errorf("hover over Add = %q, want its signature and documentation", res.Contents)
		}
		if res.Range == nil || res.Range.Start != pos(ws.UseLine, ws.UseColumn) {
			t.Errorf("hover range = %+v, want it to start at %d:%d", res.Range, ws.UseLine, ws.UseColumn)
		}
	})

	t.Run("getDocumentSymbols", func(t *testing.T) {
		var res protocol.DocumentSymbolsResult
		call(t, "getDocumentSymbols", map[string]any{"path": ws.Helper}, &res)
		byName := map[string]protocol.DocumentSymbol{}
		for _, s := range res.Symbols {
			byName[s.Name] = s
		}
		add, counter := byName["Add"], byName["Counter"]
		// gopls' range of a function starts at its doc comment.
		if add.Kind != "function" || add.Range.Start != pos(ws.DefLine-1, 1) && add.Range.Start != pos(ws.DefLine, 1) {
			t.Errorf("Add = %+v, want a function starting on line %d", add, ws.DefLine)
		}
		if flatOutline {
			if counter.Kind != "struct" || counter.Range.Start.Line != 9 {
				t.Errorf("Counter = %+v, want a struct on line 9", counter)
			}
		} else if counter.Kind != "struct" || len(counter.Children) != 1 || counter.Children[0].Name != "N" || counter.Children[0].Kind != "field" {
			t.Errorf("Counter = %+v, want a struct with field N", counter)
		}
	})

	t.Run("searchWorkspaceSymbols", func(t *testing.T) {
		var res protocol.WorkspaceSymbolsResult
		call(t, "searchWorkspaceSymbols", map[string]any{"query": "Add"}, &res)
		for _, s := range res.Symbols {
			if s.Name == "Add" && s.Path == ws.Helper && s.Kind == "function" && s.Range.Start == pos(ws.DefLine, ws.DefColumn) {
				return
			}
		}
		t.Errorf("workspace symbols for Add = %+v, want Add in helper.go at %d:%d", res.Symbols, ws.DefLine, ws.DefColumn)
	})

	t.Run("errors", func(t *testing.T) {
		// The plugin's message, as is: the link kept its code.
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"getHover", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": 200}, "character 200 is past the end of line 6 of main.go (39 characters)"},
			{"getDefinition", map[string]any{"path": notes, "line": 1, "character": 1}, editor + " has no language server for notes.txt"},
		} {
			text, isErr := tc.Call(t, c.tool, c.args)
			if !isErr || !strings.HasPrefix(text, c.want) {
				t.Errorf("%s %v: %q (error %v), want an error saying %q", c.tool, c.args, text, isErr, c.want)
			}
		}
	})
}

// CheckOpenEditors calls getOpenEditors through tc, as an agent does, after
// the editor opened helper.go, changed it without saving and went back to
// main.go with the cursor on Add's use, and checks what the model reads:
// main.go first, active, clean, the cursor at Add in characters; helper.go
// open, not active, with unsaved changes.
func CheckOpenEditors(t *testing.T, tc *ToolsClient, ws GoWorkspace, more func() string) {
	t.Helper()
	var res protocol.OpenEditorsResult
	tc.MustCall(t, "getOpenEditors", map[string]any{}, &res, more)
	if len(res.Editors) < 2 {
		t.Fatalf("open editors = %+v, want main.go and helper.go", res.Editors)
	}
	first := res.Editors[0]
	if first.Path != ws.Main || !first.Active || first.Cursor == nil || *first.Cursor != pos(ws.UseLine, ws.UseColumn) || first.Dirty {
		t.Errorf("first editor = %+v (cursor %+v), want main.go, active, clean, cursor at %d:%d", first, first.Cursor, ws.UseLine, ws.UseColumn)
	}
	var helper *protocol.OpenEditor
	for i, e := range res.Editors {
		if e.Path == ws.Helper {
			helper = &res.Editors[i]
		}
	}
	if helper == nil || !helper.Dirty || helper.Active {
		t.Errorf("helper.go = %+v, want it open, not active, with unsaved changes", helper)
	}
}
