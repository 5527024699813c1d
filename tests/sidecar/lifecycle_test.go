// Package sidecar tests the real gemini-ide-companion binary from the
// outside: a test plays the editor over its stdin/stdout and Gemini CLI over
// MCP, exactly as the two real peers do.
package sidecar

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

const wait = 10 * time.Second

func TestInitializeWritesDiscoveryFile(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	other := filepath.Join(sb.Home, "second")
	os.Mkdir(other, 0o700)
	res := ed.Initialize(t, sb, map[string]any{
		"ide":              map[string]string{"name": "sublimetext", "displayName": "Sublime Text"},
		"workspaceFolders": []string{sb.Workspace, other},
	})

	// The file exists before the response, named with the IDE PID the
	// CLI computes (the editor's parent: this test's parent process).
	if _, err := os.Stat(res.DiscoveryFile); err != nil {
		t.Fatalf("discovery file missing when initialize returned: %v", err)
	}
	if res.IDEPID != os.Getppid() {
		t.Fatalf("idePid %d, want the editor's parent %d", res.IDEPID, os.Getppid())
	}
	wantName := fmt.Sprintf("gemini-ide-server-%d-%d.json", res.IDEPID, res.Port)
	if filepath.Base(res.DiscoveryFile) != wantName || filepath.Dir(res.DiscoveryFile) != sb.DiscoveryDir() {
		t.Fatalf("discovery file %s, want %s in %s", res.DiscoveryFile, wantName, sb.DiscoveryDir())
	}
	path, f := sb.WaitDiscovery(t, wait)
	if path != res.DiscoveryFile {
		t.Fatalf("found %s", path)
	}
	ws := sb.Workspace + string(os.PathListSeparator) + other
	if f.Port != res.Port || f.WorkspacePath != ws || f.AuthToken != res.AuthToken {
		t.Fatalf("file %+v does not match result %+v", f, res)
	}
	if f.IDEInfo != (discovery.IDEInfo{Name: "sublimetext", DisplayName: "Sublime Text"}) {
		t.Fatalf("ideInfo %+v", f.IDEInfo)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(f.AuthToken) {
		t.Fatalf("token %q is not 256 random bits in hex", f.AuthToken)
	}
	st, _ := os.Stat(path)
	dst, _ := os.Stat(sb.DiscoveryDir())
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Fatalf("modes file %o dir %o", st.Mode().Perm(), dst.Mode().Perm())
	}
	env := res.Env
	if env["GEMINI_CLI_IDE_SERVER_PORT"] != strconv.Itoa(res.Port) || env["GEMINI_CLI_IDE_WORKSPACE_PATH"] != ws ||
		env["GEMINI_CLI_IDE_AUTH_TOKEN"] != res.AuthToken || env["GEMINI_CLI_IDE_PID"] != strconv.Itoa(res.IDEPID) {
		t.Fatalf("env %v", env)
	}
	if res.ServerVersion == "" || res.PID != ed.Cmd.Process.Pid {
		t.Fatalf("serverVersion %q pid %d (process %d)", res.ServerVersion, res.PID, ed.Cmd.Process.Pid)
	}
}

func TestBadInitializeNamesTheFieldAndWaits(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	bad := []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"protocolVersion": 3}, "protocolVersion"},
		{map[string]any{"protocolVersion": 0}, "protocolVersion"},
		{map[string]any{"protocolVersion": "1"}, "protocolVersion"},
		{map[string]any{"ide": map[string]string{"name": "x"}}, "ide"},
		{map[string]any{"workspaceFolders": []string{"relative/dir"}}, "workspaceFolders[0]"},
		{map[string]any{"workspaceFolders": "/not/a/list"}, "workspaceFolders"},
		{map[string]any{"processId": 1 << 40}, "processId"},
		{map[string]any{"processId": -5}, "processId"},
		{map[string]any{"processId": 1<<32 + os.Getpid()}, "processId"},
	}
	base := map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "neovim", "displayName": "Neovim"},
		"processId":        os.Getpid(),
		"workspaceFolders": []string{sb.Workspace},
	}
	for _, b := range bad {
		p := map[string]any{}
		for k, v := range base {
			p[k] = v
		}
		for k, v := range b.params {
			p[k] = v
		}
		err := ed.Call(wait, "initialize", p, nil)
		var rpcErr *link.Error
		if !asRPC(err, &rpcErr) || rpcErr.Code != link.CodeInvalidParams || !regexp.MustCompile(regexp.QuoteMeta(b.field)).MatchString(rpcErr.Message) {
			t.Fatalf("initialize with %v: got %v, want -32602 naming %s", b.params, err, b.field)
		}
	}
	if files := sb.DiscoveryFiles(); len(files) != 0 {
		t.Fatalf("bad initialize left discovery files: %v", files)
	}
	// Still waiting for a good one.
	ed.Initialize(t, sb, nil)
	sb.WaitDiscovery(t, wait)
	if err := ed.Call(wait, "initialize", base, nil); err == nil {
		t.Fatal("second initialize accepted")
	}
}

