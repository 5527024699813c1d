package diffview

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// MaxFile is the largest file whose current content is read to show a
// diff against.
const MaxFile = 256 << 20

// ReadFile returns the content of the file at path as it is now, nil if it
// does not exist: the original side of a proposal, or what a proposal's
// file holds after a change on disk. When the file holds exactly known (if
// not nil) it returns known itself, and reads without keeping a copy: a
// file proposed again is usually unchanged since the last proposal read it.
func ReadFile(path string, known *string) (*string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > MaxFile {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, MaxFile>>20)
	}
	if known != nil && int64(len(*known)) != st.Size() {
		known = nil
	}
	text, same, err := readText(path, st.Size(), known)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if same {
		return known, nil
	}
	return &text, nil
}

// readText reads a file of about size bytes straight into the string it
// returns: one buffer, no copy from bytes to string. While the file matches
// known (if not nil) it only compares, and reports same when it is all of
// known: then no buffer at all.
func readText(path string, size int64, known *string) (text string, same bool, err error) {
	f, err := openForRead(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var b strings.Builder
	matched := 0 // bytes of known matched so far; -1 once it differs
	if known == nil {
		matched = -1
		b.Grow(int(size))
	}
	buf := make([]byte, min(32<<10, max(size+1, 512)))
	for {
		n, err := f.Read(buf)
		chunk := buf[:n]
		if matched >= 0 && n > 0 {
			if matched+n <= len(*known) && string(chunk) == (*known)[matched:matched+n] {
				matched += n
				chunk = nil
			} else {
				// It differs: from here on, read it.
				b.Grow(max(int(size), matched+n))
				b.WriteString((*known)[:matched])
				matched = -1
			}
		}
		b.Write(chunk)
		if b.Len() > MaxFile {
			return "", false, fmt.Errorf("larger than %d MiB", MaxFile>>20)
		}
		if errors.Is(err, io.EOF) {
			if matched >= 0 {
				if matched == len(*known) {
					return "", true, nil
				}
				b.WriteString((*known)[:matched]) // it ended early
			}
			return b.String(), false, nil
		}
		if err != nil {
			return "", false, err
		}
	}
}
