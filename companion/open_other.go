//go:build !unix

package companion

import "os"

// openForRead opens a regular file to read it once.
func openForRead(path string) (*os.File, error) {
	return os.Open(path)
}
