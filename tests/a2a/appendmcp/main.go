// Command appendmcp is a tiny stdio MCP server for the A2A tests: one tool,
// append_line, whose only effect is appending its text as a line to the
// file given with -file, so a test can tell whether (and how often) the
// agent really ran it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type appendIn struct {
	Text string `json:"text" jsonschema:"the line to append"`
}

type appendOut struct {
	Lines int `json:"lines"`
}

func main() {
	file := flag.String("file", "", "file that append_line appends to (required)")
	flag.Parse()
	if *file == "" {
		log.Fatal("appendmcp: -file is required")
	}
	lines := 0
	s := mcp.NewServer(&mcp.Implementation{Name: "appendmcp", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "append_line", Description: "Append a line of text to the notes file."},
		func(_ context.Context, _ *mcp.CallToolRequest, in appendIn) (*mcp.CallToolResult, appendOut, error) {
			f, err := os.OpenFile(*file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, appendOut{}, fmt.Errorf("opening %s: %w", *file, err)
			}
			_, err = fmt.Fprintln(f, in.Text)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, appendOut{}, fmt.Errorf("appending to %s: %w", *file, err)
			}
			lines++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("appended %q", in.Text)}}}, appendOut{Lines: lines}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatalf("appendmcp: %v", err)
	}
}
