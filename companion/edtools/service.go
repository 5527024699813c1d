package edtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// Editor is the plugin that answers the editor/* requests: the editor
// link.
type Editor interface {
	// EditorName is the editor's display name ("Neovim").
	EditorName() string
	// PluginCapabilities is what the plugin said it can do.
	PluginCapabilities() protocol.ClientCapabilities
	// CallEditor sends the request and decodes its result into result. An
	// error answer of the plugin is returned as a *PluginError.
	CallEditor(ctx context.Context, method string, params, result any) error
}

// PluginError is the plugin's error answer to an editor/* request.
type PluginError struct {
	Code    int
	Message string
}

func (e *PluginError) Error() string { return fmt.Sprintf("editor error %d: %s", e.Code, e.Message) }

// Workspace is what the companion knows without asking the editor.
type Workspace interface {
	// Editor is the plugin linked to the companion, nil when none.
	Editor() Editor
	// WorkspaceFolders are the editor's workspace folders.
	WorkspaceFolders() []string
	// Context is the context the CLI gets: the open files, the active one,
	// its cursor and selection.
	Context() idectx.IdeContext
}

// Options are a Service's deadline and caps; zero fields take the
// protocol's defaults.
type Options struct {
	// Timeout is how long the editor may take to answer.
	Timeout time.Duration
	// MaxResults is the most items an answer carries.
	MaxResults int
	// MaxBytes is the most bytes of JSON an answer carries.
	MaxBytes int
}

// Service answers the editor tools for one companion.
type Service struct {
	ws   Workspace
	opts Options
}

// NewService returns the editor tools of the companion ws.
func NewService(ws Workspace, opts Options) *Service {
	if opts.Timeout <= 0 {
		opts.Timeout = protocol.EditorRequestTimeoutMs * time.Millisecond
	}
	if opts.MaxResults <= 0 {
		opts.MaxResults = protocol.MaxToolResults
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = protocol.MaxToolResultBytes
	}
	return &Service{ws: ws, opts: opts}
}

// argError is a bad argument: its text goes to the model as is.
type argError string

func (e argError) Error() string { return string(e) }

func argErrorf(format string, args ...any) error { return argError(fmt.Sprintf(format, args...)) }

// Call answers one call of the tool named name; it never fails, an error
// being a Result with IsError and a text that says what to do.
func (s *Service) Call(ctx context.Context, name string, args json.RawMessage) Result {
	t, ok := Lookup(name)
	if !ok {
		return errResult("unknown tool %q", name)
	}
	out, err := s.call(ctx, t, args)
	if err != nil {
		return Result{Text: err.Error(), IsError: true}
	}
	return Result{Text: string(out)}
}

func errResult(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// toolArgs are every tool's arguments; each tool reads its own.
type toolArgs struct {
	Path      *string `json:"path"`
	Severity  *string `json:"severity"`
	Line      *int    `json:"line"`
	Character *int    `json:"character"`
	EndLine   *int    `json:"endLine"`
	Query     *string `json:"query"`
}

func decodeArgs(raw json.RawMessage) (toolArgs, error) {
	var a toolArgs
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			want := te.Type.String()
			if strings.HasPrefix(want, "int") || strings.HasPrefix(want, "*int") {
				want = "a whole number"
			} else if strings.Contains(want, "string") {
				want = "a string"
			}
			return a, argErrorf("%s must be %s, not %s", te.Field, want, te.Value)
		}
		return a, argErrorf("the arguments must be a JSON object: %v", err)
	}
	return a, nil
}

