package protocol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol/internal/rpcsrc"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol/internal/schema"
)

// TestSchemaIsUpToDate fails when editor-link.schema.json is not what the
// Go types generate: a type changed without go generate.
func TestSchemaIsUpToDate(t *testing.T) {
	want, err := schema.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("editor-link.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("editor-link.schema.json is stale: run go generate ./companion/protocol")
	}
}

// TestSchemaValidatesWhatTheTypesEncode resolves the schema and checks
// that full values of every params and result type, as Go encodes them,
// are valid, and that a value missing a required field or with a wrong
// enum value is not.
func TestSchemaValidatesWhatTheTypesEncode(t *testing.T) {
	var root map[string]any
	data, err := os.ReadFile("editor-link.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	validate := func(def string, v any) error {
		doc := map[string]any{"$schema": root["$schema"], "$defs": root["$defs"], "$ref": "#/$defs/" + def}
		raw, _ := json.Marshal(doc)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("resolve %s: %v", def, err)
		}
		enc, _ := json.Marshal(v)
		var inst any
		_ = json.Unmarshal(enc, &inst)
		return rs.Validate(inst)
	}
	text, one, yes := "text", 1, true
	id := uint64(7)
	samples := map[string]any{
		"InitializeParams": protocol.InitializeParams{ProtocolVersion: &one, IDE: &protocol.IDE{Name: "vim", DisplayName: "Vim", RestartCommand: ":GeminiRestart"},
			ProcessID: &one, WorkspaceFolders: []string{"/w"}, IsTrusted: &yes, Capabilities: protocol.ClientCapabilities{Diff: &yes, Terminal: true}},
		"InitializeResult": protocol.InitializeResult{Port: 1, Env: map[string]string{"A": "b"}, ProtocolVersion: 2,
			Capabilities: &protocol.ServerCapabilities{DiffStates: true}, Policy: &protocol.Policy{Restart: protocol.RestartPolicy{DelaysMs: []int{100}}}},
		"StatusGetResult":    protocol.StatusGetResult{Status: protocol.Status{WorkspaceFolders: []string{"/w"}}, ServerVersion: "1"},
		"TerminalEnvResult":  protocol.TerminalEnvResult{Env: map[string]string{}},
		"FocusParams":        protocol.FocusParams{Path: "/w/a", Cursor: &protocol.Cursor{Line: 1, Character: 1}, SelectedText: &text},
		"DiffAcceptedParams": protocol.DiffAcceptedParams{FilePath: "/w/a", Content: &text, DiffID: &id, OverDiskChange: true},
		"DiffOpenParams":     protocol.DiffOpenParams{FilePath: "/w/a", OriginalContent: nil, DiffID: 3},
		"DiffCloseResult":    protocol.DiffCloseResult{Content: nil},
		"DiffStateParams":    protocol.DiffStateParams{FilePath: "/w/a", State: protocol.StateExpired, Content: &text},
		"StatusParams":       protocol.StatusParams{ConnectedClients: 1, Text: "Gemini: 1 CLI connected"},
		"LogParams":          protocol.LogParams{Level: protocol.LevelWarn, Message: "m"},
		"DiagnosticsParams":  protocol.DiagnosticsParams{Path: "/w/a", Severity: protocol.SeverityWarning, MaxResults: 200},
		"DiagnosticsResult": protocol.DiagnosticsResult{Diagnostics: []protocol.Diagnostic{{Path: "/w/a", Severity: protocol.SeverityError,
			Range: protocol.Range{Start: protocol.Position{Line: 3, Character: 2}, End: protocol.Position{Line: 3, Character: 9}}, Source: "compiler", Code: "InvalidAssign", Message: "m"}}, Truncated: true},
		"PositionParams":  protocol.PositionParams{Path: "/w/a", Line: 1, Character: 1, MaxResults: 5},
		"LocationsResult": protocol.LocationsResult{Locations: []protocol.Location{{Path: "/w/a", Text: "func f() {"}}},
		"HoverResult":     protocol.HoverResult{Contents: "func f()", Range: &protocol.Range{}},
		"DocumentSymbolsResult": protocol.DocumentSymbolsResult{Symbols: []protocol.DocumentSymbol{{Name: "T", Kind: "struct",
			Children: []protocol.DocumentSymbol{{Name: "f", Kind: "field"}}}}},
		"WorkspaceSymbolsResult": protocol.WorkspaceSymbolsResult{Symbols: []protocol.WorkspaceSymbol{{Name: "f", Kind: "function", Path: "/w/a", ContainerName: "p"}}},
		"OpenEditorsResult": protocol.OpenEditorsResult{Editors: []protocol.OpenEditor{{Path: "/w/a", Active: true, Cursor: &protocol.Position{Line: 1, Character: 1},
			Selection: &protocol.Range{}, SelectedText: "x", Dirty: true}}},
		"OpenFileParams": protocol.OpenFileParams{Path: "/w/a", Line: 2, EndLine: 4},
	}
	for def, v := range samples {
		if err := validate(def, v); err != nil {
			t.Errorf("%s %+v: %v", def, v, err)
		}
	}
	bad := map[string]string{
		"InitializeParams":      `{"ide":{"name":"x","displayName":"X"}}`,
		"DiffStateParams":       `{"filePath":"/a","diffId":1,"state":"gone","message":"","queued":0}`,
		"LogParams":             `{"level":"loud","message":"m"}`,
		"DiffAcceptedParams":    `{"filePath":"/a"}`,
		"DiagnosticsResult":     `{"diagnostics":[{"path":"/a","range":{"start":{"line":1,"character":1},"end":{"line":1,"character":1}},"severity":"fatal","message":"m"}]}`,
		"DocumentSymbolsResult": `{"symbols":[{"name":"x","kind":"thing","range":{"start":{"line":1,"character":1},"end":{"line":1,"character":1}}}]}`,
	}
	for def, raw := range bad {
		if err := validate(def, json.RawMessage(raw)); err == nil {
			t.Errorf("%s accepted %s", def, raw)
		}
	}
}

