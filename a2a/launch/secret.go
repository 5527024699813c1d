package launch

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// secretEnv passes the launch's secret to the preload (pin.cjs), which takes
// it out of the server's environment before the server starts.
const secretEnv = "GEMINI_A2A_SECRET"

// newSecret returns a fresh random secret: 256 bits, URL-safe text.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// bearer is the header that carries secret.
func bearer(secret string) http.Header {
	return http.Header{"Authorization": {"Bearer " + secret}}
}

// record is what the secret file of a running server says.
type record struct {
	URL    string `json:"url"`
	PID    int    `json:"pid"`
	Secret string `json:"secret"`
}

// maxRecordSize bounds what is read of a secret file.
const maxRecordSize = 64 << 10

// SecretDir is the folder, private to the user, where each server that
// Start started keeps its secret while it runs: "a2a" beside the folder of
// Gemini CLI's IDE discovery files (os.TempDir()/gemini/a2a). The next
// program of the same user that attaches to the server (a restarted
// sidecar adopting it, the bridge given its URL) finds it there.
func SecretDir() string { return secretDirIn(os.TempDir()) }

func secretDirIn(tmp string) string { return filepath.Join(tmp, "gemini", "a2a") }

func secretFile(dir, port string) string { return filepath.Join(dir, "server-"+port+".json") }

// tempDirOf is the temporary folder of a program run with extra added to
// this one's environment: the server's programs (and the tests'
// sandboxes) look for its secret there.
func tempDirOf(extra []string) string {
	names := []string{"TMPDIR"}
	if runtime.GOOS == "windows" {
		names = []string{"TMP", "TEMP"} // GetTempPath's order
	}
	for _, n := range names {
		dir := ""
		for _, kv := range extra {
			if k, v, _ := strings.Cut(kv, "="); strings.EqualFold(k, n) {
				dir = v
			}
		}
		if dir != "" {
			return dir
		}
	}
	return os.TempDir()
}

// remember writes the server's secret file (mode 0600, owner-only on
// Windows, in a folder only the user can enter), replacing one a dead
// server left, and clears out the files of servers that are gone.
func remember(dir string, r record) (string, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return "", err
	}
	if err := discovery.EnsureDir(dir); err != nil {
		return "", err
	}
	sweep(dir)
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".server-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if err := osproc.MakePrivate(tmp.Name(), false); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	path := secretFile(dir, u.Port())
	if err := osproc.Replace(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// sweep removes the secret files of servers no longer running.
func sweep(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, "server-") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		if r, err := readRecord(path); err == nil && !osproc.Alive(r.PID) {
			_ = os.Remove(path)
		}
	}
}

// forget removes path if it still is the secret file of pid.
func forget(path string, pid int) {
	if r, err := readRecord(path); err == nil && r.PID == pid {
		_ = os.Remove(path)
	}
}

// readRecord reads a secret file, refusing anything but a regular file of
// the user's.
func readRecord(path string) (record, error) {
	var r record
	st, err := os.Lstat(path)
	if err != nil {
		return r, err
	}
	if !st.Mode().IsRegular() || !osproc.Mine(path, st) || st.Size() > maxRecordSize {
		return r, fmt.Errorf("%s is not a secret file of this user's", path)
	}
	f, err := osproc.OpenNoFollow(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() || !osproc.Mine(path, st) {
		return r, fmt.Errorf("%s is not a secret file of this user's", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordSize))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if r.Secret == "" || r.PID <= 0 {
		return r, fmt.Errorf("%s: no secret", path)
	}
	return r, nil
}

// ErrNoSecret means no server that Start started is known at a URL.
var ErrNoSecret = errors.New("no A2A server started by this user's programs is known at this URL")

// HeaderFor returns the header that lets a client use the server at rawURL,
// when that server was started by Start (in this program or another of the
// same user's, such as an earlier sidecar whose server outlived it) and
// still runs. Only http://127.0.0.1:PORT URLs are looked up, the address
// Start reports, so the secret never goes to another address; for any
// other server it returns ErrNoSecret.
func HeaderFor(rawURL string) (http.Header, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" {
		return nil, ErrNoSecret
	}
	port := u.Port()
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, ErrNoSecret
	}
	path := secretFile(SecretDir(), port)
	r, err := readRecord(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoSecret
		}
		return nil, fmt.Errorf("secret of the A2A server at %s: %w", rawURL, err)
	}
	if !osproc.Alive(r.PID) {
		_ = os.Remove(path)
		return nil, ErrNoSecret
	}
	if r.URL != "http://127.0.0.1:"+port {
		return nil, ErrNoSecret
	}
	return bearer(r.Secret), nil
}
