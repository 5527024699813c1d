package rfc

import (
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// Subcommands are listed by their full name after their parent, as a
// client offers them ("memory show").
func TestFlatten(t *testing.T) {
	got := Flatten([]SlashCommand{
		{Name: "memory", Description: "Manage memory.", SubCommands: []SlashCommand{{Name: "show"}, {Name: "memory add"}}},
		{Name: "init", Arguments: []CommandArgument{{Name: "dir"}}},
	})
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
		if c.SubCommands != nil {
			t.Errorf("%s keeps its subcommands", c.Name)
		}
	}
	if want := []string{"memory", "memory show", "memory add", "init"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	if len(got[3].Arguments) != 1 {
		t.Fatal("arguments lost")
	}
}

// A task's history replays each user prompt, thought and text, and each
// tool call once, where it first appeared, as its last update left it.
func TestHistory(t *testing.T) {
	tool := func(status string) *a2a.Message {
		return &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{
			"request": map[string]any{"callId": "c1", "name": "run_shell_command", "args": map[string]any{"command": "ls"}},
			"status":  status,
		}}}}
	}
	task := &a2a.Task{History: []*a2a.Message{
		{Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.TextPart{Text: "list files"}, a2a.TextPart{Text: "editor context"}}},
		{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{"subject": "Plan", "description": "use ls"}}}},
		tool("awaiting_approval"),
		{Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{"callId": "c1", "outcome": "proceed_once"}}}},
		tool("success"),
		{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.TextPart{Text: "Done."}}},
	}}
	got := History(task)
	if len(got) != 4 || got[0].User != "list files" || got[1].Thought == nil || got[1].Thought.Subject != "Plan" ||
		got[2].Tool == nil || got[2].Tool.Status != "success" || got[3].Text != "Done." {
		t.Fatalf("history %+v", got)
	}
	if !IsOutcome(OutcomeAlwaysSrv) || IsOutcome("modify_with_editor") {
		t.Fatal("IsOutcome")
	}
}
