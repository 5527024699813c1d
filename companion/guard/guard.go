// Package guard is the HTTP gate in front of the companion's MCP endpoint:
// it lets through only requests that carry the session's bearer token, are
// addressed to the loopback port the companion listens on (no DNS
// rebinding), come from no web page (no Origin), and stay under a body size
// limit.
package guard

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rejection describes a refused request, for logging. It never contains the
// token.
type Rejection struct {
	Status int
	Reason string
	Method string
	Path   string
	Remote string
}

// Config sets what the guard accepts.
type Config struct {
	// Token is the bearer token every request must carry.
	Token string
	// Port is the port the companion listens on; Host must name it.
	Port int
	// MaxBody is the largest request body accepted, in bytes.
	MaxBody int64
	// BodyTimeout bounds how long a request body may go without sending
	// data (and the whole body must arrive within two minutes); zero means
	// no bound. A client that stalls its body gets its connection closed.
	BodyTimeout time.Duration
	// Path is the path served (e.g. "/mcp").
	Path string
	// OtherPaths are further paths served, behind the same checks.
	OtherPaths []string
	// OnReject, if set, hears about every refused request.
	OnReject func(Rejection)
}

// Wrap returns next behind the guard.
func Wrap(cfg Config, next http.Handler) http.Handler {
	want := []byte("Bearer " + cfg.Token)
	hosts := map[string]bool{
		"127.0.0.1:" + strconv.Itoa(cfg.Port): true,
		"localhost:" + strconv.Itoa(cfg.Port): true,
	}
	reject := func(w http.ResponseWriter, r *http.Request, status int, reason string) {
		if cfg.OnReject != nil {
			cfg.OnReject(Rejection{Status: status, Reason: reason, Method: r.Method, Path: r.URL.Path, Remote: r.RemoteAddr})
		}
		// A refused peer keeps no idle connection open: each attempt costs
		// it a new one.
		w.Header().Set("Connection", "close")
		http.Error(w, reason, status)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Host and Origin first: a browser page must learn nothing, not even
		// whether its token guess was right.
		if !hosts[strings.ToLower(r.Host)] {
			reject(w, r, http.StatusForbidden, fmt.Sprintf("forbidden: Host %q is not this companion", r.Host))
			return
		}
		if _, ok := r.Header["Origin"]; ok {
			reject(w, r, http.StatusForbidden, "forbidden: requests from web pages are not allowed")
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if len(r.Header.Values("Authorization")) != 1 || subtle.ConstantTimeCompare(got, want) != 1 {
			reject(w, r, http.StatusUnauthorized, "unauthorized: missing or wrong bearer token")
			return
		}
		if r.URL.Path != cfg.Path && !slices.Contains(cfg.OtherPaths, r.URL.Path) {
			reject(w, r, http.StatusNotFound, "not found: the endpoint is "+cfg.Path)
			return
		}
		if r.ContentLength > cfg.MaxBody {
			reject(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", cfg.MaxBody))
			return
		}
		if r.Body != nil {
			// Bodies without a Content-Length (chunked) are cut while read;
			// the MCP transport answers *http.MaxBytesError with 413.
			r.Body = http.MaxBytesReader(w, r.Body, cfg.MaxBody)
			if cfg.BodyTimeout > 0 && r.ContentLength != 0 {
				r.Body = deadlineBody(w, r.Body, cfg.BodyTimeout)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody bounds the reading of the body of the request w answers:
// each read must bring data within d, and the whole body must arrive within
// maxBodyTime. Once the body has been read the deadline is lifted, so that
// it never cuts a long answer (an event stream, a diff waiting for the
// editor) short.
func deadlineBody(w http.ResponseWriter, body io.ReadCloser, d time.Duration) io.ReadCloser {
	rc := http.NewResponseController(w)
	b := &timedBody{ReadCloser: body, rc: rc, idle: d, end: time.Now().Add(maxBodyTime)}
	if b.arm() != nil {
		return body
	}
	return b
}

// maxBodyTime bounds the arrival of a whole request body, however steadily
// it trickles in.
const maxBodyTime = 2 * time.Minute

type timedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time
	done bool
}

func (b *timedBody) arm() error {
	dl := time.Now().Add(b.idle)
	if dl.After(b.end) {
		dl = b.end
	}
	return b.rc.SetReadDeadline(dl)
}

func (b *timedBody) Read(p []byte) (int, error) {
	if !b.done {
		_ = b.arm()
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if errors.Is(err, io.EOF) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}
