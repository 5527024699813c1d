//go:build linux

package vim

import (
	"os"
	"strconv"
	"strings"
)

// processGroupAlive reports whether a live (not zombie) process is in the
// process group or session pgid (a job Vim starts leads both).
func processGroupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if f[2] == strconv.Itoa(pgid) || f[3] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// pidAlive reports whether pid runs (and is not a zombie).
func pidAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	return end >= 0 && end+2 < len(s) && s[end+2] != 'Z' && s[end+2] != 'X'
}
