package protocol

// The agent panel's methods (docs/agent-panel.md): the sidecar as an A2A
// client of Gemini CLI's agent, served to a plugin with capabilities.agent.
// Every params field is optional: absent or null params are the zero value.

// Agent panel methods. Plugin → sidecar requests:
const (
	MethodAgentStart        = "agent/start"        // AgentStartParams → AgentStartResult
	MethodAgentPrompt       = "agent/prompt"       // AgentPromptParams → Empty
	MethodAgentConfirm      = "agent/confirm"      // AgentConfirmParams → Empty
	MethodAgentCancel       = "agent/cancel"       // no params → Empty
	MethodAgentListCommands = "agent/listCommands" // no params → AgentListCommandsResult
	MethodAgentRunCommand   = "agent/runCommand"   // AgentRunCommandParams → Empty
	MethodAgentResubscribe  = "agent/resubscribe"  // AgentResubscribeParams → Empty
	MethodAgentStatus       = "agent/status"       // no params → AgentStatus
	MethodAgentStop         = "agent/stop"         // no params → Empty
)

// Sidecar → plugin notification of the agent panel:
const MethodAgentEvent = "agent/event" // AgentEvent

// Empty is the result of a request that has nothing to return but that it
// was taken: {}.
type Empty struct{}

// AgentStartParams are the params of agent/start.
type AgentStartParams struct {
	// URL attaches to a running A2A server instead of starting one.
	URL string `json:"url,omitempty"`
	// PID, with URL, is the server an earlier sidecar started: this one
	// adopts it (stops it on exit) if it still is a Gemini A2A server.
	PID int `json:"pid,omitempty"`
	// Command overrides the server command (default: found on PATH or in
	// node_modules).
	Command []string `json:"command,omitempty"`
	// CommandOption is how the user sets Command in this editor (e.g. the
	// plugin's option); errors about the server command name it.
	CommandOption string `json:"commandOption,omitempty"`
	// Dir is the workspace (default: the first workspace folder).
	Dir string `json:"dir,omitempty"`
	// TaskID and ContextID resume a conversation (tasks/resubscribe).
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
}

// AgentStartResult is the result of agent/start; a ready (or error) event
// follows.
type AgentStartResult struct {
	// Status is "starting" (the server is being started or reached) or
	// "attached" (it already was).
	Status string `json:"status" enum:"starting,attached"`
}

// AgentPromptParams are the params of agent/prompt.
type AgentPromptParams struct {
	// Text is the user's message.
	Text string `json:"text,omitempty"`
	// Context: send the editor's context with it (default true).
	Context *bool `json:"context,omitempty"`
}

// AgentConfirmParams are the params of agent/confirm: the answer to a tool
// call that waits for the user.
type AgentConfirmParams struct {
	// CallID names the tool call (AgentToolCall.ToolCallID).
	CallID string `json:"callId,omitempty"`
	// Outcome is one of the call's ConfirmationOption ids.
	Outcome string `json:"outcome,omitempty"`
	// Content, for an edit, is the user's version of the file.
	Content *string `json:"content,omitempty"`
}

// AgentRunCommandParams are the params of agent/runCommand.
type AgentRunCommandParams struct {
	// Command is the slash command (e.g. "memory show"); a leading "/" is
	// dropped.
	Command string `json:"command,omitempty"`
	// Args is its arguments, in one string.
	Args string `json:"args,omitempty"`
}

// AgentResubscribeParams are the params of agent/resubscribe.
type AgentResubscribeParams struct {
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
}

// AgentListCommandsResult is the result of agent/listCommands.
type AgentListCommandsResult struct {
	Commands []SlashCommand `json:"commands"`
}

// SlashCommand is the development-tool RFC's SlashCommand. Gemini CLI's
// A2A server 0.25.2 serves it at GET /listCommands (not the RFC's
// commands/get method), with subcommands named by their full path
// ("memory show").
type SlashCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Arguments   []SlashCommandArgument `json:"arguments"`
	SubCommands []SlashCommand         `json:"subCommands"`
}

// SlashCommandArgument is the RFC's SlashCommandArgument.
type SlashCommandArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
}

// AgentStatus is the result of agent/status.
type AgentStatus struct {
	// Attached: the panel talks to an agent.
	Attached bool `json:"attached"`
	// Starting: the server is being started or reached.
	Starting bool `json:"starting"`
	// URL is the agent's address.
	URL string `json:"url,omitempty"`
	// TaskID and ContextID name the conversation.
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
	// Running: a turn is under way.
	Running bool `json:"running"`
	// Pending are the ids of the tool calls waiting for the user.
	Pending []string `json:"pending"`
}

