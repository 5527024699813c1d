package tmuxdrive

import (
	"os"
	"strconv"
	"strings"
)

// proc identifies a process across PID reuse: its PID and its start time.
type proc struct {
	pid   int
	start string
}

type procStat struct {
	proc
	ppid, session int
}

// readStats returns every live (non-zombie) process on the machine.
func readStats() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp session ... starttime(22nd) ...":
		// comm may hold anything, so split after its closing parenthesis.
		s := string(data)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		session, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, procStat{proc: proc{pid: pid, start: f[19]}, ppid: ppid, session: session})
	}
	return out
}

// family returns the live processes that belong to the program pid: its
// descendants, and the members of the session it leads (which stay in the
// session when their parent dies).
func family(pid int) []proc {
	stats := readStats()
	children := map[int][]procStat{}
	for _, s := range stats {
		children[s.ppid] = append(children[s.ppid], s)
	}
	seen := map[int]bool{}
	var out []proc
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if !seen[c.pid] {
				seen[c.pid] = true
				out = append(out, c.proc)
				walk(c.pid)
			}
		}
	}
	for _, s := range stats {
		if (s.pid == pid || s.session == pid) && !seen[s.pid] {
			seen[s.pid] = true
			out = append(out, s.proc)
			walk(s.pid)
		}
	}
	return out
}

// alive returns those of procs that still run (the same processes: a reused
// PID does not count).
func alive(procs []proc) []proc {
	now := map[int]string{}
	for _, s := range readStats() {
		now[s.pid] = s.start
	}
	var out []proc
	for _, p := range procs {
		if start, ok := now[p.pid]; ok && start == p.start {
			out = append(out, p)
		}
	}
	return out
}
