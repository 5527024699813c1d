// Package fspath compares file paths the way the operating system does, so
// that two names of one file (on Windows: "c:\Work\app.py",
// "C:/work/APP.py") are taken for the same file. Workspace matching, diff
// ownership by path and the "outside the workspace" check all call it.
//
// On Windows a path's case does not matter, "/" and "\" are the same
// separator and a drive letter may be written either way; elsewhere paths
// are compared as they are, once cleaned. Links are not resolved here.
package fspath

import (
	"path/filepath"
	"strings"
)

// Key returns the form of p under which every name of the same file is
// equal: cleaned, and on Windows with "\" separators and case folded.
// Use it for map keys; show users the path they gave.
func Key(p string) string {
	return fold(filepath.Clean(p))
}

// Equal reports whether a and b name the same path.
func Equal(a, b string) bool { return Key(a) == Key(b) }

// Within reports whether p is dir or lies inside it.
func Within(dir, p string) bool {
	kd, kp := Key(dir), Key(p)
	if kp == kd {
		return true
	}
	sep := string(filepath.Separator)
	return strings.HasPrefix(kp, strings.TrimSuffix(kd, sep)+sep)
}
