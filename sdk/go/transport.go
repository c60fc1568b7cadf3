package klaxon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// retryPolicy says which failures a request may be repeated after.
type retryPolicy int

const (
	// idempotent: repeating cannot change the outcome (reads, sends with an
	// Idempotency-Key, ack, resolve, signed integration events, pings).
	idempotent retryPolicy = iota
	// create: a repeat after an unknown outcome could create a duplicate; only
	// connection refused, 429 and 503 (nothing stored) are repeated.
	create
)

const (
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 8 * time.Second
	// A gateway asking for a longer pause is overloaded or out of disk:
	// report it rather than hold the caller.
	maxRetryAfter = time.Minute
)

// backoff is exponential from 0.5 s, capped at 8 s, with ±20% jitter.
func backoff(retry int) time.Duration {
	base := baseBackoff << (retry - 1)
	if base > maxBackoff || base <= 0 {
		base = maxBackoff
	}
	return time.Duration(float64(base) * (0.8 + rand.Float64()*0.4))
}

func parseRetryAfter(value string) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(value); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil {
		if wait := time.Until(at); wait > 0 {
			return wait
		}
	}
	return 0
}

type request struct {
	method  string
	path    string
	query   url.Values
	body    any
	headers http.Header
	policy  retryPolicy
	// sign, when set, adds headers computed from the exact body bytes of each attempt.
	sign func(body []byte, headers http.Header)
}

type transport struct {
	// gateways are the configured base URLs (no trailing slash; request paths start with one):
	// one gateway, or the boxes of a pair (docs/high-availability.md).
	gateways []string
	// current is the index of the gateway that answered last: each call starts there.
	current atomic.Int32
	apiKey  string
	http    *http.Client
	retries int
	onRetry func(attempt int, wait time.Duration, err error)
}

// do sends the request with retries and decodes a 2xx JSON answer into out (when out is not nil).
// It returns the answer's headers.
func (t *transport) do(ctx context.Context, r request, out any) (http.Header, error) {
	var body []byte
	if r.body != nil {
		encoded, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		body = encoded
	}
	for attempt := 1; ; attempt++ {
		headers, err := t.pass(ctx, r, body, out)
		if err == nil || !retryable(err, r.policy) || attempt > t.retries {
			return headers, err
		}
		wait := backoff(attempt)
		var problem *Error
		if errors.As(err, &problem) && problem.RetryAfter > 0 {
			if problem.RetryAfter > maxRetryAfter {
				return headers, err
			}
			if problem.RetryAfter > wait {
				wait = problem.RetryAfter
			}
		}
		if t.onRetry != nil {
			t.onRetry(attempt+1, wait, err)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return headers, err
		case <-timer.C:
		}
	}
}

func (t *transport) attempt(ctx context.Context, gateway string, r request, body []byte, out any) (http.Header, error) {
	// r.path is built from escaped segments (url.PathEscape), so it is joined as text.
	target := gateway + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set("User-Agent", "klaxon-go")
	if t.apiKey != "" {
		req.Header.Set("X-API-Key", t.apiKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, values := range r.headers {
		req.Header[name] = values
	}
	if r.sign != nil {
		r.sign(body, req.Header)
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, &NetworkError{URL: gateway, Refused: errors.Is(err, syscall.ECONNREFUSED), Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.Header, &NetworkError{URL: gateway, Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return resp.Header, err
			}
		}
		return resp.Header, nil
	}
	problem := &Error{}
	if json.Unmarshal(raw, problem) != nil || problem.Title == "" {
		problem = &Error{Title: http.StatusText(resp.StatusCode)}
	}
	problem.Status = resp.StatusCode
	problem.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	return resp.Header, problem
}

func retryable(err error, policy retryPolicy) bool {
	var network *NetworkError
	if errors.As(err, &network) {
		return policy == idempotent || network.Refused
	}
	var problem *Error
	if !errors.As(err, &problem) {
		return false
	}
	if problem.Status == 429 || problem.Status == 503 || problem.Code == "idempotency_in_flight" {
		return true
	}
	return problem.Status >= 500 && policy == idempotent
}
