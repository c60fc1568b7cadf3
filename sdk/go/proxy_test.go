package klaxon_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// reply is what the flaky proxy does with one request: answer it itself
// (status, headers, body), drop the connection, or forward it.
type reply struct {
	status  int
	headers map[string]string
	body    string
	drop    bool
	// hold keeps the request waiting until the proxy's gate is released, then forwards it.
	hold bool
	// lose forwards the request and drops the connection instead of passing the answer on:
	// the gateway stored it, the client never hears so.
	lose bool
}

var forward = reply{}

type seenRequest struct {
	method, path string
	header       http.Header
	body         string
}

// flakyProxy stands between a client and the real gateway and fails on a script.
type flakyProxy struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	seen    []seenRequest
	gate    chan struct{}
}

func startFlakyProxy(t *testing.T) *flakyProxy { return startFlakyProxyTo(t, gatewayURL) }

// startFlakyProxyTo is a flaky proxy in front of the gateway at target.
func startFlakyProxyTo(t *testing.T, target string) *flakyProxy {
	upstream, _ := url.Parse(target)
	reverse := httputil.NewSingleHostReverseProxy(upstream)
	p := &flakyProxy{gate: make(chan struct{})}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		p.mu.Lock()
		p.seen = append(p.seen, seenRequest{r.Method, r.URL.Path, r.Header.Clone(), string(body)})
		next := forward
		if len(p.replies) > 0 {
			next, p.replies = p.replies[0], p.replies[1:]
		}
		p.mu.Unlock()
		if next.hold {
			select {
			case <-p.gate:
			case <-r.Context().Done():
				return
			}
		}
		if next.lose {
			reverse.ServeHTTP(httptest.NewRecorder(), r)
		}
		switch {
		case next.drop || next.lose:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case next.status != 0:
			for name, value := range next.headers {
				w.Header().Set(name, value)
			}
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(next.status)
			io.WriteString(w, next.body)
		default:
			reverse.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// release lets held requests through.
func (p *flakyProxy) release() { close(p.gate) }

func (p *flakyProxy) script(replies ...reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, replies...)
}

func (p *flakyProxy) requests(path string) []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var matching []seenRequest
	for _, r := range p.seen {
		if path == "" || r.path == path {
			matching = append(matching, r)
		}
	}
	return matching
}

var (
	unavailable = reply{status: 503, headers: map[string]string{"Retry-After": "1"}, body: `{"title":"Storage unavailable","status":503,"code":"storage_unavailable"}`}
	internal    = reply{status: 500, body: `{"title":"Internal error","status":500,"code":"internal_error"}`}
)
