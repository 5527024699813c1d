//go:build !linux

package osproc

import (
	"io"
	"os"
)

// QuietReader returns Pollable(f): the quieter reading of Linux (see its
// documentation there) is not done on other systems.
func QuietReader(f *os.File) io.Reader { return Pollable(f) }
