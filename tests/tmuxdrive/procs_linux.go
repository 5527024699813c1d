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
	ppid, pgrp, session int
}

// readStats returns every live (non-zombie) process on the machine.
func readStats() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		if st, ok := readStat(e.Name()); ok {
			out = append(out, st)
		}
	}
	return out
}

// readStat reads /proc/<name>/stat; false when name is no live (non-zombie)
// process.
func readStat(name string) (procStat, bool) {
	pid, err := strconv.Atoi(name)
	if err != nil {
		return procStat{}, false
	}
	data, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// "pid (comm) state ppid pgrp session ... starttime(22nd) ...":
	// comm may hold anything, so split after its closing parenthesis.
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	session, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{proc: proc{pid: pid, start: f[19]}, ppid: ppid, pgrp: pgrp, session: session}, true
}

// PIDAlive reports whether pid runs (a zombie does not).
func PIDAlive(pid int) bool {
	_, ok := readStat(strconv.Itoa(pid))
	return ok
}

// GroupAlive reports whether a live process is in the process group or
// the session pgid: whether anything a job leader started (a job Vim
// starts leads both) still runs.
func GroupAlive(pgid int) bool {
	for _, s := range readStats() {
		if s.pgrp == pgid || s.session == pgid {
			return true
		}
	}
	return false
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

// Descendants returns pid and every live process below it.
func Descendants(pid int) []int {
	children := map[int][]int{}
	for _, s := range readStats() {
		children[s.ppid] = append(children[s.ppid], s.pid)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
