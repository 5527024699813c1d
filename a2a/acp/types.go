package acp

import "encoding/json"

// ProtocolVersion is the ACP protocol version this agent speaks (the one
// @agentclientprotocol/sdk 2.x speaks by default).
const ProtocolVersion = 1

// The ACP messages this agent reads and writes: the subset of ACP v1's
// schema it uses. Fields it does not use are left out; unknown fields a
// client sends are ignored.

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion    int `json:"protocolVersion"`
	ClientCapabilities struct {
		FS struct {
			ReadTextFile  bool `json:"readTextFile"`
			WriteTextFile bool `json:"writeTextFile"`
		} `json:"fs"`
		Terminal bool `json:"terminal"`
	} `json:"clientCapabilities"`
	ClientInfo *implementation `json:"clientInfo"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type agentCapabilities struct {
	LoadSession        bool               `json:"loadSession"`
	PromptCapabilities promptCapabilities `json:"promptCapabilities"`
	McpCapabilities    mcpCapabilities    `json:"mcpCapabilities"`
}

type initializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AgentInfo         implementation    `json:"agentInfo"`
	AuthMethods       []any             `json:"authMethods"`
}

// McpServer is an MCP server the client asks the agent to use: stdio
// (command), or http or sse (url).
type McpServer struct {
	Type    string      `json:"type,omitempty"` // "", "http", "sse"
	Name    string      `json:"name"`
	Command string      `json:"command,omitempty"`
	Args    []string    `json:"args,omitempty"`
	Env     []nameValue `json:"env,omitempty"`
	URL     string      `json:"url,omitempty"`
	Headers []nameValue `json:"headers,omitempty"`
}

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type newSessionParams struct {
	Cwd        string      `json:"cwd"`
	McpServers []McpServer `json:"mcpServers"`
}

type newSessionResult struct {
	SessionID string         `json:"sessionId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

type loadSessionParams struct {
	SessionID  string      `json:"sessionId"`
	Cwd        string      `json:"cwd"`
	McpServers []McpServer `json:"mcpServers"`
}

type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Resource *struct {
		URI      string `json:"uri"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
		MimeType string `json:"mimeType"`
	} `json:"resource,omitempty"`
}

type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
}

// Stop reasons of a prompt turn.
const (
	StopEndTurn   = "end_turn"
	StopCancelled = "cancelled"
)

type promptResult struct {
	StopReason string `json:"stopReason"`
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// update is a session/update's update: one of the ACP SessionUpdate kinds,
// told by SessionUpdate.
type update struct {
	SessionUpdate string `json:"sessionUpdate"`
	// agent_message_chunk, agent_thought_chunk, user_message_chunk
	Content *textBlock `json:"content,omitempty"`
	// tool_call, tool_call_update
	ToolCallID string            `json:"toolCallId,omitempty"`
	Title      string            `json:"title,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Status     string            `json:"status,omitempty"`
	Contents   []toolCallContent `json:"-"`
	Locations  []location        `json:"locations,omitempty"`
	RawInput   map[string]any    `json:"rawInput,omitempty"`
	// available_commands_update
	AvailableCommands []availableCommand `json:"availableCommands,omitempty"`
}

// MarshalJSON writes a tool call's content as "content" (a chunk's content
// is a single block under the same name).
func (u update) MarshalJSON() ([]byte, error) {
	type plain update
	if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
		if u.SessionUpdate == "available_commands_update" && u.AvailableCommands == nil {
			u.AvailableCommands = []availableCommand{}
		}
		return json.Marshal(plain(u))
	}
	return json.Marshal(struct {
		plain
		Content []toolCallContent `json:"content,omitempty"`
	}{plain(u), u.Contents})
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func text(s string) *textBlock { return &textBlock{Type: "text", Text: s} }

// toolCallContent is a tool call's content: text ("content") or a file
// edit ("diff").
type toolCallContent struct {
	Type    string     `json:"type"`
	Content *textBlock `json:"content,omitempty"`
	Path    string     `json:"path,omitempty"`
	OldText *string    `json:"oldText,omitempty"`
	NewText *string    `json:"newText,omitempty"`
}

func textContent(s string) toolCallContent {
	return toolCallContent{Type: "content", Content: text(s)}
}

func diffContent(path string, oldText *string, newText string) toolCallContent {
	return toolCallContent{Type: "diff", Path: path, OldText: oldText, NewText: &newText}
}

type location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

type availableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    update `json:"update"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type permissionToolCall struct {
	ToolCallID string            `json:"toolCallId"`
	Title      string            `json:"title,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Status     string            `json:"status,omitempty"`
	Content    []toolCallContent `json:"content,omitempty"`
	Locations  []location        `json:"locations,omitempty"`
	RawInput   map[string]any    `json:"rawInput,omitempty"`
}

type requestPermissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  permissionToolCall `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type requestPermissionResult struct {
	Outcome struct {
		Outcome  string `json:"outcome"` // "selected" or "cancelled"
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

type readTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

type readTextFileResult struct {
	Content string `json:"content"`
}

type writeTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}
