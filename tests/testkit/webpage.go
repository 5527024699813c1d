package testkit

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// WebPage is a page on 127.0.0.1 for an agent's web fetch to read: it
// serves its body at every path until the test ends and counts the requests
// it got, so a test can tell a denied fetch from one that ran.
type WebPage struct {
	// URL is the page's base address.
	URL  string
	hits atomic.Int32
}

// NewWebPage serves body as HTML until t ends.
func NewWebPage(t testing.TB, body string) *WebPage {
	t.Helper()
	p := &WebPage{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		p.hits.Add(1)
		_, _ = rw.Write([]byte("<html><body>" + body + "</body></html>"))
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Hits returns how many requests the page has had.
func (p *WebPage) Hits() int32 { return p.hits.Load() }
