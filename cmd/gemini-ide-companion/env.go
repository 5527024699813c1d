package main

import (
	"fmt"
	"io"
	"sort"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// printEnv prints export lines for the companion a Gemini CLI started in the
// workspace would connect to, or the one named by --port/--pid.
func printEnv(cfg config, stdout, stderr io.Writer) int {
	ws, err := workspaceDir(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	entries, err := discovery.List(discovery.Dir())
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	var e discovery.Entry
	if cfg.port > 0 || cfg.pid > 0 {
		var ok bool
		for _, c := range entries {
			if (cfg.port > 0 && c.File.Port == cfg.port) || (cfg.pid > 0 && (c.File.PID == cfg.pid || c.IDEPID == cfg.pid)) {
				e, ok = c, true
				break
			}
		}
		if !ok {
			fmt.Fprintf(stderr, "gemini-ide-companion: no running companion with --port %d / --pid %d (see: gemini-ide-companion list)\n", cfg.port, cfg.pid)
			return 1
		}
	} else {
		found := discovery.CLIPick(entries, ws, discovery.CLIIDEPID(), discovery.CLIEnvPort(), discovery.Alive)
		if len(found) == 0 {
			fmt.Fprintf(stderr, "gemini-ide-companion: no running companion serves %s (see: gemini-ide-companion list)\n", ws)
			return 1
		}
		e = found[0]
		if len(found) > 1 {
			fmt.Fprintf(stderr, "gemini-ide-companion: %d companions serve %s; picked %s (port %d), as Gemini CLI would. Others: --port", len(found), ws, e.File.IDEInfo.DisplayName, e.File.Port)
			for _, o := range found[1:] {
				fmt.Fprintf(stderr, " %d", o.File.Port)
			}
			fmt.Fprintln(stderr)
		}
	}
	env := discovery.Env(e.File, e.IDEPID)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "export %s=%s\n", k, shellQuote(env[k]))
	}
	return 0
}
