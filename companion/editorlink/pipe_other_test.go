//go:build !windows

package editorlink

import (
	"os"
	"testing"
)

// stdinPipe returns a pipe like the stdin an editor gives the sidecar.
func stdinPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}
