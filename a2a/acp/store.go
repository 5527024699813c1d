package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// record is what is kept of a session so that session/load finds its A2A
// task again after the agent restarted.
type record struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	// AgentURL is the A2A server the session's task lives on.
	AgentURL  string `json:"agentUrl"`
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
}

// store keeps session records as files in a folder (one JSON file a
// session); an empty dir keeps nothing.
type store struct{ dir string }

var sessionIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func (s store) path(id string) (string, bool) {
	if s.dir == "" || !sessionIDRE.MatchString(id) {
		return "", false
	}
	return filepath.Join(s.dir, id+".json"), true
}

func (s store) save(r record) error {
	p, ok := s.path(r.SessionID)
	if !ok {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("session records: %w", err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("session record: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("session record: %w", err)
	}
	return nil
}

func (s store) load(id string) (record, bool) {
	p, ok := s.path(id)
	if !ok {
		return record{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return record{}, false
	}
	var r record
	if json.Unmarshal(b, &r) != nil || r.SessionID != id {
		return record{}, false
	}
	return r, true
}
