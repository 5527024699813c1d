// Command powershell stands in for powershell.exe in the private Wine
// prefix of the Windows tests, where Wine's own is a stub that prints
// nothing. It answers the one command Gemini CLI 0.61.0 runs to walk its
// process tree on Windows (getProcessTableWindows in
// packages/core/src/ide/process-utils.ts):
//
//	Get-CimInstance Win32_Process | Select-Object ProcessId,ParentProcessId,Name,CommandLine | ConvertTo-Json -Compress
//
// with the real process table (a Toolhelp snapshot, the same parent PIDs
// Win32_Process reports), so that the CLI's own walk runs as on Windows.
// Anything else fails, saying so.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

type process struct {
	ProcessID       uint32  `json:"ProcessId"`
	ParentProcessID uint32  `json:"ParentProcessId"`
	Name            string  `json:"Name"`
	CommandLine     *string `json:"CommandLine"`
}

func main() {
	cmd := strings.Join(os.Args[1:], " ")
	if !strings.Contains(cmd, "Get-CimInstance Win32_Process") || !strings.Contains(cmd, "ConvertTo-Json") {
		fmt.Fprintf(os.Stderr, "powershell stand-in: only Gemini CLI's process table query is supported, not %q\n", cmd)
		os.Exit(1)
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "powershell stand-in: snapshot: %v\n", err)
		os.Exit(1)
	}
	defer windows.CloseHandle(snap)
	var out []process
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		// Win32_Process has no command line for processes it may not read;
		// the CLI's walk uses only the PIDs.
		out = append(out, process{ProcessID: e.ProcessID, ParentProcessID: e.ParentProcessID, Name: windows.UTF16ToString(e.ExeFile[:])})
	}
	data, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "powershell stand-in: %v\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(data, '\r', '\n'))
}
