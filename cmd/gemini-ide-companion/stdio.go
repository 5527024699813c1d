package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/mattn/go-isatty"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/agentpanel"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// runStdio speaks the editor link on stdin and stdout: how editor plugins
// run the companion.
func runStdio(cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	logger, closeLog, code := setup(cfg, true, stderr)
	if code >= 0 {
		return code
	}
	defer closeLog()
	framing, _ := link.ParseFraming(cfg.framing)
	ctx, stop := signal.NotifyContext(context.Background(), osproc.StopSignals()...)
	defer stop()
	logger.Info().Str("version", version).Int("pid", os.Getpid()).Stringer("framing", framing).Msg("editor link starting")
	if err := editorlink.Serve(ctx, pollable(stdin), stdout, editorlink.Config{
		Options:    companion.Options{Version: version, Logger: logger, EditorTimeout: cfg.timeout},
		Framing:    framing,
		Extensions: []editorlink.Extension{agentpanel.Extension(logger)},
	}); err != nil {
		logger.Error().Err(err).Msg("editor link failed")
		return 1
	}
	return 0
}

// pollable returns stdin as a file the runtime polls, so that closing it
// releases a pending read and the editor link can stop without waiting for
// the editor to close the pipe, and read so that an editor's stream of
// cursor reports wakes the process as little as it can
// (osproc.QuietReader). Other readers are returned as they are.
func pollable(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || isatty.IsTerminal(f.Fd()) {
		// A terminal is shared with the shell; leave its mode alone.
		return r
	}
	return osproc.QuietReader(f)
}