func (s *Service) call(ctx context.Context, t Tool, raw json.RawMessage) ([]byte, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	ed := s.ws.Editor()
	if ed == nil && t.Name != "getOpenEditors" {
		return nil, errors.New("no editor is linked to this companion (it runs on its own, in a terminal): the editor tools need an editor with the gemini-ide-companion plugin")
	}
	var open []idectx.File
	if st := s.ws.Context().WorkspaceState; st != nil {
		open = st.OpenFiles
	}
	switch t.Name {
	case "getDiagnostics":
		p := protocol.DiagnosticsParams{MaxResults: s.opts.MaxResults}
		if a.Path != nil {
			if p.Path, err = s.checkPath(*a.Path, open, ed); err != nil {
				return nil, err
			}
		}
		if a.Severity != nil {
			if severityRank(*a.Severity) < 0 {
				return nil, argErrorf("severity must be error, warning, info or hint, not %q", *a.Severity)
			}
			p.Severity = *a.Severity
		}
		var res protocol.DiagnosticsResult
		if err := s.ask(ctx, ed, t, p, &res); err != nil {
			return nil, err
		}
		return s.capDiagnostics(res, p), nil
	case "getDefinition", "getReferences", "getHover":
		p, err := s.position(a, open, ed)
		if err != nil {
			return nil, err
		}
		if t.Name == "getHover" {
			var res protocol.HoverResult
			if err := s.ask(ctx, ed, t, p, &res); err != nil {
				return nil, err
			}
			return s.capHover(res), nil
		}
		p.MaxResults = s.opts.MaxResults
		var res protocol.LocationsResult
		if err := s.ask(ctx, ed, t, p, &res); err != nil {
			return nil, err
		}
		return s.capLocations(res), nil
	case "getDocumentSymbols":
		if a.Path == nil {
			return nil, argError("path is required: the absolute path of the file")
		}
		path, err := s.checkPath(*a.Path, open, ed)
		if err != nil {
			return nil, err
		}
		if err := mustExist(path, open); err != nil {
			return nil, err
		}
		var res protocol.DocumentSymbolsResult
		if err := s.ask(ctx, ed, t, protocol.DocumentSymbolsParams{Path: path, MaxResults: s.opts.MaxResults}, &res); err != nil {
			return nil, err
		}
		return s.capSymbols(res), nil
	case "searchWorkspaceSymbols":
		if a.Query == nil {
			return nil, argError("query is required: the text to look for in symbol names")
		}
		if n := utf8.RuneCountInString(*a.Query); n > protocol.MaxQueryChars {
			return nil, argErrorf("query is %d characters long; the most is %d", n, protocol.MaxQueryChars)
		}
		var res protocol.WorkspaceSymbolsResult
		if err := s.ask(ctx, ed, t, protocol.WorkspaceSymbolsParams{Query: *a.Query, MaxResults: s.opts.MaxResults}, &res); err != nil {
			return nil, err
		}
		return s.capWorkspaceSymbols(res), nil
	case "getOpenEditors":
		if ed == nil || !hasCapability(ed, t.Capability) {
			// The context the companion keeps for the CLI says as much,
			// but for unsaved changes.
			return s.capEditors(fromContext(open)), nil
		}
		var res protocol.OpenEditorsResult
		if err := s.ask(ctx, ed, t, protocol.OpenEditorsParams{MaxResults: s.opts.MaxResults}, &res); err != nil {
			return nil, err
		}
		return s.capEditors(res), nil
	case "openFile":
		if a.Path == nil {
			return nil, argError("path is required: the absolute path of the file")
		}
		path, err := s.checkPath(*a.Path, open, ed)
		if err != nil {
			return nil, err
		}
		p := protocol.OpenFileParams{Path: path}
		if a.Line != nil {
			if *a.Line < 1 {
				return nil, argErrorf("line must be 1 or more (lines are 1-based), not %d", *a.Line)
			}
			p.Line = *a.Line
		}
		if a.EndLine != nil {
			if a.Line == nil {
				return nil, argError("endLine needs line")
			}
			if *a.EndLine < *a.Line {
				return nil, argErrorf("endLine %d is before line %d", *a.EndLine, *a.Line)
			}
			p.EndLine = *a.EndLine
		}
		if err := checkLine(path, max(p.Line, p.EndLine), open); err != nil {
			return nil, err
		}
		var res protocol.Empty
		if err := s.ask(ctx, ed, t, p, &res); err != nil {
			return nil, err
		}
		return fmt.Appendf(nil, `{"shown":%q}`, path), nil
	}
	return nil, fmt.Errorf("tool %s has no handler", t.Name)
}

