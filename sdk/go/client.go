// Package klaxon is a client for the Klaxon alert escalation gateway: send,
// read, acknowledge and resolve alerts, ask who is on call and start or end
// maintenance windows with an API key; fire and resolve alerts and keep
// heartbeats through a generic integration with its secret.
//
// Every call retries network errors, 429 and 5xx with backoff (honouring
// Retry-After); a send carries one Idempotency-Key reused by every repeat, so
// a retry never pages twice. Refusals are *Error values (RFC 9457 problems).
package klaxon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultURL is used when neither Options.URL nor KLAXON_URL is set.
const DefaultURL = "http://127.0.0.1:8080"

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// URL of the gateway; default $KLAXON_URL, else DefaultURL.
	URL string
	// URLs of the two boxes of a pair (docs/high-availability.md), tried in this order; when set,
	// URL is not used. $KLAXON_URL may list them too, separated by commas. A call moves on to
	// another box on a refused connection, on a lost connection when repeating is safe, and on a
	// standby's 503, preferring the box the standby names when it is one of these; the box that
	// answered is where the next call starts.
	URLs []string
	// APIKey; default $KLAXON_API_KEY.
	APIKey string
	// Retries after the first attempt; default 3. Negative means none.
	Retries int
	// Timeout of one attempt; default 10 s. Ignored when HTTPClient is given.
	Timeout time.Duration
	// HTTPClient to use instead of a new one.
	HTTPClient *http.Client
	// OnRetry, when set, is told about each repeat before its wait: the attempt
	// about to be made (2 for the first repeat), the wait, and the failure that
	// caused it. The klaxon CLI announces retries on stderr with it.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// Client talks to a gateway (or the two boxes of a pair) with an API key. It is safe for concurrent use.
type Client struct {
	t *transport
}

// New returns a client for the gateway at url with the API key; empty values
// fall back to KLAXON_URL and KLAXON_API_KEY.
func New(url, apiKey string) (*Client, error) {
	return NewWithOptions(Options{URL: url, APIKey: apiKey})
}

// NewWithOptions returns a client configured by opts.
func NewWithOptions(opts Options) (*Client, error) {
	t, err := newTransport(opts, true)
	if err != nil {
		return nil, err
	}
	return &Client{t: t}, nil
}

func newTransport(opts Options, needKey bool) (*transport, error) {
	gateways, err := gatewayURLs(opts)
	if err != nil {
		return nil, err
	}
	key := firstNonEmpty(opts.APIKey, os.Getenv("KLAXON_API_KEY"))
	if needKey && key == "" {
		return nil, errors.New("klaxon: no API key: set Options.APIKey or KLAXON_API_KEY")
	}
	retries := opts.Retries
	if retries == 0 {
		retries = 3
	} else if retries < 0 {
		retries = 0
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		timeout := opts.Timeout
		if timeout == 0 {
			timeout = 10 * time.Second
		}
		httpClient = &http.Client{
			Timeout: timeout,
			// Requests carry a key or a signature: send them only where they were addressed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &transport{gateways: gateways, apiKey: key, http: httpClient, retries: retries, onRetry: opts.OnRetry}, nil
}

// gatewayURLs are Options.URLs, else Options.URL, else $KLAXON_URL's comma-separated list, else DefaultURL.
func gatewayURLs(opts Options) ([]string, error) {
	listed := opts.URLs
	if len(listed) == 0 {
		listed = SplitURLs(firstNonEmpty(opts.URL, os.Getenv("KLAXON_URL"), DefaultURL))
	}
	var gateways []string
	for _, base := range listed {
		if parsed, err := url.Parse(base); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			// Not quoted back: a ping URL's token is a credential.
			return nil, errors.New("klaxon: the gateway URL must be an absolute http(s) URL")
		}
		gateways = append(gateways, strings.TrimRight(base, "/"))
	}
	if len(gateways) == 0 {
		return nil, errors.New("klaxon: no gateway URL")
	}
	return gateways, nil
}

// SplitURLs reads a list of gateway URLs separated by commas, as $KLAXON_URL holds them, without empty entries.
func SplitURLs(list string) []string {
	var urls []string
	for _, part := range strings.Split(list, ",") {
		if part = strings.TrimSpace(part); part != "" {
			urls = append(urls, part)
		}
	}
	return urls
}

func firstNonEmpty(values ...string) string {
	for _, value := range values {
		if value != "" {
			return value
		}
	}
	return ""
}

// newID returns a random hex id with a prefix, for Idempotency-Keys and webhook ids.
func newID(prefix string) string {
	bytes := make([]byte, 16)
	if _, err := rand.Read(bytes); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(bytes)
}

func path(segments ...string) string {
	var b strings.Builder
	for _, segment := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(segment))
	}
	return b.String()
}

// PingAnswer is a heartbeat's state after a ping.
type PingAnswer struct {
	Name string `json:"name"`
	// Status is new, up, late, down or paused.
	Status     string     `json:"status"`
	ExpectedAt *time.Time `json:"expected_at"`
	// Raw is the answer's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// PingHeartbeat records one ping of the existing heartbeat name
// (POST /api/v1/heartbeats/{name}/ping; the key needs notifications:send).
func (c *Client) PingHeartbeat(ctx context.Context, name string) (*PingAnswer, error) {
	var answer PingAnswer
	if _, err := c.t.do(ctx, request{method: http.MethodPost, path: path("api", "v1", "heartbeats", name, "ping"), policy: idempotent}, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}
