// Package doctor answers "why does /ide not connect here?": it looks at
// what a Gemini CLI started in a folder would look at (the discovery
// directory and files, the GEMINI_CLI_IDE_* variables, the container trap,
// the gemini on PATH) and makes a real authenticated MCP initialize against
// the companion that CLI would pick. Each finding says what to do.
package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// TestedCLIVersion is the Gemini CLI release the project is tested against.
const TestedCLIVersion = "0.61.0"

// Level grades a finding.
type Level string

// Levels, from good to bad. Only Fail means a CLI started here would not
// connect.
const (
	OK   Level = "ok"
	Info Level = "info"
	Warn Level = "warn"
	Fail Level = "fail"
)

// Finding is one thing doctor checked: what it saw and, unless all is well,
// what to do.
type Finding struct {
	Level   Level  `json:"level"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is every finding, and whether a CLI started in Cwd would connect.
type Report struct {
	Cwd          string    `json:"cwd"`
	WouldConnect bool      `json:"wouldConnect"`
	Findings     []Finding `json:"findings"`
}

// Options are the machine's facts doctor reads; zero values mean the real
// ones.
type Options struct {
	Cwd        string
	Dir        string              // discovery directory
	Getenv     func(string) string // environment
	LookPath   func(string) (string, error)
	Alive      func(pid int) bool
	DockerEnv  string // path of the container marker (default /.dockerenv)
	IDEPID     int    // the IDE PID a CLI started here computes
	HTTPClient *http.Client
}

func (o *Options) defaults() {
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	if o.Dir == "" {
		o.Dir = discovery.Dir()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.Alive == nil {
		o.Alive = discovery.Alive
	}
	if o.DockerEnv == "" {
		o.DockerEnv = "/.dockerenv"
	}
	if o.IDEPID == 0 {
		o.IDEPID = discovery.CLIIDEPID()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 5 * time.Second}
	}
}

// Run checks everything and returns the report.
func Run(ctx context.Context, o Options) Report {
	o.defaults()
	r := Report{Cwd: o.Cwd}
	add := func(l Level, check, msg, fix string) {
		r.Findings = append(r.Findings, Finding{Level: l, Check: check, Message: msg, Fix: fix})
	}

	// The discovery directory.
	st, err := os.Lstat(o.Dir)
	switch {
	case err != nil:
		add(Fail, "discovery directory", fmt.Sprintf("%s does not exist: no companion has started as this user with this TMPDIR", o.Dir),
			"start the companion first (gemini-ide-companion in the project folder, or :GeminiCli in Neovim), from a shell with the same TMPDIR as the CLI's")
	case !st.IsDir():
		add(Fail, "discovery directory", o.Dir+" is not a folder", "remove it; the next companion recreates it")
	default:
		msg := fmt.Sprintf("%s (mode %04o)", o.Dir, st.Mode().Perm())
		fix := "chmod 700 " + o.Dir
		if runtime.GOOS == "windows" {
			// Mode bits mean nothing there: the folder's ACL does.
			msg = o.Dir
			fix = fmt.Sprintf(`icacls "%s" /inheritance:r /grant:r "%%USERNAME%%:(OI)(CI)F"`, o.Dir)
		}
		if !osproc.Mine(o.Dir, st) {
			add(Fail, "discovery directory", msg+" belongs to another user", "remove it (or use another TMPDIR); the companion will not write its token there")
		} else if osproc.OthersCanWrite(o.Dir, st) {
			add(Warn, "discovery directory", msg+" is writable by others", fix)
		} else {
			add(OK, "discovery directory", msg, "")
		}
	}

	// Every discovery file.
	all, err := discovery.ListAll(o.Dir)
	if err != nil {
		add(Fail, "discovery files", err.Error(), "check the permissions of "+o.Dir)
	}
	var usable []discovery.Entry
	for _, f := range all {
		name := filepath.Base(f.Path)
		if f.Err != nil {
			add(Warn, "discovery file", fmt.Sprintf("%s cannot be used: %v", name, f.Err), "the CLI skips it; remove it if it is not yours: rm "+f.Path)
			continue
		}
		editor := f.File.IDEInfo.DisplayName
		if editor == "" {
			editor = "an IDE without ideInfo"
		}
		desc := fmt.Sprintf("%s: %s serving %s on port %d (IDE PID %d", name, editor, f.File.WorkspacePath, f.File.Port, f.IDEPID)
		if f.File.PID > 0 {
			desc += fmt.Sprintf(", companion PID %d", f.File.PID)
		}
		desc += ")"
		switch {
		case !o.Alive(f.IDEPID):
			add(Warn, "discovery file", desc+": its IDE process is gone (stale)", "rm "+f.Path+" (a new companion also removes it)")
			continue
		case f.File.PID > 0 && !o.Alive(f.File.PID):
			add(Warn, "discovery file", desc+": its companion is gone (stale)", "rm "+f.Path+" (a new companion also removes it)")
			continue
		}
		add(OK, "discovery file", desc, "")
		usable = append(usable, discovery.Entry{Path: f.Path, IDEPID: f.IDEPID, File: f.File})
	}

	// The variables a terminal may carry.
	envPort, _ := strconv.Atoi(o.Getenv("GEMINI_CLI_IDE_SERVER_PORT"))
	var vars []string
	for _, k := range []string{"GEMINI_CLI_IDE_SERVER_PORT", "GEMINI_CLI_IDE_WORKSPACE_PATH", "GEMINI_CLI_IDE_AUTH_TOKEN", "GEMINI_CLI_IDE_PID", "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND"} {
		if o.Getenv(k) != "" {
			vars = append(vars, k)
		}
	}
	if len(vars) == 0 {
		add(Info, "environment", "no GEMINI_CLI_IDE_* variables: the CLI picks a companion by its discovery file", "")
	} else if envPort > 0 {
		live := false
		for _, e := range usable {
			if e.File.Port == envPort {
				live = true
			}
		}
		if live {
			add(OK, "environment", fmt.Sprintf("%s set; GEMINI_CLI_IDE_SERVER_PORT=%d is a live companion", strings.Join(vars, ", "), envPort), "")
		} else {
			add(Fail, "environment", fmt.Sprintf("GEMINI_CLI_IDE_SERVER_PORT=%d names no live companion (left over from a stopped one?)", envPort),
				`unset GEMINI_CLI_IDE_SERVER_PORT GEMINI_CLI_IDE_WORKSPACE_PATH GEMINI_CLI_IDE_AUTH_TOKEN GEMINI_CLI_IDE_PID, or eval "$(gemini-ide-companion env)"`)
		}
	} else {
		add(Info, "environment", strings.Join(vars, ", ")+" set", "")
	}

	// The companion the CLI would pick.
	picked := discovery.CLIPick(usable, o.Cwd, o.IDEPID, envPort, o.Alive)
	var chosen *discovery.Entry
	if len(picked) == 0 {
		if len(usable) > 0 {
			add(Fail, "workspace", o.Cwd+" is in no served workspace: the CLI says \"Directory mismatch\"",
				"run gemini inside a served folder, or start a companion for this one: gemini-ide-companion --workspace "+o.Cwd)
		} else {
			add(Fail, "workspace", "no live companion serves "+o.Cwd, "start one first: gemini-ide-companion (in this folder), or :GeminiCli in Neovim; then start gemini")
		}
	} else {
		chosen = &picked[0]
		msg := fmt.Sprintf("a gemini started here picks %s on port %d (workspace %s)", name(chosen.File), chosen.File.Port, chosen.File.WorkspacePath)
		if len(picked) > 1 {
			msg += fmt.Sprintf("; %d companions serve this folder", len(picked))
		}
		add(OK, "workspace", msg, "")
		if chosen.File.IDEInfo.DisplayName == "" && o.Getenv("TERM_PROGRAM") != "vscode" && o.Getenv("TERM_PROGRAM") != "sublime" {
			add(Fail, "IDE gating", "the chosen discovery file has no ideInfo and this terminal is not a VS Code/Sublime/JetBrains one: the CLI says \"IDE integration is not supported in your current environment\"",
				"use a companion that writes ideInfo (this one does), or run gemini from that IDE's terminal")
		} else {
			add(OK, "IDE gating", "the CLI accepts "+name(chosen.File)+" (ideInfo present)", "")
		}
	}

	// The container trap.
	if _, err := os.Stat(o.DockerEnv); err == nil {
		if o.Getenv("SSH_CONNECTION") == "" && o.Getenv("REMOTE_CONTAINERS") == "" {
			add(Fail, "container", o.DockerEnv+" exists and neither SSH_CONNECTION nor REMOTE_CONTAINERS is set: the CLI dials host.docker.internal, not 127.0.0.1",
				"export REMOTE_CONTAINERS=1 before starting gemini (the companion runs in this container)")
		} else {
			add(OK, "container", "in a container, but SSH_CONNECTION/REMOTE_CONTAINERS is set: the CLI dials 127.0.0.1", "")
		}
	}

	// The gemini on PATH.
	if path, err := o.LookPath("gemini"); err != nil {
		add(Warn, "gemini", "no gemini on PATH", "npm install -g @google/gemini-cli@"+TestedCLIVersion)
	} else {
		v := cliVersion(ctx, path)
		switch {
		case v == "":
			add(Warn, "gemini", path+": version unknown (gemini --version failed)", "")
		case v == TestedCLIVersion:
			add(OK, "gemini", fmt.Sprintf("%s %s (the version this project is tested with)", path, v), "")
		default:
			add(Info, "gemini", fmt.Sprintf("%s %s; tested with %s", path, v, TestedCLIVersion), "if /ide misbehaves, try: npm install -g @google/gemini-cli@"+TestedCLIVersion)
		}
	}

	// A real authenticated initialize.
	if chosen != nil {
		if err := initialize(ctx, o.HTTPClient, chosen.File); err != nil {
			add(Fail, "connection", fmt.Sprintf("MCP initialize on 127.0.0.1:%d failed: %v", chosen.File.Port, err),
				"the companion is not answering: restart it (its discovery file may be stale: rm "+chosen.Path+")")
		} else {
			add(OK, "connection", fmt.Sprintf("MCP initialize on 127.0.0.1:%d with the file's token succeeded", chosen.File.Port), "")
		}
	}

	r.WouldConnect = true
	for _, f := range r.Findings {
		if f.Level == Fail {
			r.WouldConnect = false
		}
	}
	return r
}

func name(f discovery.File) string {
	if f.IDEInfo.DisplayName != "" {
		return f.IDEInfo.DisplayName
	}
	return "an unnamed IDE"
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+[^\s]*`)

func cliVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	return versionRE.FindString(string(out))
}

// initialize makes the CLI's first request with the file's token and checks
// that the companion answers it.
func initialize(ctx context.Context, c *http.Client, f discovery.File) error {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gemini-ide-companion-doctor","version":"1"}}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/mcp", f.Port), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.AuthToken)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	if !bytes.Contains(data, []byte(`"serverInfo"`)) {
		return fmt.Errorf("unexpected answer: %.200s", data)
	}
	// Close the session we opened, politely.
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		del, err := http.NewRequestWithContext(ctx, http.MethodDelete, req.URL.String(), nil)
		if err == nil {
			del.Header.Set("Authorization", "Bearer "+f.AuthToken)
			del.Header.Set("Mcp-Session-Id", sid)
			if resp, err := c.Do(del); err == nil {
				resp.Body.Close()
			}
		}
	}
	return nil
}

// Write prints the report for a person: one line per finding, the fix
// under it, and the verdict.
func Write(w io.Writer, r Report) {
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%-4s  %s: %s\n", strings.ToUpper(string(f.Level)), f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", f.Fix)
		}
	}
	if r.WouldConnect {
		fmt.Fprintf(w, "\nA gemini started in %s would connect (/ide status: Connected).\n", r.Cwd)
	} else {
		fmt.Fprintf(w, "\nA gemini started in %s would NOT connect; see the FAIL lines above.\n", r.Cwd)
	}
}

// WriteJSON prints the report as JSON, for editor plugins.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
