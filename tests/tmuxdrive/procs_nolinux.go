//go:build !linux

package tmuxdrive

// proc identifies a process. Without /proc only the PID is known.
type proc struct {
	pid int
}

// family returns pid itself: without /proc its descendants are not known.
func family(pid int) []proc { return alive([]proc{{pid: pid}}) }

// PIDAlive reports whether pid runs.
func PIDAlive(pid int) bool { return len(alive([]proc{{pid: pid}})) > 0 }

// GroupAlive reports whether the process pgid runs: without /proc the
// other members of its group are not known.
func GroupAlive(pgid int) bool { return PIDAlive(pgid) }

// Descendants returns pid: without /proc its descendants are not known.
func Descendants(pid int) []int { return []int{pid} }
