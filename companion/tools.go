package companion

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
)

// tools are the MCP tools Gemini CLI calls, openDiff and closeDiff: they
// read the call's arguments and hand it to the proposals.
type tools struct {
	props  *proposals.Proposals
	intake *intake
}

func (t tools) add(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{
		Name:        "openDiff",
		Description: "Open a diff view in the editor to propose a change to a file. The user's decision arrives as ide/diffAccepted or ide/diffRejected.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"filePath":   map[string]any{"type": "string", "description": "Absolute path of the file to change."},
				"newContent": map[string]any{"type": "string", "description": "The proposed full content of the file."},
			},
			"required": []string{"filePath", "newContent"},
		},
	}, t.openDiff)
	srv.AddTool(&mcp.Tool{
		Name:        "closeDiff",
		Description: "Close the diff view for a file and return its proposed content as the user left it.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"filePath":             map[string]any{"type": "string", "description": "Absolute path of the file whose diff to close."},
				"suppressNotification": map[string]any{"type": "boolean", "description": "Accepted for compatibility; closing never sends a decision."},
			},
			"required": []string{"filePath"},
		},
	}, t.closeDiff)
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}},
	}
}

// owner names the session a tool call came from.
func owner(req *mcp.CallToolRequest) string {
	if req.Session == nil {
		return ""
	}
	return req.Session.ID()
}

func (t tools) openDiff(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		FilePath   *string `json:"filePath"`
		NewContent *string `json:"newContent"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return toolError("openDiff: invalid arguments: %v", err), nil
	}
	if args.FilePath == nil || args.NewContent == nil {
		return toolError("openDiff: filePath and newContent are required"), nil
	}
	content, err := t.intake.content(*args.NewContent)
	if err != nil {
		return toolError("openDiff: %v", err), nil
	}
	if err := t.props.Propose(ctx, owner(req), *args.FilePath, content); err != nil {
		return toolError("openDiff: %v", err), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

func (t tools) closeDiff(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		FilePath             *string `json:"filePath"`
		SuppressNotification *bool   `json:"suppressNotification"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return toolError("closeDiff: invalid arguments: %v", err), nil
	}
	if args.FilePath == nil {
		return toolError("closeDiff: filePath is required"), nil
	}
	content, err := t.props.Withdraw(ctx, owner(req), *args.FilePath)
	if err != nil {
		return toolError("closeDiff: %v", err), nil
	}
	body, err := json.Marshal(map[string]*string{"content": content})
	if err != nil {
		return toolError("closeDiff: %v", err), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
}
