//go:build !linux

// Command editorbench measures the editor plugins' cost per cursor move; it
// reads /proc and drives editors on pseudo-terminals, so it runs on Linux
// only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "editorbench runs on Linux only (it reads /proc and opens pseudo-terminals)")
	os.Exit(2)
}
