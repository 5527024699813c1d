// Package layout checks the shape of the Go code that the design relies on:
// data flows one way (editor frontend → editor state and review → MCP
// server, nothing pointing back), the wire format and the protocol know
// nothing of the server, and OS-specific process code lives in
// internal/osproc.
package layout

import (
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
// one: the server must reach editors only through the interfaces it owns.
func TestDependenciesPointOneWay(t *testing.T) {
	t.Chdir(root(t))
	forbidden := map[string][]string{
		"companion":          {"companion/editorlink", "companion/link", "companion/review", "cmd/gemini-ide-companion"},
		"companion/link":     {"companion", "companion/editorlink", "companion/protocol"},
		"companion/protocol": {"companion", "companion/editorlink", "companion/link", "context", "diffview", "discovery"},
		"context":            {"companion", "companion/editorlink", "companion/link", "diffview"},
		"diffview":           {"companion", "companion/editorlink", "companion/link", "context"},
		"discovery":          {"companion", "companion/editorlink", "companion/link", "context", "diffview"},
		"companion/review":   {"companion/editorlink", "companion/link"},
	}
	for pkg, bad := range forbidden {
		d := deps(t, pkg)
		for _, b := range bad {
			if d[b] {
				t.Errorf("%s depends on %s: data must flow the other way", pkg, b)
			}
		}
	}
	for pkg := range deps(t, "cmd/gemini-ide-companion") {
		if strings.HasPrefix(pkg, "tests/") {
			t.Errorf("the sidecar binary depends on test code %s", pkg)
		}
	}
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
