package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports.
const clockTicks = 100

// procMemory is what /proc/<pid>/status says about a process's memory.
type procMemory struct {
	RSS  int64 // VmRSS, bytes
	Peak int64 // VmHWM, bytes
}

// readMemory reads VmRSS and VmHWM of pid.
func readMemory(pid int) (procMemory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	var m procMemory
	for line := range strings.SplitSeq(string(data), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 1 {
			continue
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return procMemory{}, fmt.Errorf("parse %s of pid %d: %w", key, pid, err)
		}
		if key == "VmRSS" {
			m.RSS = kib << 10
		} else {
			m.Peak = kib << 10
		}
	}
	if m.RSS == 0 {
		return procMemory{}, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	return m, nil
}

// resetPeak asks the kernel to restart VmHWM from the current RSS (writing 5
// to clear_refs, Linux 4.0+). It reports whether that worked; without it the
// peak is the peak since the process started.
func resetPeak(pid int) bool {
	err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	return err == nil
}

// readCPU returns the user+system CPU time pid has used so far.
func readCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu of pid %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces; the
	// fields after the last ')' start with field 3 (state).
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat: no ')'", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	// utime and stime are fields 14 and 15, i.e. indexes 11 and 12 here.
	if len(fields) < 13 {
		return 0, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// schedStats is what the kernel's scheduler counted for every thread of a
// process (/proc/<pid>/task/*/schedstat): time on a CPU in nanoseconds,
// exact where /proc/<pid>/stat rounds to 10 ms, and the number of times a
// thread was put on a CPU, which is how often the process woke up. A
// thread that ends between two readings takes its counts with it; neither
// companion ends threads while it runs.
type schedStats struct {
	run    time.Duration
	wakeup int64
}

func (s schedStats) sub(o schedStats) schedStats {
	return schedStats{run: s.run - o.run, wakeup: s.wakeup - o.wakeup}
}

// readSched sums the scheduler's counts over the threads of pid.
func readSched(pid int) (schedStats, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return schedStats{}, fmt.Errorf("list threads of pid %d: %w", pid, err)
	}
	var s schedStats
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended meanwhile
		}
		if err != nil {
			return schedStats{}, fmt.Errorf("read schedstat of pid %d: %w", pid, err)
		}
		f := strings.Fields(string(data))
		if len(f) < 3 {
			return schedStats{}, fmt.Errorf("parse schedstat of pid %d: %q", pid, data)
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return schedStats{}, fmt.Errorf("parse schedstat of pid %d: %q", pid, data)
		}
		s.run += time.Duration(run)
		s.wakeup += n
	}
	return s, nil
}
