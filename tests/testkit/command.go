package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RunWithCommand is a TestMain that builds the Go command in package pkg
// (a path from the test's folder, such as ../../cmd/gemini-a2a-mcp) into a
// temporary folder, with the race detector when the tests run with it,
// sets *bin to it, runs the tests and exits with their code.
func RunWithCommand(m *testing.M, pkg string, bin *string) {
	dir, err := os.MkdirTemp("", filepath.Base(pkg)+"-test-")
	if err != nil {
		panic(err)
	}
	*bin = filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", *bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, pkg)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building %s: %v\n", filepath.Base(pkg), err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
