package diffview

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
)

// SpoolMin is the size from which a shown proposal's texts leave memory
// (Registry.Stow): once the editor shows a proposal it holds both texts, and
// the companion needs them again only rarely (closeDiff when the editor does
// not answer, a change on disk). Below it, keeping them costs less than a
// file would.
const SpoolMin = 1 << 20

// Print identifies a text by its size and SHA-256, so that a large text can
// be compared with another without being kept.
type Print struct {
	Size int64
	Sum  [sha256.Size]byte
}

// PrintOf returns the print of s.
func PrintOf(s string) Print {
	h := sha256.New()
	// In pieces through a small buffer: converting the whole string would
	// copy it.
	buf := make([]byte, min(len(s), 32<<10))
	for i := 0; i < len(s); {
		n := copy(buf, s[i:])
		h.Write(buf[:n])
		i += n
	}
	return Print{Size: int64(len(s)), Sum: [sha256.Size]byte(h.Sum(nil))}
}

// Spool keeps the proposed texts of shown diffs in private temporary files:
// a directory only this user can enter (made on first use), files only this
// user can read. On unix a file is unlinked as soon as it is created and
// read back through its descriptor, so nothing is left on disk whatever
// happens to the process; elsewhere it is removed when its proposal ends and
// the directory when the spool is closed. Safe for concurrent use.
type Spool struct {
	parent string

	mu     sync.Mutex
	dir    string
	files  map[*spooled]struct{}
	closed bool
}

// NewSpool returns a spool that makes its directory under parent ("" for
// the system's temporary directory) when the first text is put in it.
func NewSpool(parent string) *Spool {
	return &Spool{parent: parent, files: map[*spooled]struct{}{}}
}

// errSpoolClosed is returned by put after Close.
var errSpoolClosed = errors.New("the proposal spool is closed")

// put writes text to a new file of the spool.
func (sp *Spool) put(text string) (*spooled, error) {
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return nil, errSpoolClosed
	}
	if sp.dir == "" {
		dir, err := os.MkdirTemp(sp.parent, "gemini-ide-companion-proposals-")
		if err != nil {
			sp.mu.Unlock()
			return nil, fmt.Errorf("create the proposal spool directory: %w", err)
		}
		sp.dir = dir
	}
	dir := sp.dir
	sp.mu.Unlock()

	f, err := os.CreateTemp(dir, "proposal-")
	if err != nil {
		return nil, fmt.Errorf("create a spool file: %w", err)
	}
	name := f.Name()
	unlinked := runtime.GOOS != "windows" && os.Remove(name) == nil
	sf := &spooled{sp: sp, f: f, name: name, unlinked: unlinked, print: PrintOf(text)}
	if _, err := f.WriteString(text); err != nil {
		sf.release()
		return nil, fmt.Errorf("write a spool file: %w", err)
	}
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		sf.release()
		return nil, errSpoolClosed
	}
	sp.files[sf] = struct{}{}
	sp.mu.Unlock()
	return sf, nil
}

// Close releases every file still in the spool and removes its directory.
// A text put later is refused; one read later reports an error.
func (sp *Spool) Close() error {
	sp.mu.Lock()
	sp.closed = true
	files := make([]*spooled, 0, len(sp.files))
	for f := range sp.files {
		files = append(files, f)
	}
	dir := sp.dir
	sp.mu.Unlock()
	for _, f := range files {
		f.release()
	}
	if dir == "" {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove the proposal spool directory: %w", err)
	}
	return nil
}

// spooled is one text in a spool file.
type spooled struct {
	sp       *Spool
	name     string
	unlinked bool
	print    Print

	mu sync.Mutex
	f  *os.File // nil once released
}

// text reads the text back and checks it is the one put.
func (sf *spooled) text() (string, error) {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if sf.f == nil {
		return "", errors.New("its spool file was already released")
	}
	var b strings.Builder
	b.Grow(int(sf.print.Size))
	buf := make([]byte, 32<<10)
	h := sha256.New()
	var off int64
	for off < sf.print.Size {
		n, err := sf.f.ReadAt(buf[:min(int64(len(buf)), sf.print.Size-off)], off)
		b.Write(buf[:n])
		h.Write(buf[:n])
		off += int64(n)
		if err != nil && (!errors.Is(err, io.EOF) || off < sf.print.Size) {
			return "", fmt.Errorf("read its spool file: %w (%d of %d bytes read)", err, off, sf.print.Size)
		}
	}
	if [sha256.Size]byte(h.Sum(nil)) != sf.print.Sum {
		return "", errors.New("its spool file no longer holds the text written to it")
	}
	return b.String(), nil
}

// release closes the file and removes it; it is safe to call more than once.
func (sf *spooled) release() {
	sf.mu.Lock()
	f := sf.f
	sf.f = nil
	sf.mu.Unlock()
	if f == nil {
		return
	}
	_ = f.Close()
	if !sf.unlinked {
		_ = os.Remove(sf.name)
	}
	sf.sp.mu.Lock()
	delete(sf.sp.files, sf)
	sf.sp.mu.Unlock()
}
