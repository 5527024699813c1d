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
	c := &checks{o: o, r: Report{Cwd: o.Cwd}}
	c.directory()
	usable := c.files()
	envPort := c.environment(usable)
	chosen := c.pick(usable, envPort)
	c.container()
	c.gemini(ctx)
	c.connection(ctx, chosen)
	c.editorTools()
	c.r.WouldConnect = true
	for _, f := range c.r.Findings {
		if f.Level == Fail {
			c.r.WouldConnect = false
		}
	}
	return c.r
}

// checks are the findings of one Run, made one check at a time.
type checks struct {
	o Options
	r Report
}

func (c *checks) add(l Level, check, msg, fix string) {
	c.r.Findings = append(c.r.Findings, Finding{Level: l, Check: check, Message: msg, Fix: fix})
}

// directory checks the discovery directory.
func (c *checks) directory() {
	st, err := os.Lstat(c.o.Dir)
	switch {
	case err != nil:
		c.add(Fail, "discovery directory", fmt.Sprintf("%s does not exist: no companion has started as this user with this TMPDIR", c.o.Dir),
			"start the companion first (gemini-ide-companion in the project folder, or :GeminiCli in Neovim), from a shell with the same TMPDIR as the CLI's")
	case !st.IsDir():
		c.add(Fail, "discovery directory", c.o.Dir+" is not a folder", "remove it; the next companion recreates it")
	default:
		msg := fmt.Sprintf("%s (mode %04o)", c.o.Dir, st.Mode().Perm())
		fix := "chmod 700 " + c.o.Dir
		if runtime.GOOS == "windows" {
			// Mode bits mean nothing there: the folder's ACL does.
			msg = c.o.Dir
			fix = fmt.Sprintf(`icacls "%s" /inheritance:r /grant:r "%%USERNAME%%:(OI)(CI)F"`, c.o.Dir)
		}
		if !osproc.Mine(c.o.Dir, st) {
			c.add(Fail, "discovery directory", msg+" belongs to another user", "remove it (or use another TMPDIR); the companion will not write its token there")
		} else if osproc.OthersCanWrite(c.o.Dir, st) {
			c.add(Warn, "discovery directory", msg+" is writable by others", fix)
		} else {
			c.add(OK, "discovery directory", msg, "")
		}
	}
}

// files checks every discovery file and returns the live ones.
func (c *checks) files() []discovery.Entry {
	all, err := discovery.ListAll(c.o.Dir)
	if err != nil {
		c.add(Fail, "discovery files", err.Error(), "check the permissions of "+c.o.Dir)
	}
	var usable []discovery.Entry
	for _, f := range all {
		name := filepath.Base(f.Path)
		if f.Err != nil {
			c.add(Warn, "discovery file", fmt.Sprintf("%s cannot be used: %v", name, f.Err), "the CLI skips it; remove it if it is not yours: rm "+f.Path)
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
		case !c.o.Alive(f.IDEPID):
			c.add(Warn, "discovery file", desc+": its IDE process is gone (stale)", "rm "+f.Path+" (a new companion also removes it)")
			continue
		case f.File.PID > 0 && !c.o.Alive(f.File.PID):
			c.add(Warn, "discovery file", desc+": its companion is gone (stale)", "rm "+f.Path+" (a new companion also removes it)")
			continue
		}
		c.add(OK, "discovery file", desc, "")
		usable = append(usable, discovery.Entry{Path: f.Path, IDEPID: f.IDEPID, File: f.File})
	}
	return usable
}

// environment checks the GEMINI_CLI_IDE_* variables a terminal may carry,
// and returns the port they name (0: none).
func (c *checks) environment(usable []discovery.Entry) int {
	envPort, _ := strconv.Atoi(c.o.Getenv("GEMINI_CLI_IDE_SERVER_PORT"))
	var vars []string
	for _, k := range []string{"GEMINI_CLI_IDE_SERVER_PORT", "GEMINI_CLI_IDE_WORKSPACE_PATH", "GEMINI_CLI_IDE_AUTH_TOKEN", "GEMINI_CLI_IDE_PID", "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND"} {
		if c.o.Getenv(k) != "" {
			vars = append(vars, k)
		}
	}
	if len(vars) == 0 {
		c.add(Info, "environment", "no GEMINI_CLI_IDE_* variables: the CLI picks a companion by its discovery file", "")
	} else if envPort > 0 {
		live := false
		for _, e := range usable {
			if e.File.Port == envPort {
				live = true
			}
		}
		if live {
			c.add(OK, "environment", fmt.Sprintf("%s set; GEMINI_CLI_IDE_SERVER_PORT=%d is a live companion", strings.Join(vars, ", "), envPort), "")
		} else {
			c.add(Fail, "environment", fmt.Sprintf("GEMINI_CLI_IDE_SERVER_PORT=%d names no live companion (left over from a stopped one?)", envPort),
				`unset GEMINI_CLI_IDE_SERVER_PORT GEMINI_CLI_IDE_WORKSPACE_PATH GEMINI_CLI_IDE_AUTH_TOKEN GEMINI_CLI_IDE_PID, or eval "$(gemini-ide-companion env)"`)
		}
	} else {
		c.add(Info, "environment", strings.Join(vars, ", ")+" set", "")
	}
	return envPort
}