// TestMethodTable checks the method table: unique names, a direction,
// params and results of struct types, and a version.
func TestMethodTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range protocol.Methods {
		if seen[m.Name] {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = true
		if m.From != protocol.FromPlugin && m.From != protocol.FromSidecar {
			t.Errorf("%s: direction %q", m.Name, m.From)
		}
		if m.Since != protocol.Version1 && m.Since != protocol.Version2 {
			t.Errorf("%s: since %d", m.Name, m.Since)
		}
		if m.Notification && m.Result != nil {
			t.Errorf("%s: a notification with a result", m.Name)
		}
		for _, v := range []any{m.Params, m.Result} {
			if v != nil && reflect.TypeOf(v).Kind() != reflect.Struct {
				t.Errorf("%s: %T is not a struct", m.Name, v)
			}
		}
		if strings.TrimSpace(m.Doc) == "" {
			t.Errorf("%s has no doc", m.Name)
		}
	}
}

// TestDocsNameEveryMethodAndField keeps the docs in step with the types:
// every method and every field of every params and result type (and of
// the types inside them) is named in docs/editor-link.md, or, for the
// agent panel's methods, in docs/agent-panel.md.
func TestDocsNameEveryMethodAndField(t *testing.T) {
	docs := map[string]string{}
	files := map[string]string{"": "editor-link.md", "agent": "agent-panel.md", "editor": "editor-tools.md"}
	for group, file := range files {
		data, err := os.ReadFile("../../docs/" + file)
		if err != nil {
			t.Fatal(err)
		}
		docs[group] = string(data)
	}
	var doc, file string
	seen := map[reflect.Type]bool{}
	var fields func(reflect.Type, string)
	fields = func(ty reflect.Type, owner string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				fields(f.Type, owner)
				continue
			}
			if name != "" && !strings.Contains(doc, name) {
				t.Errorf("docs/%s does not name %s's field %s", file, owner, name)
			}
			fields(f.Type, owner+"."+name)
		}
	}
	for _, m := range protocol.Methods {
		doc, file = docs[m.Group], files[m.Group]
		if !strings.Contains(doc, "`"+m.Name+"`") {
			t.Errorf("docs/%s does not name method %s", file, m.Name)
		}
		for _, v := range []any{m.Params, m.Result} {
			if v != nil {
				fields(reflect.TypeOf(v), m.Name)
			}
		}
	}
}

// TestGeneratedRPCIsUpToDate fails when package rpc's generated file is
// not what protocol.Methods generates: the table changed without go
// generate.
func TestGeneratedRPCIsUpToDate(t *testing.T) {
	want, err := rpcsrc.Generate()
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("rpc/methods_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("rpc/methods_gen.go is stale: run go generate ./companion/protocol")
	}
}

// TestSymbolKindsMatchTheSchema keeps protocol.SymbolKinds (LSP's order,
// which plugins index) and the kind enum of the symbol types the same.
func TestSymbolKindsMatchTheSchema(t *testing.T) {
	want := strings.Join(protocol.SymbolKinds, ",")
	for _, v := range []any{protocol.DocumentSymbol{}, protocol.WorkspaceSymbol{}} {
		f, _ := reflect.TypeOf(v).FieldByName("Kind")
		if got := f.Tag.Get("enum"); got != want {
			t.Errorf("%T.Kind enum %q, SymbolKinds %q", v, got, want)
		}
	}
	if len(protocol.SymbolKinds) != 27 || protocol.SymbolKinds[11] != "function" || protocol.SymbolKinds[25] != "typeParameter" {
		t.Errorf("SymbolKinds is not LSP's SymbolKind 1..26 then other: %v", protocol.SymbolKinds)
	}
}
