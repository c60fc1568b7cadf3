package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// Exit codes, the same as the TypeScript CLI's (docs/clients.md): scripts
// branch on these numbers, so each failure maps to exactly one of them.
const (
	exitOK = 0
	// exitFailed: the answer is "no": the gateway refused the change in the current state (409).
	exitFailed = 1
	// exitUsage: a bad command line, or a request the gateway rejected as invalid (400, 413, 415, 422).
	exitUsage    = 2
	exitNotFound = 3
	// exitAuth: no key, an unknown or revoked key (401), or a key without the scope (403); also a bad integration signature.
	exitAuth = 4
	// exitUnavailable: a server error, rate limit or network failure after the retries ran out.
	exitUnavailable = 5
)

// cliError is a failure reported on stderr and turned into an exit code.
type cliError struct {
	message string
	code    int
	usage   bool
	// problem is the gateway's refusal, printed on stdout with --json.
	problem *klaxon.Error
}

func (e *cliError) Error() string { return e.message }

func usageError(format string, args ...any) *cliError {
	return &cliError{message: fmt.Sprintf(format, args...), code: exitUsage, usage: true}
}

func exitCodeForStatus(status int) int {
	switch {
	case status == 401 || status == 403:
		return exitAuth
	case status == 404:
		return exitNotFound
	case status == 409:
		return exitFailed
	case status == 429 || status >= 500:
		return exitUnavailable
	}
	return exitUsage
}

// asFailure turns any error of a run into the cliError it is reported as.
func asFailure(err error) *cliError {
	var failure *cliError
	var problem *klaxon.Error
	var network *klaxon.NetworkError
	switch {
	case errors.As(err, &failure):
		return failure
	case errors.As(err, &problem):
		return &cliError{message: problemText(problem), code: exitCodeForStatus(problem.Status), problem: problem}
	case errors.As(err, &network):
		return &cliError{message: fmt.Sprintf("cannot reach the gateway at %s: %s", network.URL, networkReason(network)), code: exitUnavailable}
	}
	return &cliError{message: "unexpected error: " + err.Error(), code: exitFailed}
}

// problemText is "<status> <title>: <detail>" and one line per invalid field, as the TypeScript CLI writes it.
func problemText(problem *klaxon.Error) string {
	var text strings.Builder
	fmt.Fprintf(&text, "%d %s", problem.Status, problem.Title)
	if problem.Detail != "" {
		fmt.Fprintf(&text, ": %s", problem.Detail)
	}
	for _, field := range problem.Errors {
		pointer := field.Pointer
		if pointer == "" {
			pointer = "(body)"
		}
		fmt.Fprintf(&text, "\n  %s: %s", pointer, field.Detail)
	}
	// The library reports a longer Retry-After at once rather than hold the script.
	if problem.RetryAfter > time.Minute {
		fmt.Fprintf(&text, " (the gateway asks to retry after %d s)", int(problem.RetryAfter.Seconds()))
	}
	return text.String()
}

func networkReason(network *klaxon.NetworkError) string {
	var urlError *url.Error
	switch {
	case network.Refused || errors.Is(network.Err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(network.Err, &urlError) && urlError.Timeout():
		return "no answer within the timeout"
	case errors.As(network.Err, &urlError):
		return urlError.Err.Error()
	}
	return network.Err.Error()
}
