package discovery

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// IDEPID returns the PID that Gemini CLI will compute as "the IDE" when it
// runs in one of the editor's terminals, given the PID of the process whose
// children are those terminals' shells (the editor, for most editors).
//
// On Unix the CLI walks up from itself to the first shell and takes that
// shell's grandparent if its PID is above 1, else the shell's parent. The
// shell's parent is editorPID, so the answer is editorPID's parent when
// that is above 1, else editorPID itself.
//
// On Windows the CLI takes the third process from the top of its chain of
// ancestors (see thirdFromTop): whatever lies between the CLI and the
// editor, that is the third from the top of the editor's own chain when
// the editor has at least two ancestors. With fewer, the CLI's pick lies
// below the editor, on a path that differs from terminal to terminal, and
// no file name can match it: IDEPID then returns editorPID, and the
// terminals the editor opens carry GEMINI_CLI_IDE_PID (see Env), which the
// CLI takes instead of its walk.
func IDEPID(editorPID int) (int, error) {
	if editorPID <= 0 || editorPID > math.MaxInt32 {
		return 0, fmt.Errorf("invalid editor process id %d", editorPID)
	}
	if runtime.GOOS == "windows" {
		parents, err := osproc.Parents()
		if err != nil {
			return 0, fmt.Errorf("editor process %d: %w", editorPID, err)
		}
		if _, ok := parents[editorPID]; !ok {
			return 0, fmt.Errorf("editor process %d is not running", editorPID)
		}
		return thirdFromTop(parents, editorPID), nil
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

// maxAncestors is how far up Gemini CLI's walk goes (MAX_TRAVERSAL_DEPTH).
const maxAncestors = 32

// thirdFromTop is Gemini CLI 0.61.0's Windows rule
// (getIdeProcessInfoForWindows in packages/core/src/ide/process-utils.ts)
// applied to pid's own chain: from pid up through parents (PID to parent
// PID, one snapshot of the process table), stopping at a process whose
// parent is 0 or not running, at most maxAncestors long; the third
// process from the top of that chain, or pid when the chain is shorter.
func thirdFromTop(parents map[int]int, pid int) int {
	chain := []int{pid}
	for cur := pid; len(chain) < maxAncestors; {
		ppid := parents[cur]
		if _, running := parents[ppid]; ppid == 0 || !running {
			break
		}
		chain = append(chain, ppid)
		cur = ppid
	}
	if len(chain) >= 3 {
		return chain[len(chain)-3]
	}
	return pid
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
// cases get the companion's own PID. On Windows it is what a CLI started
// from the companion's own shell computes.
func TerminalIDEPID() int {
	self := os.Getpid()
	if runtime.GOOS == "windows" {
		if pid, err := IDEPID(os.Getppid()); err == nil {
			return pid
		}
		return self
	}
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
