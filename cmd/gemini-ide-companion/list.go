package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// printList shows every live companion of this user.
func printList(stdout, stderr io.Writer) int {
	all, err := discovery.ListAll(discovery.Dir())
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "EDITOR\tWORKSPACE\tPID\tIDE PID\tPORT\tAGE")
	n := 0
	for _, f := range all {
		if f.Err != nil || !discovery.Alive(f.IDEPID) || (f.File.PID > 0 && !discovery.Alive(f.File.PID)) {
			continue
		}
		n++
		pid := "-"
		if f.File.PID > 0 {
			pid = strconv.Itoa(f.File.PID)
		}
		name := f.File.IDEInfo.DisplayName
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", name, f.File.WorkspacePath, pid, f.IDEPID, f.File.Port, age(f.ModTime))
	}
	tw.Flush()
	if n == 0 {
		fmt.Fprintf(stderr, "No running companion (in %s).\n", discovery.Dir())
	}
	return 0
}

func age(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	default:
		return d.Round(time.Hour).String()
	}
}
