package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/edtools"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// runTools is `gemini-ide-companion tools`: a stdio MCP server with the
// editor tools, each call forwarded to the companion of the editor it runs
// in (docs/editor-tools.md). It starts without one; each call then says
// what to start.
func runTools(cfg config, stdin io.Reader, stdout, stderr io.Writer) int {
	logger, closeLog, code := setup(cfg, false, stderr)
	if code >= 0 {
		return code
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), osproc.StopSignals()...)
	defer stop()
	fw := &forwarder{dir: discovery.Dir(), cwd: cfg.workspace, client: &http.Client{Transport: &http.Transport{
		Proxy:               nil, // the companion is on 127.0.0.1: never through a proxy
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "gemini-ide-companion-tools", Version: version}, nil)
	edtools.Register(srv, fw.call)
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}, MaxLineLength: 4 << 20})
	if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		logger.Error().Err(err).Msg("tools server stopped")
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// target is a companion to forward to.
type target struct {
	port  int
	token string
}

// forwarder finds the companion and forwards each call to its /tools
// endpoint with its token.
type forwarder struct {
	dir    string // discovery directory
	cwd    string // "" for the current folder
	client *http.Client

	mu     sync.Mutex
	target target
}

// find locates the companion the way Gemini CLI does: the
// GEMINI_CLI_IDE_* variables of the editor's terminal (which the CLI
// passes on to the stdio servers it starts), else the discovery file for
// the current folder. It returns a message for the model when none runs.
// With skipEnv (the variables' companion is gone), only the discovery
// files count.
func (f *forwarder) find(skipEnv bool) (target, error) {
	envPort := discovery.CLIEnvPort()
	if skipEnv {
		envPort = 0
	}
	if tok := os.Getenv("GEMINI_CLI_IDE_AUTH_TOKEN"); envPort > 0 && tok != "" {
		return target{port: envPort, token: tok}, nil
	}
	cwd := f.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return target{}, fmt.Errorf("cannot find the editor companion: current folder: %w", err)
		}
		cwd = wd
	}
	entries, err := discovery.List(f.dir)
	if err != nil {
		return target{}, fmt.Errorf("cannot find the editor companion: %w", err)
	}
	found := discovery.CLIPick(entries, cwd, discovery.CLIIDEPID(), envPort, discovery.Alive)
	if len(found) == 0 {
		return target{}, fmt.Errorf("no editor companion is running for %s: open this folder in an editor with the gemini-ide-companion plugin "+
			"(Neovim, Vim, Emacs, Sublime Text, JetBrains) and start the agent from the editor's terminal; "+
			"`gemini-ide-companion doctor` says what is missing", cwd)
	}
	return target{port: found[0].File.Port, token: found[0].File.AuthToken}, nil
}

// call forwards one tool call; when the companion it knew is gone (a
// restarted editor), it looks again and retries once.
func (f *forwarder) call(ctx context.Context, name string, args json.RawMessage) edtools.Result {
	f.mu.Lock()
	t := f.target
	f.mu.Unlock()
	if t.port == 0 {
		var err error
		if t, err = f.find(false); err != nil {
			return edtools.Result{Text: err.Error(), IsError: true}
		}
	}
	res, retry := f.post(ctx, t, name, args)
	if retry {
		nt, err := f.find(true)
		if err == nil && nt != t {
			t = nt
			res, _ = f.post(ctx, t, name, args)
		}
	}
	f.mu.Lock()
	f.target = t
	if retry {
		f.target = target{}
	}
	f.mu.Unlock()
	return res
}

// post sends the call to t's /tools endpoint. retry says the companion
// could not be reached or refused the token: another may serve now.
func (f *forwarder) post(ctx context.Context, t target, name string, args json.RawMessage) (edtools.Result, bool) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	body, err := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{name, args})
	if err != nil {
		return edtools.Result{Text: fmt.Sprintf("%s: invalid arguments: %v", name, err), IsError: true}, false
	}
	url := "http://127.0.0.1:" + strconv.Itoa(t.port) + "/tools"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return edtools.Result{Text: err.Error(), IsError: true}, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return edtools.Result{Text: name + ": the call was cancelled", IsError: true}, false
		}
		return edtools.Result{Text: fmt.Sprintf("the editor companion on port %d does not answer (the editor may have closed): "+
			"restart the companion in your editor, then restart the agent from the editor's terminal", t.port), IsError: true}, true
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return edtools.Result{Text: fmt.Sprintf("%s: reading the companion's answer: %v", name, err), IsError: true}, false
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return edtools.Result{Text: fmt.Sprintf("the editor companion on port %d refused the token this agent was given "+
			"(the companion restarted): restart the agent from the editor's terminal", t.port), IsError: true}, true
	case resp.StatusCode != http.StatusOK:
		return edtools.Result{Text: fmt.Sprintf("the editor companion refused the call: %s %s", resp.Status, strings.TrimSpace(string(data))), IsError: true}, false
	}
	var res edtools.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return edtools.Result{Text: fmt.Sprintf("%s: the companion's answer is not JSON: %v", name, err), IsError: true}, false
	}
	return res, false
}
