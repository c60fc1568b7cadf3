package klaxon

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// FieldError is one invalid field of a request: a JSON Pointer into the body
// (or "/<name>" for a query parameter) and what is wrong with it.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// Error is a request the gateway refused, as its RFC 9457 problem document
// (CONTRACT section 6). Use errors.As to read the fields, or errors.Is with
// the sentinels (ErrNotFound, ErrUnauthorized, ...) to branch on the kind.
type Error struct {
	Type     string       `json:"type"`
	Title    string       `json:"title"`
	Status   int          `json:"status"`
	Detail   string       `json:"detail"`
	Instance string       `json:"instance"`
	Code     string       `json:"code"`
	Errors   []FieldError `json:"errors"`
	// RetryAfter is the gateway's Retry-After (429, 503), zero when absent.
	RetryAfter time.Duration `json:"-"`
	// Raw is the problem document as the gateway sent it; empty when the
	// answer was not a problem document (a proxy's error page).
	Raw json.RawMessage `json:"-"`
}

func (e *Error) Error() string {
	var text strings.Builder
	fmt.Fprintf(&text, "klaxon: %d %s", e.Status, e.Title)
	if e.Detail != "" {
		fmt.Fprintf(&text, ": %s", e.Detail)
	}
	for _, field := range e.Errors {
		fmt.Fprintf(&text, "; %s: %s", field.Pointer, field.Detail)
	}
	return text.String()
}

// Sentinels for errors.Is: each matches every *Error of its kind.
var (
	ErrInvalid      = errors.New("klaxon: invalid request")     // 400, 413, 415, 422
	ErrUnauthorized = errors.New("klaxon: unauthenticated")     // 401
	ErrForbidden    = errors.New("klaxon: forbidden")           // 403
	ErrNotFound     = errors.New("klaxon: not found")           // 404
	ErrConflict     = errors.New("klaxon: conflict")            // 409
	ErrRateLimited  = errors.New("klaxon: rate limited")        // 429
	ErrServer       = errors.New("klaxon: server error")        // 5xx
	ErrUnreachable  = errors.New("klaxon: gateway unreachable") // no answer (see *NetworkError)
)

// Is lets errors.Is(err, klaxon.ErrNotFound) and friends match by status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalid:
		return e.Status == 400 || e.Status == 413 || e.Status == 415 || e.Status == 422
	case ErrUnauthorized:
		return e.Status == 401
	case ErrForbidden:
		return e.Status == 403
	case ErrNotFound:
		return e.Status == 404
	case ErrConflict:
		return e.Status == 409
	case ErrRateLimited:
		return e.Status == 429
	case ErrServer:
		return e.Status >= 500
	}
	return false
}

// NetworkError is a request that got no answer: refused, reset or timed out.
type NetworkError struct {
	URL string
	// Refused is true when the connection was refused: the request never reached the gateway.
	Refused bool
	Err     error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("klaxon: cannot reach the gateway at %s: %v", e.URL, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, klaxon.ErrUnreachable) true.
func (e *NetworkError) Is(target error) bool { return target == ErrUnreachable }