// position reads and checks the arguments of a position tool.
func (s *Service) position(a toolArgs, open []idectx.File, ed Editor) (protocol.PositionParams, error) {
	var missing []string
	if a.Path == nil {
		missing = append(missing, "path")
	}
	if a.Line == nil {
		missing = append(missing, "line")
	}
	if a.Character == nil {
		missing = append(missing, "character")
	}
	if len(missing) > 0 {
		return protocol.PositionParams{}, argErrorf("%s required: path (absolute), line and character (1-based)", strings.Join(missing, ", ")+map[bool]string{true: " is", false: " are"}[len(missing) == 1])
	}
	path, err := s.checkPath(*a.Path, open, ed)
	if err != nil {
		return protocol.PositionParams{}, err
	}
	if *a.Line < 1 {
		return protocol.PositionParams{}, argErrorf("line must be 1 or more (lines are 1-based), not %d", *a.Line)
	}
	if *a.Character < 1 {
		return protocol.PositionParams{}, argErrorf("character must be 1 or more (columns are 1-based), not %d", *a.Character)
	}
	if err := checkLine(path, *a.Line, open); err != nil {
		return protocol.PositionParams{}, err
	}
	return protocol.PositionParams{Path: path, Line: *a.Line, Character: *a.Character}, nil
}

// checkPath refuses a relative path, and a path outside every workspace
// folder that is not open in the editor; it returns the path cleaned.
func (s *Service) checkPath(p string, open []idectx.File, ed Editor) (string, error) {
	folders := s.ws.WorkspaceFolders()
	if p == "" {
		return "", argError("path must not be empty: give the absolute path of a file")
	}
	if !filepath.IsAbs(p) {
		if len(folders) > 0 {
			return "", argErrorf("path must be absolute: %s (the workspace is %s)", p, strings.Join(folders, ", "))
		}
		return "", argErrorf("path must be absolute: %s", p)
	}
	p = filepath.Clean(p)
	for _, f := range folders {
		if fspath.Within(f, p) {
			return p, nil
		}
	}
	if isOpen(p, open) {
		return p, nil
	}
	ws := "no workspace folder"
	if len(folders) > 0 {
		ws = "the workspace folders (" + strings.Join(folders, ", ") + ")"
	}
	return "", argErrorf("%s is outside %s and not open in %s", p, ws, ed.EditorName())
}

func isOpen(p string, open []idectx.File) bool {
	for _, f := range open {
		if fspath.Equal(f.Path, p) {
			return true
		}
	}
	return false
}

// maxCheckedFile is the largest file whose lines the companion counts to
// check a line argument; the editor checks bigger ones.
const maxCheckedFile = 32 << 20

// mustExist refuses a file that is neither on disk nor open in the editor.
func mustExist(path string, open []idectx.File) error {
	if isOpen(path, open) {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return argErrorf("%s does not exist", path)
	}
	if st.IsDir() {
		return argErrorf("%s is a folder, not a file", path)
	}
	return nil
}

// checkLine refuses a line past the end of a file that is not open in the
// editor (an open one may have unsaved lines: the editor checks those).
func checkLine(path string, line int, open []idectx.File) error {
	if err := mustExist(path, open); err != nil || isOpen(path, open) {
		return err
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() > maxCheckedFile {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	n := strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	if line > max(n, 1) {
		return argErrorf("line %d is past the end of %s (%d lines)", line, filepath.Base(path), n)
	}
	return nil
}

// hasCapability reports whether the plugin declared the capability named
// by its JSON name.
func hasCapability(ed Editor, name string) bool {
	caps := reflect.ValueOf(ed.PluginCapabilities())
	ty := caps.Type()
	for i := range ty.NumField() {
		if tag, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ","); tag == name {
			f := caps.Field(i)
			return f.Kind() == reflect.Bool && f.Bool()
		}
	}
	return false
}

// ask sends t's request to the editor, within the deadline, and turns what
// can go wrong into what the model should read.
func (s *Service) ask(ctx context.Context, ed Editor, t Tool, params, result any) error {
	name := ed.EditorName()
	if !hasCapability(ed, t.Capability) {
		return fmt.Errorf("%s does not answer %s: its plugin does not offer it (capability %s); update the plugin", name, t.Name, t.Capability)
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	err := ed.CallEditor(cctx, t.Method, params, result)
	if err == nil {
		return nil
	}
	var pe *PluginError
	switch {
	case errors.As(err, &pe):
		switch pe.Code {
		case protocol.CodeNotAvailable, protocol.CodeDeadlinePassed, -32602:
			return errors.New(pe.Message)
		}
		return fmt.Errorf("%s could not answer %s: %s", name, t.Name, pe.Message)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: the call was cancelled", t.Name)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s did not answer %s within %v; its language server may still be starting: try again", name, t.Name, s.opts.Timeout)
	}
	return fmt.Errorf("%s could not answer %s: %v", name, t.Name, err)
}
