package editorlink

import (
	"os"
	"testing"

	"golang.org/x/sys/windows"
)

// stdinPipe returns a pipe like the stdin an editor gives the sidecar on
// Windows: an anonymous pipe made by CreatePipe, read synchronously (not
// os.Pipe's, which Go reads with overlapped I/O).
func stdinPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var rh, wh windows.Handle
	if err := windows.CreatePipe(&rh, &wh, nil, 0); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(rh), "stdin"), os.NewFile(uintptr(wh), "stdin-writer")
}
