package launch

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// userHome is the folder whose .gemini the server would read with env:
// GEMINI_CLI_HOME, else HOME (USERPROFILE on Windows), else this user's.
func userHome(env []string) string {
	look := func(k string) string {
		v := ""
		for _, kv := range append(os.Environ(), env...) {
			if key, val, ok := strings.Cut(kv, "="); ok && key == k {
				v = val
			}
		}
		return v
	}
	if h := look("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	if runtime.GOOS == "windows" {
		if h := look("USERPROFILE"); h != "" {
			return h
		}
	} else if h := look("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// MCPHome makes a private GEMINI_CLI_HOME through which MCP servers of a
// client (an ACP client's, the editor tools of the agent panel) reach an
// A2A server started with env. Server 0.25.2 takes MCP servers only from
// its settings files (the user's ~/.gemini/settings.json and the
// workspace's .gemini/settings.json), read again for every task; neither
// is ours to change. So the server gets a home of its own: its
// .gemini/settings.json is the user's with the client's servers added
// (a client's server replaces the user's of the same name), and every
// other entry of the user's .gemini (credentials, GEMINI.md, extensions,
// history) is linked in, so the agent is otherwise the user's.
//
// servers maps names to settings entries ({"command": …, "args": […]}).
// The caller removes the folder once the server is gone.
func MCPHome(env []string, servers map[string]any) (string, error) {
	real := filepath.Join(userHome(env), ".gemini")
	home, err := os.MkdirTemp("", "gemini-a2a-home-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		os.RemoveAll(home)
		return "", err
	}
	settings := map[string]any{}
	if b, err := os.ReadFile(filepath.Join(real, "settings.json")); err == nil {
		if err := json.Unmarshal(stripJSONComments(b), &settings); err != nil {
			os.RemoveAll(home)
			return "", fmt.Errorf("reading %s: %w", filepath.Join(real, "settings.json"), err)
		}
	}
	all, _ := settings["mcpServers"].(map[string]any)
	if all == nil {
		all = map[string]any{}
	}
	for name, e := range servers {
		all[name] = e
	}
	settings["mcpServers"] = all
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		os.RemoveAll(home)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
		os.RemoveAll(home)
		return "", err
	}
	entries, _ := os.ReadDir(real)
	for _, e := range entries {
		if e.Name() == "settings.json" {
			continue
		}
		link(filepath.Join(real, e.Name()), filepath.Join(dir, e.Name()))
	}
	// The server's last place to look for a .env file is the home's.
	if _, err := os.Stat(filepath.Join(userHome(env), ".env")); err == nil {
		link(filepath.Join(userHome(env), ".env"), filepath.Join(home, ".env"))
	}
	return home, nil
}

// link makes dst a symbolic link to src; where links cannot be made
// (Windows without the privilege, or Wine, whose links say they were made
// and are not there) a file is copied and a folder left out.
func link(src, dst string) {
	if os.Symlink(src, dst) == nil {
		if _, err := os.Stat(dst); err == nil {
			return
		}
		_ = os.Remove(dst)
	}
	st, err := os.Stat(src)
	if err != nil || st.IsDir() {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		return
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	defer out.Close()
	_, _ = io.Copy(out, in)
}

// stripJSONComments removes // and /* */ comments outside strings, as
// Gemini CLI allows them in settings.json.
func stripJSONComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		if c == '/' && i+1 < len(b) && b[i+1] == '/' {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
			continue
		}
		if c == '/' && i+1 < len(b) && b[i+1] == '*' {
			i += 2
			for i+1 < len(b) && (b[i] != '*' || b[i+1] != '/') {
				i++
			}
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}
