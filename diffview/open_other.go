//go:build !unix

package diffview

import "os"

// openForRead opens a regular file to read it once.
func openForRead(path string) (*os.File, error) {
	return os.Open(path)
}
