package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// RunPlugin runs replay as a subtest, named after the transcript, for
// every transcript a plugin replays: the shared ones and those in own (a
// folder of the checkout, e.g. "tests/vim/transcripts"), see ForPlugins.
func RunPlugin(t *testing.T, own string, replay func(t *testing.T, steps []Step)) {
	t.Helper()
	root := testkit.ModuleRoot(t)
	files, err := ForPlugins(root, filepath.Join(root, filepath.FromSlash(own)))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".jsonl"), func(t *testing.T) {
			tr, err := Parse(path)
			if err != nil {
				t.Fatal(err)
			}
			replay(t, tr.Steps)
		})
	}
}

// StandIn is where a plugin replay starts, whatever the editor: a sandbox
// whose workspace holds ${file}, the substitutions, the socket the relays
// connect to and the command that starts one.
type StandIn struct {
	SB     *testkit.Sandbox
	Vars   map[string]string
	Relays *Relays
	// Sidecar is the command the plugin is to run as its sidecar: this
	// test binary, which becomes a relay (RelayMain).
	Sidecar string
}

// NewStandIn prepares a plugin replay; prefix names its socket's folder.
func NewStandIn(t testing.TB, prefix string) *StandIn {
	t.Helper()
	sb := testkit.NewSandbox(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	vars, err := Workspace(sb.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	return &StandIn{SB: sb, Vars: vars, Relays: ListenRelays(t, prefix), Sidecar: self}
}
