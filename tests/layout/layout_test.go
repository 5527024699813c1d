// Package layout checks the shape of the Go code that the design relies on:
// data flows one way (editor frontend → companion → proposals → diffview,
// context and discovery → internal, nothing pointing back, not even from
// one file to another inside companion and proposals), the wire format and
// the protocol know nothing of the server, and OS-specific process code
// lives in internal/osproc.
package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/gemini-ide-companion/gemini-ide-companion/"

// deps lists the project packages pkg depends on, directly or not.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(p, module); ok && rest != pkg {
			set[rest] = true
		}
	}
	return set
}

func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// TestDependenciesPointOneWay fails when a lower layer imports a higher
// one: the server must reach editors, and the proposals the server, only
// through the interfaces they own.
func TestDependenciesPointOneWay(t *testing.T) {
	t.Chdir(root(t))
	frontends := []string{"companion/editorlink", "companion/agentpanel", "companion/review", "cmd/gemini-ide-companion"}
	forbidden := map[string][]string{
		"companion":           append([]string{"link", "link/protocol/rpc"}, frontends...),
		"companion/proposals": append([]string{"companion", "link", "link/protocol/rpc", "context", "discovery"}, frontends...),
		"companion/review":    {"companion", "companion/editorlink", "link", "link/protocol/rpc"},
		"link":                {"companion", "companion/editorlink", "link/protocol", "link/protocol/rpc", "companion/proposals"},
		"link/protocol":       {"companion", "companion/editorlink", "link", "link/protocol/rpc", "companion/proposals", "context", "diffview", "discovery"},
		"link/protocol/rpc":   {"companion", "companion/editorlink", "companion/agentpanel", "companion/proposals", "context", "diffview", "discovery"},
		"context":             {"companion", "companion/editorlink", "link", "companion/proposals", "diffview"},
		"diffview":            {"companion", "companion/editorlink", "link", "companion/proposals", "context"},
		"discovery":           {"companion", "companion/editorlink", "link", "companion/proposals", "context", "diffview"},
	}
	for pkg, bad := range forbidden {
		d := deps(t, pkg)
		for _, b := range bad {
			if d[b] {
				t.Errorf("%s depends on %s: data must flow the other way", pkg, b)
			}
		}
	}
	// internal/ is the floor: what it holds serves every layer and uses
	// none of them.
	out, err := exec.Command("go", "list", "./internal/...").Output()
	if err != nil {
		t.Fatalf("go list ./internal/...: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		pkg := strings.TrimPrefix(p, module)
		for d := range deps(t, pkg) {
			if !strings.HasPrefix(d, "internal/") {
				t.Errorf("%s depends on %s: internal/ must not point up", pkg, d)
			}
		}
	}
	for pkg := range deps(t, "cmd/gemini-ide-companion") {
		if strings.HasPrefix(pkg, "tests/") {
			t.Errorf("the sidecar binary depends on test code %s", pkg)
		}
	}
}

// TestFilesPointOneWay fails when a file of companion or of proposals uses
// a declaration of a file at its own level or above it: inside a package,
// too, each concern has its file and the files depend one way.
func TestFilesPointOneWay(t *testing.T) {
	t.Chdir(root(t))
	levels := map[string][][]string{
		"companion": {
			{"companion.go"},
			{"tools.go", "server.go", "discoveryfile.go"},
			{"session.go", "intake.go"},
			{"sdkgap.go", "options.go"},
		},
		"companion/proposals": {
			{"proposals.go"},
			{"files.go", "decision.go"},
			{"editor.go"},
		},
	}
	for pkg, lv := range levels {
		level := map[string]int{}
		for i, files := range lv {
			for _, f := range files {
				level[f] = i
			}
		}
		for from, tos := range fileDeps(t, pkg) {
			lf, ok := level[from]
			if !ok {
				t.Errorf("%s/%s has no level in this test: give it one", pkg, from)
				continue
			}
			for to, name := range tos {
				if lt, ok := level[to]; !ok || lt <= lf {
					t.Errorf("%s/%s uses %s of %s, which is not below it", pkg, from, name, to)
				}
			}
		}
	}
}

// fileDeps type-checks pkg and returns, for each of its (non-test) files,
// the other files whose declarations it uses, with one such name each.
func fileDeps(t *testing.T, pkg string) map[string]map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", "./"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", pkg, err)
	}
	exports := map[string]string{}
	var dir string
	var files []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export, Dir string
			GoFiles                 []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		dir, files = p.Dir, p.GoFiles // the package itself comes last
	}
	fset := token.NewFileSet()
	var asts []*ast.File
	for _, f := range files {
		a, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		asts = append(asts, a)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	tp, err := (&types.Config{Importer: imp}).Check(module+pkg, fset, asts, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", pkg, err)
	}
	deps := map[string]map[string]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != tp || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		if deps[from] == nil {
			deps[from] = map[string]string{}
		}
		deps[from][to] = obj.Name()
	}
	return deps
}

// processCode matches what only internal/osproc may use: process groups,
// signals to other processes, and build constraints on an OS for process
// handling.
var processCode = regexp.MustCompile(`syscall\.Kill\(|SysProcAttr|Setpgid|windows\.OpenProcess|unix\.Kill\(`)

// TestOSProcessCodeLivesInOsproc fails when production code outside
// internal/osproc handles processes in an OS-specific way.
func TestOSProcessCodeLivesInOsproc(t *testing.T) {
	r := root(t)
	err := filepath.WalkDir(r, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		if d.IsDir() {
			switch rel {
			case "tests", "plugins", "internal/osproc", "bin", ".git":
				return filepath.SkipDir
			}
			if d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := processCode.FindIndex(data); loc != nil {
			t.Errorf("%s uses %q: OS-specific process code belongs in internal/osproc", rel, data[loc[0]:loc[1]])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
