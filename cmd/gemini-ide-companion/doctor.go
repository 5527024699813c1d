package main

import (
	"context"
	"encoding/json"
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
	if cfg.agent {
		return runAgentDoctor(cfg, ws, stdout, stderr)
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

// runAgentDoctor prints what the agent panel needs to start Gemini CLI's
// A2A server in ws; exit 0 only when it could.
func runAgentDoctor(cfg config, ws string, stdout, stderr io.Writer) int {
	var command []string
	if cfg.agentCommand != "" {
		if err := json.Unmarshal([]byte(cfg.agentCommand), &command); err != nil {
			fmt.Fprintf(stderr, "gemini-ide-companion: --agent-command is a JSON list of strings: %v\n", err)
			return 2
		}
	}
	rep := doctor.Agent(context.Background(), doctor.AgentOptions{Cwd: ws, Command: command, Setting: cfg.agentSetting})
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 1
		}
	} else {
		doctor.WriteAgent(stdout, rep)
	}
	if !rep.CanStart {
		return 1
	}
	return 0
}