func asRPC(err error, target **link.Error) bool {
	e, ok := err.(*link.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestMalformedLinesDoNotBreakTheLink(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	ed.Initialize(t, sb, nil)
	ed.WriteRaw(t, []byte("this is not json\n{\"jsonrpc\":\"2.0\",\"method\":\"context/fileFocused\",\"params\":{\"path\":12}}\n"))
	ed.WriteRaw(t, []byte(`{"jsonrpc":"2.0","id":"x","method":"no/such"}`+"\n"))
	var st map[string]any
	if err := ed.Call(wait, "status/get", nil, &st); err != nil {
		t.Fatalf("link down after bad lines: %v", err)
	}
	if st["port"] == nil {
		t.Fatalf("status %v", st)
	}
}

func TestShutdownStdinEOFAndSignalsRemoveTheFile(t *testing.T) {
	for _, how := range []string{"shutdown", "eof", "sigterm", "sigint"} {
		t.Run(how, func(t *testing.T) {
			sb := testkit.NewSandbox(t)
			ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
			res := ed.Initialize(t, sb, nil)
			switch how {
			case "shutdown":
				var out json.RawMessage
				if err := ed.Call(wait, "shutdown", nil, &out); err != nil || string(out) != "null" {
					t.Fatalf("shutdown: %v %s", err, out)
				}
			case "eof":
				ed.CloseStdin()
			case "sigterm":
				ed.Kill(syscall.SIGTERM)
			case "sigint":
				ed.Kill(syscall.SIGINT)
			}
			if code := ed.ExitCode(t, wait); code != 0 {
				t.Fatalf("exit code %d\n%s", code, ed.Stderr())
			}
			if _, err := os.Stat(res.DiscoveryFile); !os.IsNotExist(err) {
				t.Fatalf("discovery file still there after %s", how)
			}
		})
	}
}

func TestEditorDeathStopsTheSidecar(t *testing.T) {
	sb := testkit.NewSandbox(t)
	editor := exec.Command("sleep", "60")
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	defer editor.Process.Kill()
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, map[string]any{"processId": editor.Process.Pid})
	if res.IDEPID != os.Getpid() {
		t.Fatalf("idePid %d, want the editor's parent %d", res.IDEPID, os.Getpid())
	}
	killed := time.Now()
	editor.Process.Kill()
	editor.Wait()
	select {
	case <-ed.Exited():
	case <-time.After(wait):
		t.Fatal("sidecar still running after its editor died")
	}
	if d := time.Since(killed); d > 2*time.Second {
		t.Errorf("sidecar took %s to notice its editor died (limit 2 s)", d)
	}
	if _, err := os.Stat(res.DiscoveryFile); !os.IsNotExist(err) {
		t.Fatal("discovery file left behind")
	}
}

func TestStaleFileOfAKilledSidecarIsRemovedByTheNext(t *testing.T) {
	sb := testkit.NewSandbox(t)
	first := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res1 := first.Initialize(t, sb, nil)
	first.Kill(syscall.SIGKILL)
	<-first.Exited()
	if _, err := os.Stat(res1.DiscoveryFile); err != nil {
		t.Fatalf("precondition: a SIGKILLed sidecar cannot clean up, its file should remain: %v", err)
	}
	second := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res2 := second.Initialize(t, sb, nil)
	if _, err := os.Stat(res1.DiscoveryFile); !os.IsNotExist(err) {
		t.Fatal("the killed sidecar's file is still there")
	}
	if files := sb.DiscoveryFiles(); len(files) != 1 || files[0] != res2.DiscoveryFile {
		t.Fatalf("files %v", files)
	}
}

func TestWorkspaceChangeRewritesTheFile(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, nil)
	other := filepath.Join(sb.Home, "proj2")
	os.Mkdir(other, 0o700)
	ed.Notify(t, "workspace/foldersChanged", map[string]any{"workspaceFolders": []string{other}})
	note := ed.WaitFor(t, "workspace/envChanged", wait, nil)
	var p struct {
		Env map[string]string `json:"env"`
	}
	json.Unmarshal(note, &p)
	if p.Env["GEMINI_CLI_IDE_WORKSPACE_PATH"] != other {
		t.Fatalf("env %v", p.Env)
	}
	f, err := discovery.Read(res.DiscoveryFile)
	if err != nil || f.WorkspacePath != other || f.AuthToken != res.AuthToken {
		t.Fatalf("file after change: %+v %v", f, err)
	}
}
