package discovery

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnvLeadsTheCLIToLoopbackInAContainer(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "dockerenv")
	saved := containerMarkers
	t.Cleanup(func() { containerMarkers = saved })
	f := File{Port: 1234, WorkspacePath: "/w", AuthToken: "tok"}

	containerMarkers = []string{marker}
	t.Setenv("SSH_CONNECTION", "")
	t.Setenv("REMOTE_CONTAINERS", "")
	if _, ok := Env(f, 7)["REMOTE_CONTAINERS"]; ok {
		t.Fatal("REMOTE_CONTAINERS set outside a container")
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := Env(f, 7)
	if env["REMOTE_CONTAINERS"] != "1" || env["GEMINI_CLI_IDE_SERVER_PORT"] != "1234" || env["GEMINI_CLI_IDE_PID"] != "7" {
		t.Fatalf("in a container: %v", env)
	}
	t.Setenv("SSH_CONNECTION", "10.0.0.1 22 10.0.0.2 22")
	if _, ok := Env(f, 7)["REMOTE_CONTAINERS"]; ok {
		t.Fatal("REMOTE_CONTAINERS added although SSH_CONNECTION already leads the CLI to 127.0.0.1")
	}
}
