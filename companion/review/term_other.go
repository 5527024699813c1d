//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package review

import "os"

// KeyMode reports that key-at-a-time input is not available here; the
// reviewer reads lines.
func KeyMode(f *os.File) (restore func(), ok bool) { return func() {}, false }
