package agentpanel

import (
	"os"
	"sort"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
)

// Extension returns the agent panel as an editor link extension: it serves
// agent/*, turns on capabilities.agent, takes the decisions on the diffs it
// shows, and stops the A2A server it started when the link ends.
func Extension(logger zerolog.Logger) editorlink.Extension {
	return editorlink.Extension{
		Capability: "agent",
		New: func(peer editorlink.Peer, c *companion.Companion) editorlink.ExtensionHandler {
			return New(Options{
				Conn:      peer,
				Context:   c.Engine().Snapshot,
				Workspace: c.WorkspaceFolders,
				DiffBusy: func(path string) bool {
					if d := peer.PluginCapabilities().Diff; d != nil && !*d {
						return true // the plugin shows no diffs: ask in the panel
					}
					return c.Proposals().ShownID(path) != 0
				},
				Logf:        func(format string, args ...any) { logger.Info().Msgf(format, args...) },
				EditorTools: func() (map[string]any, []string) { return editorTools(c, logger) },
			})
		},
	}
}

// editorTools is the editor tools' stdio server (this very program, as
// `gemini-ide-companion tools`) for an A2A server the panel starts, and the
// GEMINI_CLI_IDE_* variables that lead it to c; the token travels in the
// environment, never on a command line or in a file.
func editorTools(c *companion.Companion, logger zerolog.Logger) (map[string]any, []string) {
	exe, err := os.Executable()
	if err != nil {
		logger.Warn().Err(err).Msg("the agent will not get the editor tools: cannot find this program")
		return nil, nil
	}
	vars := c.Info().Env
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return map[string]any{"editor": map[string]any{"command": exe, "args": []string{"tools"}}}, env
}
