package discovery

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// IDEPID returns the PID that Gemini CLI will compute as "the IDE" when it
// runs in one of the editor's terminals, given the PID of the process whose
// children are those terminals' shells (the editor, for most editors).
//
// The CLI walks up from itself to the first shell and takes that shell's
// grandparent if its PID is above 1, else the shell's parent. The shell's
// parent is editorPID, so the answer is editorPID's parent when that is
// above 1, else editorPID itself.
func IDEPID(editorPID int) (int, error) {
	if editorPID <= 0 || editorPID > math.MaxInt32 {
		return 0, fmt.Errorf("invalid editor process id %d", editorPID)
	}
	p, err := process.NewProcess(int32(editorPID))
	if err != nil {
		return 0, fmt.Errorf("editor process %d: %w", editorPID, err)
	}
	ppid, err := p.Ppid()
	if err != nil {
		return 0, fmt.Errorf("parent of editor process %d: %w", editorPID, err)
	}
	if ppid > 1 {
		return int(ppid), nil
	}
	return editorPID, nil
}

// Alive reports whether pid names a running process (of any user). A zombie
// counts as gone.
func Alive(pid int) bool { return osproc.Alive(pid) }

// shells are the process names at which the CLI's walk stops.
var shells = map[string]bool{"zsh": true, "bash": true, "sh": true, "tcsh": true, "csh": true, "ksh": true, "fish": true, "dash": true}

// commandName is the name the CLI gives a process: the base name of the
// first word of its command line, as `ps -o command=` prints it.
func commandName(p *process.Process) string {
	cmd, err := p.Cmdline()
	if err != nil || cmd == "" {
		name, _ := p.Name()
		return name
	}
	first, _, _ := strings.Cut(cmd, " ")
	return filepath.Base(first)
}

// TerminalIDEPID is the IDE PID for a companion that runs in a terminal
// itself (standalone mode): a CLI started in a sibling terminal window or
// pane computes the same PID when the companion's parent is a shell. Other
// cases get the companion's own PID.
func TerminalIDEPID() int {
	self := os.Getpid()
	parent, err := process.NewProcess(int32(os.Getppid()))
	if err != nil || !shells[commandName(parent)] {
		return self
	}
	terminal, err := parent.Ppid()
	if err != nil || terminal <= 1 {
		return self
	}
	pid, err := IDEPID(int(terminal))
	if err != nil {
		return self
	}
	return pid
}
