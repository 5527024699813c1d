// Package discovery writes and cleans up the port files through which Gemini
// CLI finds a running companion, and computes the IDE process ID the CLI
// will look for in their names.
package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// IDEInfo names the editor. The CLI trusts a discovery file that carries it
// and shows DisplayName ("Connected to Neovim").
type IDEInfo struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
}

// File is the content of a discovery file.
type File struct {
	Port          int     `json:"port"`
	WorkspacePath string  `json:"workspacePath"`
	AuthToken     string  `json:"authToken"`
	IDEInfo       IDEInfo `json:"ideInfo"`
	// PID is the companion's own process ID. The CLI ignores it; the next
	// companion to start uses it to tell a file left behind by a killed
	// companion from a live one.
	PID int `json:"pid,omitempty"`
}

// maxFileSize bounds what is read of a discovery file found on disk.
const maxFileSize = 1 << 20

var nameRE = regexp.MustCompile(`^gemini-ide-server-(\d+)-(\d+)\.json$`)

// Dir returns the directory the CLI reads: os.TempDir()/gemini/ide.
func Dir() string {
	return filepath.Join(os.TempDir(), "gemini", "ide")
}

// FileName returns the discovery file's base name for an IDE PID and port.
func FileName(idePID, port int) string {
	return fmt.Sprintf("gemini-ide-server-%d-%d.json", idePID, port)
}

// ParseName returns the IDE PID and port in a discovery file's base name.
func ParseName(name string) (idePID, port int, ok bool) {
	m := nameRE.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(m[1])
	p, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pid, p, true
}

// JoinWorkspace joins workspace folders the way the CLI splits them: with
// the OS's list separator.
func JoinWorkspace(folders []string) string {
	return strings.Join(folders, string(os.PathListSeparator))
}

// containerMarkers are files that exist only inside a Docker or Podman
// container.
var containerMarkers = []string{"/.dockerenv", "/run/.containerenv"}

// InContainer reports whether this process runs in a Docker or Podman
// container.
func InContainer() bool {
	for _, m := range containerMarkers {
		if _, err := os.Stat(m); err == nil {
			return true
		}
	}
	return false
}

// Env returns the variables a terminal needs so that a CLI started in it
// connects to this companion, even when other editors serve the same folder.
//
// In a container the CLI dials host.docker.internal instead of 127.0.0.1
// unless it sees SSH_CONNECTION or REMOTE_CONTAINERS; the companion listens
// on 127.0.0.1 of the same container, so when neither is set Env adds
// REMOTE_CONTAINERS=1. Every editor gets that rule from here.
func Env(f File, idePID int) map[string]string {
	env := map[string]string{
		"GEMINI_CLI_IDE_SERVER_PORT":    strconv.Itoa(f.Port),
		"GEMINI_CLI_IDE_WORKSPACE_PATH": f.WorkspacePath,
		"GEMINI_CLI_IDE_AUTH_TOKEN":     f.AuthToken,
		"GEMINI_CLI_IDE_PID":            strconv.Itoa(idePID),
	}
	if os.Getenv("SSH_CONNECTION") == "" && os.Getenv("REMOTE_CONTAINERS") == "" && InContainer() {
		env["REMOTE_CONTAINERS"] = "1"
	}
	return env
}

// ErrUnsafeDir means the discovery directory exists but could be read or
// replaced by someone else, so the companion will not write its token there.
var ErrUnsafeDir = errors.New("unsafe discovery directory")

// EnsureDir creates dir (and its parent, the "gemini" directory) with mode
// 0700 when missing, and checks that both belong to the current user, are
// real directories (not links), and are not writable by others without the
// sticky bit (on Windows: by the directory's ACL). A dir of ours that is
// open to others is tightened to 0700; so is a parent just created (on
// Windows it would otherwise inherit its parent's ACL).
func EnsureDir(dir string) error {
	parent := filepath.Dir(dir)
	for _, d := range []string{parent, dir} {
		created := true
		if err := os.Mkdir(d, 0o700); err != nil {
			if !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("create %s: %w", d, err)
			}
			created = false
		}
		if err := checkDir(d, d == dir || created); err != nil {
			return err
		}
	}
	return nil
}

func checkDir(d string, tighten bool) error {
	st, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", d, err)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symbolic link", ErrUnsafeDir, d)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, d)
	}
	if !osproc.Mine(d, st) {
		return fmt.Errorf("%w: %s belongs to %s, not to the current user", ErrUnsafeDir, d, osproc.Owner(d, st))
	}
	if !tighten && osproc.OthersCanWrite(d, st) {
		return fmt.Errorf("%w: %s is writable by everyone", ErrUnsafeDir, d)
	}
	if tighten {
		if err := osproc.MakePrivate(d, true); err != nil {
			return fmt.Errorf("restrict %s to its owner: %w", d, err)
		}
	}
	return nil
}