// AgentEvent is the params of agent/event: one thing that happened in the
// conversation, for the panel to show. Type says which of the other
// fields are set.
type AgentEvent struct {
	// Type says what happened.
	Type string `json:"type" enum:"ready,user,text,thought,tool,state,command,notice,error,reset"`
	// Text is the text of user, text, notice and error events, and what a
	// state event says to the user.
	Text string `json:"text,omitempty"`
	// Thought is the RFC's AgentThought of a thought event.
	Thought *AgentThought `json:"thought,omitempty"`
	// Tool is the RFC's ToolCall of a tool event.
	Tool *AgentToolCall `json:"tool,omitempty"`
	// State is the panel state of a state event: "working", "waiting"
	// (a tool call waits for the user), "idle" (the turn ended), "canceled",
	// "failed", "stopped" (the server the sidecar started exited).
	State string `json:"state,omitempty"`
	// TaskState is the A2A task state behind State.
	TaskState string `json:"taskState,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
	// Replay marks events re-sent from the task's history on resubscribe.
	Replay bool `json:"replay,omitempty"`
	// Agent describes the agent on ready events.
	Agent *AgentInfo `json:"agent,omitempty"`
	// Command is the slash command a command event answers, Data its output.
	Command string `json:"command,omitempty"`
	Data    any    `json:"data,omitempty"`
}

// AgentInfo is what a ready event says about the agent the panel talks to.
type AgentInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// PID is the server's process id when this sidecar started (or adopted)
	// it; the plugin hands it back after a sidecar restart.
	PID int `json:"pid,omitempty"`
	// Started is set when the sidecar started the server and will stop it.
	Started bool `json:"started"`
	// Context says how the editor's context reaches the agent ("prompt":
	// sent with each prompt).
	Context string `json:"context"`
}

// AgentThought is the RFC's AgentThought.
type AgentThought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// AgentToolCall is the RFC's ToolCall (development-tool extension), in
// the proto3 JSON form, built from the server's own tool-call events.
type AgentToolCall struct {
	ToolCallID string `json:"toolCallId"`
	// Status is the RFC's ToolCallStatus.
	Status          string         `json:"status" enum:"PENDING,EXECUTING,SUCCEEDED,FAILED,CANCELLED"`
	ToolName        string         `json:"toolName"`
	Description     string         `json:"description,omitempty"`
	InputParameters map[string]any `json:"inputParameters,omitempty"`
	// Output is the result text (the RFC's ToolOutput.text) once it ran.
	Output string `json:"output,omitempty"`
	// ConfirmationRequest is set while the call waits for the user.
	ConfirmationRequest *ConfirmationRequest `json:"confirmationRequest,omitempty"`
	// DiffShown (extension) is set when the sidecar showed the edit as the
	// editor's own diff view (diff/open with DiffID): answer it there.
	DiffShown bool   `json:"diffShown,omitempty"`
	DiffID    uint64 `json:"diffId,omitempty"`
}

// ConfirmationRequest is the RFC's ConfirmationRequest: the options, and
// one of the details.
type ConfirmationRequest struct {
	Options         []ConfirmationOption `json:"options"`
	ExecuteDetails  *ExecuteDetails      `json:"executeDetails,omitempty"`
	FileEditDetails *FileDiff            `json:"fileEditDetails,omitempty"`
	McpDetails      *McpDetails          `json:"mcpDetails,omitempty"`
	GenericDetails  *GenericDetails      `json:"genericDetails,omitempty"`
}

// ConfirmationOption is the RFC's ConfirmationOption; ID is the outcome
// agent/confirm takes.
type ConfirmationOption struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ExecuteDetails is the RFC's ExecuteDetails (a shell command).
type ExecuteDetails struct {
	Command string `json:"command"`
}

// FileDiff is the RFC's FileDiff (a file edit).
type FileDiff struct {
	FileName      string  `json:"fileName"`
	FilePath      string  `json:"filePath"`
	OldContent    *string `json:"oldContent,omitempty"`
	NewContent    string  `json:"newContent"`
	FormattedDiff string  `json:"formattedDiff,omitempty"`
	// Note (extension) says what the front (the sidecar, the ACP agent)
	// changed in the agent's proposal: the file's final newline, which the
	// server trims, is kept.
	Note string `json:"note,omitempty"`
}

// McpDetails is the RFC's McpDetails: the MCP server (its name in the
// agent's settings) and the tool's own name on it.
type McpDetails struct {
	ServerName string `json:"serverName"`
	ToolName   string `json:"toolName"`
	// ToolDisplayName (extension) is how the agent shows the tool, e.g.
	// "append_line (notes MCP Server)".
	ToolDisplayName string `json:"toolDisplayName,omitempty"`
}

// GenericDetails is the RFC's GenericDetails, for the server's "info"
// confirmations (a web fetch, a skill, a remote agent, any other tool).
type GenericDetails struct {
	// Description is the confirmation's title and prompt.
	Description string `json:"description"`
	// Urls (extension) are the addresses a web fetch would reach.
	Urls []string `json:"urls,omitempty"`
}
