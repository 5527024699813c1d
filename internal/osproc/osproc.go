// Package osproc holds what the companion needs from the operating system
// and does differently on each: who owns a file, keeping a file to its
// owner, opening a file that may be a trap (a link, a FIFO), telling whether
// a process lives, and which signals stop the process. Each OS has its own
// file; the rest of the code calls only the functions below.
//
//   - Mine(path, fi) reports whether the current user owns a file.
//   - OthersCanWrite(path, fi) reports whether other users may replace
//     entries in a directory (mode bits; the directory's ACL on Windows).
//   - MakePrivate(path, dir) leaves a file or directory to its owner alone.
//   - OpenNoFollow(path) opens a file for reading without following a link
//     at path, without blocking on a FIFO or device, and (on Windows)
//     without keeping anyone from replacing or removing it meanwhile.
//   - Replace(old, new) renames a file over another in one step; on
//     Windows it waits a moment for a reader that holds the target.
//   - Alive(pid) reports whether a process is running; WatchExit(ctx, pid)
//     is told when it stops (on Linux without polling, through a pidfd).
//   - Parents() is a snapshot of the process table: PID to parent PID.
//   - OnTerminal(cmd) starts cmd with its stdin, a pseudo-terminal, as its
//     controlling terminal (benchmarks that drive editors; nothing on
//     Windows).
//   - StopSignals() lists the signals that ask the process to stop.
//   - SurviveBrokenPipe() keeps a write to a closed stdout or stderr from
//     killing the process.
//   - Pollable(f) returns f switched to non-blocking mode where the runtime
//     can then poll it, so closing it releases a blocked read.
//   - QuietReader(f) is Pollable(f) that, on Linux, wakes the process
//     once per read rather than once per write of the other end.
package osproc

import "math"

// validPID reports whether pid can name a process at all.
func validPID(pid int) bool {
	return pid > 0 && pid <= math.MaxInt32
}
