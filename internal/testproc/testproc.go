// Package testproc gives tests what they need of the OS on every OS: child
// processes that exist everywhere (the test binary itself, started again
// as a helper that sleeps or exits at once, since Windows has no `true`
// or `sleep`), and whether a Windows test runs under Wine, where a few
// facts cannot be checked. Only tests import it.
package testproc

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// envVar names the helper a test binary runs instead of its tests.
const envVar = "GIC_TESTPROC"

// Main runs the helper when this process was started as one (by Command)
// and returns at once otherwise. A package that uses Command calls it
// first in its TestMain.
func Main() {
	switch os.Getenv(envVar) {
	case "":
		return
	case "sleep":
		time.Sleep(time.Hour)
		os.Exit(0)
	case "exit":
		os.Exit(0)
	case "tree":
		// A parent that starts a sleeping child, prints its PID and sleeps.
		child := Command("sleep")
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Println(child.Process.Pid)
		time.Sleep(time.Hour)
		os.Exit(0)
	default:
		os.Exit(2)
	}
}

// Command returns a command that runs the test binary as a helper: "sleep"
// sleeps until killed (an hour at most), "exit" exits 0 at once, "tree"
// starts a "sleep" child, prints its PID on a line and sleeps.
func Command(what string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envVar+"="+what)
	return cmd
}

// NeedSymlinks skips t under Wine, whose CreateSymbolicLink (Wine 8.0)
// reports success and makes nothing: a test of how links are refused
// cannot mean anything there. Real Windows, and every other OS, runs it.
func NeedSymlinks(t testing.TB) {
	t.Helper()
	if UnderWine() {
		t.Skip("Wine 8.0's CreateSymbolicLink reports success but makes no link, so a test of links cannot mean anything under Wine; real Windows runs it")
	}
}
