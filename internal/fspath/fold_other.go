//go:build !windows

package fspath

// fold leaves p as it is: outside Windows, paths are compared by their
// exact bytes.
func fold(p string) string { return p }
