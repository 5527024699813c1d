package acp

import (
	"context"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// reapFor is how long after a cancel the adapter watches a server it started
// for a stopped command that starts late.
const reapFor = 2 * time.Second

// reap kills the processes of commands that a cancel stopped but that the
// server still runs: Gemini CLI's A2A server (0.25.2) reports a shell call
// executing before it spawns the command, and its shell tool does not look
// at an abort that came before the spawn, so a cancel in that moment
// leaves the command running to its end. For reapFor, every process under
// the server whose command line holds one of the commands is killed, with
// every process under it. It returns how many it killed.
func reap(ctx context.Context, serverPID int, commands []string) int {
	if serverPID <= 0 || len(commands) == 0 {
		return 0
	}
	killed := 0
	deadline := time.Now().Add(reapFor)
	for {
		killed += reapOnce(ctx, int32(serverPID), commands)
		if time.Now().After(deadline) || ctx.Err() != nil {
			return killed
		}
		select {
		case <-ctx.Done():
			return killed
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func reapOnce(ctx context.Context, server int32, commands []string) int {
	procs, err := process.ProcessesWithContext(ctx)
	if err != nil {
		return 0
	}
	parent := map[int32]int32{}
	byPID := map[int32]*process.Process{}
	for _, p := range procs {
		if pp, err := p.PpidWithContext(ctx); err == nil {
			parent[p.Pid] = pp
			byPID[p.Pid] = p
		}
	}
	under := func(pid, root int32) bool {
		for i := 0; i < 64 && pid > 1; i++ {
			pid = parent[pid]
			if pid == root {
				return true
			}
		}
		return false
	}
	var targets []int32
	for pid, p := range byPID {
		if !under(pid, server) {
			continue
		}
		cmd, err := p.CmdlineWithContext(ctx)
		if err != nil {
			continue
		}
		for _, c := range commands {
			if c != "" && strings.Contains(cmd, c) {
				targets = append(targets, pid)
				break
			}
		}
	}
	if len(targets) == 0 {
		return 0
	}
	// The whole subtree of each, gathered before any is killed (a child
	// whose parent dies is no longer under it).
	kill := map[int32]bool{}
	for pid := range byPID {
		for _, t := range targets {
			if pid == t || under(pid, t) {
				kill[pid] = true
			}
		}
	}
	n := 0
	for pid := range kill {
		if byPID[pid].KillWithContext(ctx) == nil {
			n++
		}
	}
	return n
}
