package nvim

import (
	"slices"
	"testing"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// Neovim has no workspace-trust model: with default options the CLI gets
// no isTrusted, so its own folder-trust prompt decides (an IDE's value
// would override it and load the folder's settings without asking).
func TestNoTrustClaimedByDefault(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	startNvim(t, sb, Options{Args: []string{"a.txt"}})
	cli := testkit.Connect(t, sb, waitTimeout)
	c := testkit.WaitContext(t, cli, "a context with a.txt", waitTimeout, func(c idectx.IdeContext) bool {
		return c.WorkspaceState != nil && slices.Contains(testkit.OpenPaths(c), a)
	})
	if c.WorkspaceState.IsTrusted != nil {
		t.Fatalf("the plugin claimed isTrusted=%v for the CLI; want none", *c.WorkspaceState.IsTrusted)
	}
}
