package discovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// Found is one file in the discovery directory whose name the CLI matches,
// whatever its state: readable or not, ours or another user's, live or
// stale. Doctor and `list` show these; the CLI sees the same set.
type Found struct {
	Path    string
	IDEPID  int
	Port    int // from the file name
	ModTime time.Time
	// File is the parsed content; valid only when Err is nil.
	File File
	// Err says why the file cannot be used (another user's, a link, not
	// JSON, ...).
	Err error
}

// ListAll returns every file in dir whose name the CLI matches, sorted by
// name, reading each with Read.
func ListAll(dir string) ([]Found, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []Found
	for _, de := range des {
		pid, port, ok := ParseName(de.Name())
		if !ok {
			continue
		}
		p := filepath.Join(dir, de.Name())
		fd := Found{Path: p, IDEPID: pid, Port: port}
		if info, err := de.Info(); err == nil {
			fd.ModTime = info.ModTime()
		}
		fd.File, fd.Err = Read(p)
		out = append(out, fd)
	}
	return out, nil
}

// CLIPick orders the live entries serving cwd the way a Gemini CLI started
// in cwd would choose among them: a port named by GEMINI_CLI_IDE_SERVER_PORT
// (envPort, 0 if unset) first, then files whose IDE PID is the CLI's IDE PID
// (idePID), then files of live IDE processes, then the most specific
// workspace, then the newest IDE PID, then the newest file. The first entry
// is the one the CLI connects to.
func CLIPick(entries []Entry, cwd string, idePID, envPort int, alive func(pid int) bool) []Entry {
	found := FindForWorkspace(entries, cwd, alive)
	depth := make(map[string]int, len(found))
	for i, e := range found {
		depth[e.Path] = len(found) - i // FindForWorkspace sorts deepest first
	}
	mtime := func(p string) time.Time {
		if st, err := os.Lstat(p); err == nil {
			return st.ModTime()
		}
		return time.Time{}
	}
	key := func(e Entry) []int {
		b := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		return []int{b(envPort > 0 && e.File.Port == envPort), b(e.IDEPID == idePID), b(alive(e.IDEPID)), depth[e.Path], e.IDEPID}
	}
	sort.SliceStable(found, func(i, j int) bool {
		ki, kj := key(found[i]), key(found[j])
		for n := range ki {
			if ki[n] != kj[n] {
				return ki[n] > kj[n]
			}
		}
		return mtime(found[i].Path).After(mtime(found[j].Path))
	})
	return found
}

// CLIEnvPort returns GEMINI_CLI_IDE_SERVER_PORT as a number, 0 if unset or
// not a number.
func CLIEnvPort() int {
	p, err := strconv.Atoi(os.Getenv("GEMINI_CLI_IDE_SERVER_PORT"))
	if err != nil {
		return 0
	}
	return p
}

// CLIIDEPID returns the IDE PID a Gemini CLI started from this process's
// shell computes: GEMINI_CLI_IDE_PID when set, else the terminal's.
func CLIIDEPID() int {
	if p, err := strconv.Atoi(os.Getenv("GEMINI_CLI_IDE_PID")); err == nil && p > 0 {
		return p
	}
	return TerminalIDEPID()
}
