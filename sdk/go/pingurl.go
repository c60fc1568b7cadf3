package klaxon

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// PingURLOptions configure a PingURL. Zero values take the defaults of Options.
type PingURLOptions struct {
	Retries    int
	Timeout    time.Duration
	HTTPClient *http.Client
	OnRetry    func(attempt int, wait time.Duration, err error)
}

// PingURL signals a heartbeat through its keyless ping_url
// (<base>/ping/<token>): the token in the URL is the credential, so a device or
// a cron job needs no API key. Every signal is safe to repeat and is retried
// like a read.
type PingURL struct {
	t *transport
}

// NewPingURL returns a signaller for the heartbeat's ping_url.
func NewPingURL(pingURL string, opts PingURLOptions) (*PingURL, error) {
	if pingURL == "" {
		return nil, errors.New("klaxon: the ping URL is required")
	}
	t, err := newTransport(Options{URLs: []string{pingURL}, Retries: opts.Retries, Timeout: opts.Timeout, HTTPClient: opts.HTTPClient, OnRetry: opts.OnRetry}, false)
	if err != nil {
		return nil, err
	}
	// The URL is the credential: an API key from the environment is not sent along.
	t.apiKey = ""
	return &PingURL{t: t}, nil
}

// Ping says the job ran or the device lives: the heartbeat is up (resolving a
// down page) and the next ping is due a period from now.
func (p *PingURL) Ping(ctx context.Context) (*PingAnswer, error) {
	return p.signal(ctx, "", nil)
}

// Start says a run began: it must end (Ping or Fail) within the heartbeat's grace time.
func (p *PingURL) Start(ctx context.Context) (*PingAnswer, error) {
	return p.signal(ctx, "/start", nil)
}

// Fail says the job failed: the heartbeat goes down and pages at once. The exit
// code goes along in the JSON body, and the gateway names it in the page
// ("reported a failure (exit code 3)").
func (p *PingURL) Fail(ctx context.Context, exitCode int) (*PingAnswer, error) {
	return p.signal(ctx, "/fail", map[string]int{"exit_code": exitCode})
}

func (p *PingURL) signal(ctx context.Context, suffix string, body any) (*PingAnswer, error) {
	var answer PingAnswer
	if _, err := p.t.do(ctx, request{method: http.MethodPost, path: suffix, body: body, policy: idempotent}, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}
