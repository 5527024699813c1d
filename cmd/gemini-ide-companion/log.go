package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
)

// newLogger makes the logger --log-level and --log-file ask for: logs go
// to stderr (never stdout, the editor link's) or to the file.
func newLogger(cfg config, stdio bool, stderr io.Writer) (zerolog.Logger, func(), error) {
	level := cfg.logLevel
	if level == "" {
		level = "warn"
		if stdio {
			level = "info"
		}
	}
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Logger{}, nil, fmt.Errorf("invalid --log-level %q (use debug, info, warn or error)", level)
	}
	var w io.Writer = stderr
	closeFn := func() {}
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return zerolog.Logger{}, nil, fmt.Errorf("open log file: %w", err)
		}
		w = f
		closeFn = func() { f.Close() }
	} else if !stdio {
		if f, ok := stderr.(interface{ Fd() uintptr }); ok && isatty.IsTerminal(f.Fd()) {
			w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: "15:04:05"}
		}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), closeFn, nil
}

// setup checks --framing and makes the logger, for serve and --stdio. code
// is the exit code when they are unusable (the reason is on stderr), else
// -1.
func setup(cfg config, stdio bool, stderr io.Writer) (logger zerolog.Logger, closeLog func(), code int) {
	if _, err := link.ParseFraming(cfg.framing); err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: --framing: %v\n\n", err)
		printUsage(stderr)
		return zerolog.Logger{}, nil, 2
	}
	logger, closeLog, err := newLogger(cfg, stdio, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gemini-ide-companion: %v\n", err)
		return zerolog.Logger{}, nil, 2
	}
	return logger, closeLog, -1
}
