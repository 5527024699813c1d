package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/mattn/go-isatty"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/review"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// runServe is the standalone companion: it serves the workspace and
// reviews proposed diffs in this terminal.
func runServe(cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	logger, closeLog, code := setup(cfg, false, stderr)
	if code >= 0 {
		return code
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), osproc.StopSignals()...)
	defer stop()
	if err := serveStandalone(ctx, cfg, companion.Options{Version: version, Logger: logger}, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return 1
	}
	return 0
}

func serveStandalone(ctx context.Context, cfg config, opts companion.Options, stdin io.Reader, stdout io.Writer) error {
	ws, err := workspaceDir(cfg)
	if err != nil {
		return err
	}
	color := os.Getenv("NO_COLOR") == ""
	if f, ok := stdout.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		color = false
	}
	ropts := review.Options{In: stdin, Out: stdout, Color: color}
	if f, ok := stdin.(*os.File); ok {
		if restore, ok := review.KeyMode(f); ok {
			defer restore()
			ropts.Keys = true
			ropts.Cooked = func() func() {
				restore()
				return func() { review.KeyMode(f) }
			}
		}
	}
	rv := review.New(ropts)
	s := companion.New(opts)
	s.SetEditor(rv)
	info, err := s.Start(ctx, companion.Identity{
		IDE:       discovery.IDEInfo{Name: "gemini-ide-companion", DisplayName: "Gemini IDE Companion"},
		Workspace: []string{ws},
		IDEPID:    discovery.TerminalIDEPID(),
	})
	if err != nil {
		return err
	}
	defer s.Close()

	fmt.Fprintf(stdout, "Gemini IDE Companion %s is serving %s on 127.0.0.1:%d.\n", version, ws, info.Port)
	if info.DiscoveryFile != "" {
		fmt.Fprintf(stdout, "In another terminal, in this folder, run `gemini` (and `/ide enable` if IDE mode is off).\n")
	} else {
		fmt.Fprintf(stdout, "No discovery file could be written (%v).\n", info.DiscoveryErr)
	}
	fmt.Fprintf(stdout, "To pick this companion when several serve the folder: eval \"$(%s env --pid %d)\"\n", shellQuote(selfPath()), os.Getpid())
	fmt.Fprintf(stdout, "Proposed edits appear here. %s Press Ctrl-C to stop.\n", rv.HowToAnswer())

	errc := make(chan error, 1)
	go func() { errc <- rv.Run(ctx, s.Proposals()) }()
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\nStopping.")
		return nil
	case err := <-errc:
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		// Input closed: keep serving until stopped; decisions can no
		// longer be taken here, so diffs are left to the CLI.
		fmt.Fprintln(stdout, "Input closed: answer proposed edits in Gemini CLI. Press Ctrl-C to stop.")
		<-ctx.Done()
		return nil
	}
}

// selfPath is this program's absolute path, so that printed commands work
// as printed even when it is not on PATH.
func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return "gemini-ide-companion"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
