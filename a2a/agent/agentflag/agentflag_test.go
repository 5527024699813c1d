package agentflag

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parse(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Register(fs, "the agent")
	return f, fs.Parse(args)
}

// TestFlagsParseAsTheUserWritesThem: the server command splits into words,
// --server-env repeats, and a pair without "=" is refused at parse time.
func TestFlagsParseAsTheUserWritesThem(t *testing.T) {
	f, err := parse(t, "--server-command", "node  /opt/a2a-server.mjs", "--server-env", "A=1", "--server-env", "B=x=y")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Command(), "|"); got != "node|/opt/a2a-server.mjs" {
		t.Errorf("command = %q", got)
	}
	if got := strings.Join(f.ServerEnv, ","); got != "A=1,B=x=y" {
		t.Errorf("server env = %q", got)
	}
	if f, _ := parse(t); f.Command() != nil {
		t.Errorf("no --server-command gave %q", f.Command())
	}
	for _, bad := range []string{"A", "=1"} {
		if _, err := parse(t, "--server-env", bad); err == nil || !strings.Contains(err.Error(), "want KEY=VALUE") {
			t.Errorf("--server-env %q: err = %v", bad, err)
		}
	}
}

// TestHeaderChecksTheAgentAndItsCredentials: a URL that is not http(s) is
// refused; credentials without --agent are refused, naming what starts the
// server; a token from the environment becomes a bearer header.
func TestHeaderChecksTheAgentAndItsCredentials(t *testing.T) {
	f, _ := parse(t, "--agent", "localhost:41242")
	if _, err := f.Header("the bridge"); err == nil || !strings.Contains(err.Error(), "want an http(s) URL") {
		t.Errorf("bad --agent: err = %v", err)
	}
	f, _ = parse(t, "--agent-token-env", "TOKEN")
	if _, err := f.Header("the bridge"); err == nil || !strings.Contains(err.Error(), "a server the bridge starts needs neither") {
		t.Errorf("credentials without --agent: err = %v", err)
	}
	t.Setenv("AGENTFLAG_TEST_TOKEN", "s3cret")
	f, _ = parse(t, "--agent", "http://127.0.0.1:41242", "--agent-token-env", "AGENTFLAG_TEST_TOKEN")
	h, err := f.Header("the bridge")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q", got)
	}
	f, _ = parse(t, "--agent", "http://127.0.0.1:41242")
	if h, err := f.Header("the bridge"); err != nil || h != nil {
		t.Errorf("no credentials: header %v, err %v", h, err)
	}
}

// TestLogFileIsAppended: --log-file keeps what was there and adds to it; a
// log that cannot be opened says which flag is wrong.
func TestLogFileIsAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := parse(t, "--log-file", path)
	w, closeLog, err := f.OpenLog()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "after\n")
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "before\nafter\n" {
		t.Errorf("log = %q", b)
	}
	f, _ = parse(t, "--log-file", filepath.Join(t.TempDir(), "no", "such", "dir", "a.log"))
	if _, _, err := f.OpenLog(); err == nil || !strings.HasPrefix(err.Error(), "--log-file: ") {
		t.Errorf("unwritable log: err = %v", err)
	}
}