// pick finds the companion a CLI started in the folder would pick, and
// whether the CLI would accept it.
func (c *checks) pick(usable []discovery.Entry, envPort int) *discovery.Entry {
	picked := discovery.CLIPick(usable, c.o.Cwd, c.o.IDEPID, envPort, c.o.Alive)
	var chosen *discovery.Entry
	if len(picked) == 0 {
		if len(usable) > 0 {
			c.add(Fail, "workspace", c.o.Cwd+" is in no served workspace: the CLI says \"Directory mismatch\"",
				"run gemini inside a served folder, or start a companion for this one: gemini-ide-companion --workspace "+c.o.Cwd)
		} else {
			c.add(Fail, "workspace", "no live companion serves "+c.o.Cwd, "start one first: gemini-ide-companion (in this folder), or :GeminiCli in Neovim; then start gemini")
		}
	} else {
		chosen = &picked[0]
		msg := fmt.Sprintf("a gemini started here picks %s on port %d (workspace %s)", name(chosen.File), chosen.File.Port, chosen.File.WorkspacePath)
		if len(picked) > 1 {
			msg += fmt.Sprintf("; %d companions serve this folder", len(picked))
		}
		c.add(OK, "workspace", msg, "")
		if chosen.File.IDEInfo.DisplayName == "" && c.o.Getenv("TERM_PROGRAM") != "vscode" && c.o.Getenv("TERM_PROGRAM") != "sublime" {
			c.add(Fail, "IDE gating", "the chosen discovery file has no ideInfo and this terminal is not a VS Code/Sublime/JetBrains one: the CLI says \"IDE integration is not supported in your current environment\"",
				"use a companion that writes ideInfo (this one does), or run gemini from that IDE's terminal")
		} else {
			c.add(OK, "IDE gating", "the CLI accepts "+name(chosen.File)+" (ideInfo present)", "")
		}
	}
	return chosen
}

// container checks the container trap: in Docker the CLI dials
// host.docker.internal.
func (c *checks) container() {
	if _, err := os.Stat(c.o.DockerEnv); err == nil {
		if c.o.Getenv("SSH_CONNECTION") == "" && c.o.Getenv("REMOTE_CONTAINERS") == "" {
			c.add(Fail, "container", c.o.DockerEnv+" exists and neither SSH_CONNECTION nor REMOTE_CONTAINERS is set: the CLI dials host.docker.internal, not 127.0.0.1",
				"export REMOTE_CONTAINERS=1 before starting gemini (the companion runs in this container)")
		} else {
			c.add(OK, "container", "in a container, but SSH_CONNECTION/REMOTE_CONTAINERS is set: the CLI dials 127.0.0.1", "")
		}
	}
}

// gemini checks the gemini on PATH.
func (c *checks) gemini(ctx context.Context) {
	if path, err := c.o.LookPath("gemini"); err != nil {
		c.add(Warn, "gemini", "no gemini on PATH", "npm install -g @google/gemini-cli@"+TestedCLIVersion)
	} else {
		v := cliVersion(ctx, path)
		switch {
		case v == "":
			c.add(Warn, "gemini", path+": version unknown (gemini --version failed)", "")
		case v == TestedCLIVersion:
			c.add(OK, "gemini", fmt.Sprintf("%s %s (the version this project is tested with)", path, v), "")
		default:
			c.add(Info, "gemini", fmt.Sprintf("%s %s; tested with %s", path, v, TestedCLIVersion), "if /ide misbehaves, try: npm install -g @google/gemini-cli@"+TestedCLIVersion)
		}
	}
}

// connection makes a real authenticated initialize against chosen, if a
// companion was chosen.
func (c *checks) connection(ctx context.Context, chosen *discovery.Entry) {
	if chosen != nil {
		if err := initialize(ctx, c.o.HTTPClient, chosen.File); err != nil {
			c.add(Fail, "connection", fmt.Sprintf("MCP initialize on 127.0.0.1:%d failed: %v", chosen.File.Port, err),
				"the companion is not answering: restart it (its discovery file may be stale: rm "+chosen.Path+")")
		} else {
			c.add(OK, "connection", fmt.Sprintf("MCP initialize on 127.0.0.1:%d with the file's token succeeded", chosen.File.Port), "")
		}
	}
}

// ExtensionName is the name of the Gemini CLI extension in plugins/gemini-cli
// that gives the model the editor tools.
const ExtensionName = "editor-tools"

// editorTools says whether Gemini CLI's model gets the editor tools: the
// extension installed in the CLI's home, and gemini-ide-companion on PATH
// for it to start. Never a failure: IDE mode works without them.
func (c *checks) editorTools() {
	home := c.o.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home = c.o.Getenv("HOME")
	}
	if home == "" {
		home = c.o.Getenv("USERPROFILE")
	}
	manifest := filepath.Join(home, ".gemini", "extensions", ExtensionName, "gemini-extension.json")
	if _, err := os.Stat(manifest); err != nil {
		c.add(Info, "editor tools", "the "+ExtensionName+" extension is not installed: Gemini CLI's model does not get the editor's diagnostics, definitions and references",
			"gemini extensions install /path/to/gemini-ide-companion/plugins/gemini-cli (see the README's \"Editor tools\")")
		return
	}
	if _, err := c.o.LookPath("gemini-ide-companion"); err != nil {
		c.add(Warn, "editor tools", "the "+ExtensionName+" extension is installed, but gemini-ide-companion is not on PATH: the CLI cannot start its tools server",
			"go install ./cmd/gemini-ide-companion from the clone, with $(go env GOPATH)/bin on PATH")
		return
	}
	c.add(OK, "editor tools", "the "+ExtensionName+" extension is installed: Gemini CLI's model gets the editor tools (in a folder the CLI trusts; it starts no stdio server in others: trust the folder when it asks, or run gemini trust)", "")
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
	writeFindings(w, r.Findings)
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

// writeFindings prints one line per finding and the fix under it.
func writeFindings(w io.Writer, findings []Finding) {
	for _, f := range findings {
		fmt.Fprintf(w, "%-4s  %s: %s\n", strings.ToUpper(string(f.Level)), f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", f.Fix)
		}
	}
}
