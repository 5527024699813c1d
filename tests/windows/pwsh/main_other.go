//go:build !windows

// Command powershell stands in for powershell.exe in the Wine prefix of
// the Windows tests; it is a Windows program (see main_windows.go).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "powershell stand-in: a Windows program, for the Wine prefix of scripts/windows.sh")
	os.Exit(1)
}
