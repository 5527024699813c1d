package agentpanel

import (
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
				Logf: func(format string, args ...any) { logger.Info().Msgf(format, args...) },
			})
		},
	}
}
