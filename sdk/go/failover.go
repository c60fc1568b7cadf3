package klaxon

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// pass is one attempt of a request: it starts at the gateway that answered last and moves on
// while a box cannot be the one to serve it (see movesOn), to the box a standby names as the
// active when that is a configured one, else to the next configured one not yet tried. The body,
// and with it the Idempotency-Key, is the same on every box, so a send lands once however many
// boxes it passes. The box that answers is remembered for the next calls.
func (t *transport) pass(ctx context.Context, r request, body []byte, out any) (http.Header, error) {
	tried := make([]bool, len(t.gateways))
	at := int(t.current.Load())
	for {
		tried[at] = true
		headers, err := t.attempt(ctx, t.gateways[at], r, body, out)
		if !movesOn(err, headers, r.policy) {
			var problem *Error
			if err == nil || errors.As(err, &problem) {
				t.current.Store(int32(at))
			}
			return headers, err
		}
		next := t.nextGateway(at, activeLink(headers), tried)
		if next < 0 {
			return headers, err
		}
		at = next
	}
}

// movesOn says whether a failure is one another box may not have: a connection that was refused
// (nothing arrived) or that failed on a request that is safe to repeat, and a standby's 503.
func movesOn(err error, headers http.Header, policy retryPolicy) bool {
	var network *NetworkError
	if errors.As(err, &network) {
		return network.Refused || policy == idempotent
	}
	var problem *Error
	return errors.As(err, &problem) && problem.Status == http.StatusServiceUnavailable &&
		(problem.Code == "standby" || activeLink(headers) != "")
}

// nextGateway is the gateway to try after the one at index at: the one the standby named, when it
// is configured and untried (a Link to any other host is not followed: the request carries the API
// key), else the next untried one in the configured order; -1 when every one was tried.
func (t *transport) nextGateway(at int, named string, tried []bool) int {
	for i, gateway := range t.gateways {
		if named != "" && !tried[i] && sameGateway(gateway, named) {
			return i
		}
	}
	for step := 1; step < len(t.gateways); step++ {
		if next := (at + step) % len(t.gateways); !tried[next] {
			return next
		}
	}
	return -1
}

// activeLink is the target of the answer's Link with rel="active" (RFC 8288), "" when it has none.
func activeLink(headers http.Header) string {
	for _, value := range headers.Values("Link") {
		for _, link := range strings.Split(value, ",") {
			target, params, found := strings.Cut(strings.TrimSpace(link), ";")
			if !found || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, param := range strings.Split(params, ";") {
				name, rel, _ := strings.Cut(strings.TrimSpace(param), "=")
				if strings.EqualFold(name, "rel") && strings.EqualFold(strings.Trim(rel, `"`), "active") {
					return strings.Trim(target, "<>")
				}
			}
		}
	}
	return ""
}

// sameGateway compares base URLs as written, ignoring a trailing slash and the case of scheme and host.
func sameGateway(configured, named string) bool {
	return strings.EqualFold(configured, strings.TrimRight(named, "/"))
}
