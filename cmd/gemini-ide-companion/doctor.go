package main

import (
	"context"
	"fmt"
	"io"

	"github.com/gemini-ide-companion/gemini-ide-companion/cmd/gemini-ide-companion/doctor"
)

// runDoctor prints doctor's findings for the workspace (default: the
// current folder); exit 0 only when a gemini started there would connect.
func runDoctor(cfg config, stdout, stderr io.Writer) int {
	ws, err := workspaceDir(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	rep := doctor.Run(context.Background(), doctor.Options{Cwd: ws})
	if cfg.json {
		if err := doctor.WriteJSON(stdout, rep); err != nil {
			return 1
		}
	} else {
		doctor.Write(stdout, rep)
	}
	if !rep.WouldConnect {
		return 1
	}
	return 0
}