// Write writes f atomically as dir/FileName(idePID, f.Port) with mode 0600:
// it goes to a temporary file in dir first and is renamed into place, so the
// CLI never reads half a file and a link planted at the path is replaced,
// not followed. It returns the file's path.
func Write(dir string, idePID int, f File) (string, error) {
	if err := EnsureDir(dir); err != nil {
		return "", err
	}
	data, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("encode discovery file: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".gemini-ide-server-*.tmp")
	if err != nil {
		return "", fmt.Errorf("create discovery file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("restrict discovery file: %w", err)
	}
	if err := osproc.MakePrivate(tmpName, false); err != nil {
		tmp.Close()
		return "", fmt.Errorf("restrict discovery file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write discovery file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("sync discovery file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("close discovery file: %w", err)
	}
	path := filepath.Join(dir, FileName(idePID, f.Port))
	// On Windows a reader that holds the old file (list, doctor, a
	// virus scanner) can refuse the replacement for a moment: Replace
	// waits for it, briefly.
	if err := osproc.Replace(tmpName, path); err != nil {
		return "", fmt.Errorf("publish discovery file: %w", err)
	}
	return path, nil
}

// Read reads and parses a discovery file, refusing links, non-regular files
// (a FIFO or device is never waited on), files of other users and files
// over 1 MiB.
func Read(path string) (File, error) {
	var f File
	// Lstat first: whatever is not a regular file of ours is never opened.
	if err := checkFile(path, nil); err != nil {
		return f, err
	}
	fh, err := osproc.OpenNoFollow(path)
	if err != nil {
		return f, fmt.Errorf("open %s: %w", path, err)
	}
	defer fh.Close()
	// And again on what was opened, in case the name was swapped between.
	st, err := fh.Stat()
	if err != nil {
		return f, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := checkFile(path, st); err != nil {
		return f, err
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxFileSize+1))
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return f, fmt.Errorf("%s is larger than %d bytes", path, maxFileSize)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("parse %s: %w", path, err)
	}
	return f, nil
}

// checkFile returns why path (described by st, or by its Lstat when st is
// nil) is not a discovery file the companion may read, or nil.
func checkFile(path string, st fs.FileInfo) error {
	if st == nil {
		var err error
		if st, err = os.Lstat(path); err != nil {
			return fmt.Errorf("inspect %s: %w", path, err)
		}
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v)", path, st.Mode().Type())
	}
	if !osproc.Mine(path, st) {
		return fmt.Errorf("%s belongs to another user", path)
	}
	if st.Size() > maxFileSize {
		return fmt.Errorf("%s is larger than %d bytes", path, maxFileSize)
	}
	return nil
}

// Entry is a discovery file found on disk.
type Entry struct {
	Path   string
	IDEPID int
	File   File
}

// List returns the readable discovery files of the current user in dir.
// Files it cannot use are skipped.
func List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []Entry
	for _, de := range des {
		pid, _, ok := ParseName(de.Name())
		if !ok || !de.Type().IsRegular() {
			// Only regular files are ever opened: a FIFO named like a
			// discovery file would otherwise block the open forever.
			continue
		}
		p := filepath.Join(dir, de.Name())
		f, err := Read(p)
		if err != nil {
			continue
		}
		out = append(out, Entry{Path: p, IDEPID: pid, File: f})
	}
	return out, nil
}

// RemoveStale deletes the current user's discovery files whose IDE process
// is gone, or whose companion (the pid field) is gone. alive reports whether
// a PID names a running process. It returns the paths removed.
func RemoveStale(dir string, alive func(pid int) bool) ([]string, error) {
	entries, err := List(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		stale := !alive(e.IDEPID) || (e.File.PID > 0 && !alive(e.File.PID))
		if !stale {
			continue
		}
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stale %s: %w", e.Path, err))
			continue
		}
		removed = append(removed, e.Path)
	}
	return removed, errors.Join(errs...)
}

// FindForWorkspace returns the live discovery entries whose workspace
// contains dir, best first: the deepest matching workspace folder wins.
func FindForWorkspace(entries []Entry, dir string, alive func(pid int) bool) []Entry {
	real := realPath(dir)
	type scored struct {
		e     Entry
		score int
	}
	var found []scored
	for _, e := range entries {
		if e.File.PID > 0 && !alive(e.File.PID) {
			continue
		}
		best := -1
		for _, ws := range filepath.SplitList(e.File.WorkspacePath) {
			if ws == "" {
				continue
			}
			w := realPath(ws)
			if fspath.Within(w, real) {
				best = max(best, len(w))
			}
		}
		if best >= 0 {
			found = append(found, scored{e, best})
		}
	}
	// Insertion sort: a handful of entries at most.
	for i := 1; i < len(found); i++ {
		for j := i; j > 0 && found[j].score > found[j-1].score; j-- {
			found[j], found[j-1] = found[j-1], found[j]
		}
	}
	out := make([]Entry, len(found))
	for i, s := range found {
		out[i] = s.e
	}
	return out
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
