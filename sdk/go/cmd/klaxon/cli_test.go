package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestParsesFlagsAnywhereInBothForms(t *testing.T) {
	c, rest := findCommand([]string{"send", "--to", "u1", "disk", "--priority=low", "full", "--json"})
	if c == nil || c.words[0] != "send" {
		t.Fatalf("found %v", c)
	}
	args, values, wrapped, err := parse(c, rest)
	if err != nil || strings.Join(args, " ") != "disk full" || values["to"] != "u1" || values["priority"] != "low" || values["json"] != "true" || wrapped != nil {
		t.Fatalf("args %q values %v wrapped %q err %v", args, values, wrapped, err)
	}
	// After "--" everything is an argument, or the command a heartbeat wraps.
	args, _, _, _ = parse(c, []string{"--", "--not-a-flag"})
	if len(args) != 1 || args[0] != "--not-a-flag" {
		t.Fatalf("args after --: %q", args)
	}
	c, rest = findCommand([]string{"heartbeat", "http://box/ping/t", "--", "backup.sh", "--full"})
	args, _, wrapped, err = parse(c, rest)
	if err != nil || len(args) != 1 || strings.Join(wrapped, " ") != "backup.sh --full" {
		t.Fatalf("wrapped %q args %q %v", wrapped, args, err)
	}
	if c, _ := findCommand([]string{"heartbeat", "ping", "nightly"}); strings.Join(c.words, " ") != "heartbeat ping" {
		t.Fatalf("the longest command wins: %v", c.words)
	}
}

func TestUsageMistakesExitWith2(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		message string
	}{
		{[]string{"sned"}, `unknown command "sned"`},
		{[]string{"send", "--to", "u", "--priority", "low", "--colour", "red", "x"}, "unknown option '--colour'"},
		{[]string{"send", "--to"}, "option '--to <TARGET>' argument missing"},
		{[]string{"send", "--to", "u", "--priority", "urgent", "x"}, "--priority must be one of critical, high, medium, low, info"},
		{[]string{"send", "--priority", "low", "x"}, "--to is required"},
		{[]string{"send", "--to", "u", "--priority", "low"}, "missing argument: klaxon send <message...> [flags]"},
		{[]string{"get", "a", "b"}, `unexpected argument "b"`},
		{[]string{"list", "--limit", "0"}, "--limit must be from 1 to 200"},
		{[]string{"list", "--retries", "many"}, `--retries must be a whole number, got "many"`},
		{[]string{"list", "--json=yes"}, "option '--json' does not take a value"},
		{[]string{"get", "x", "--url", "ftp://box"}, "the gateway URL must start with http:// or https://"},
		{[]string{"completion", "fish"}, `completion: bash or zsh, got "fish"`},
	} {
		r := klaxonRun(t, withKey(), "", tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "error: "+tc.message) || !strings.Contains(r.stderr, "`klaxon --help` lists the commands") {
			t.Errorf("%q: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{}, {"help"}, {"--help"}, {"-h"}} {
		r := klaxonRun(t, nil, "", args...)
		if r.code != 0 || !regexp.MustCompile(`\n  heartbeat ping +ping a heartbeat by name`).MatchString(r.stdout) || strings.Contains(r.stdout, "\n  man ") {
			t.Fatalf("%q: %d %q", args, r.code, r.stdout)
		}
	}
	r := klaxonRun(t, nil, "", "fire", "--help")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: klaxon fire <alert-id> [message...] [flags]") || !strings.Contains(r.stdout, "--secret SECRET") {
		t.Fatalf("fire --help: %q", r.stdout)
	}
	r = klaxonRun(t, nil, "", "--version")
	if r.code != 0 || !regexp.MustCompile(`^klaxon dev \(commit unknown, \w+/\w+\)\n$`).MatchString(r.stdout) {
		t.Fatalf("--version: %q", r.stdout)
	}
}

func TestSendGetListAckResolve(t *testing.T) {
	r := klaxonRun(t, withKey(), "", "send", "--to", gateway.Alice, "--priority", "critical", "--source", "plc-7", "Press 7", "oil over 80 °C")
	match := regexp.MustCompile(`(?m)^notification\s+(notif_\w+)\nstatus\s+queued\nchannels planned\s+.+\nescalation chain\s+\S+$`).FindStringSubmatch(r.stdout)
	if r.code != 0 || match == nil {
		t.Fatalf("send: %d %q %q", r.code, r.stdout, r.stderr)
	}
	id := match[1]
	r = klaxonRun(t, withKey(), "", "get", id)
	if r.code != 0 || !regexp.MustCompile(`(?m)^message\s+Press 7 oil over 80 °C$`).MatchString(r.stdout) || !regexp.MustCompile(`(?m)^source\s+plc-7$`).MatchString(r.stdout) ||
		// Nothing can page on the test gateway: the long form says why, in the gateway's words.
		!regexp.MustCompile(`(?m)^escalation\s+.*; waiting: .*(not configured|no channel)`).MatchString(r.stdout) {
		t.Fatalf("get: %d %q", r.code, r.stdout)
	}
	if r = klaxonRun(t, withKey(), "", "send", "--to", gateway.Alice, "--priority", "info", "older", "one"); r.code != 0 {
		t.Fatalf("second send: %d %q", r.code, r.stderr)
	}
	// The test gateway has no channel configured: both alerts wait, queued, for a channel (loud on /readyz).
	r = klaxonRun(t, withKey(), "", "list", "--to", gateway.Alice, "--limit", "1", "--status", "queued")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ID ") || !strings.Contains(r.stdout, "older one") || !strings.Contains(r.stdout, "\nmore: klaxon list --cursor ") {
		t.Fatalf("list: %d %q", r.code, r.stdout)
	}
	r = klaxonRun(t, withKey(), "", "ack", id, "--by", "maria", "--note", "valve closed")
	if r.code != 0 || !regexp.MustCompile(`^acknowledged `+id+` at `+readableTimePattern+` by maria\n$`).MatchString(r.stdout) {
		t.Fatalf("ack: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "resolve", id)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "resolved "+id+" at ") {
		t.Fatalf("resolve: %d %q", r.code, r.stdout)
	}
	// Acknowledging a resolved alert is the gateway's "no": exit 1, the problem on stdout with --json.
	r = klaxonRun(t, withKey(), "", "ack", id, "--json")
	var problem map[string]any
	if r.code != exitFailed || json.Unmarshal([]byte(r.stdout), &problem) != nil || problem["status"] != float64(409) || !strings.HasPrefix(r.stderr, "error: 409 ") {
		t.Fatalf("ack after resolve: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestJSONIsTheGatewaysAnswer(t *testing.T) {
	r := klaxonRun(t, withKey(), "tank 3 below 10 %\n", "send", "--to", gateway.Alice, "--priority", "low", "--json", "-")
	var receipt map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &receipt) != nil || receipt["status"] != "queued" || len(receipt) != 4 || !strings.Contains(r.stdout, "\n  \"notification_uuid\": \"notif_") {
		t.Fatalf("send --json: %d %q", r.code, r.stdout)
	}
	id := receipt["notification_uuid"].(string)
	r = klaxonRun(t, withKey(), "", "get", id, "--json")
	var n map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &n) != nil || n["message"] != "tank 3 below 10 %" || n["links"] == nil {
		t.Fatalf("get --json: %d %q", r.code, r.stdout)
	}
	r = klaxonRun(t, withKey(), "", "list", "--to", gateway.Alice, "--limit", "1", "--all", "--json")
	var page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"next_cursor"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &page) != nil || len(page.Items) < 2 || page.NextCursor != nil || !strings.Contains(r.stdout, `"next_cursor": null`) {
		t.Fatalf("list --all --json: %d %q", r.code, r.stdout)
	}
}

func TestRefusalsMapToTheirExitCodes(t *testing.T) {
	r := klaxonRun(t, withKey(), "", "get", "notif_00000000000000000000000000")
	if r.code != exitNotFound || !strings.HasPrefix(r.stderr, "error: 404 ") {
		t.Fatalf("unknown id: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "send", "--to", "not-a-name", "--priority", "low", "x")
	if r.code != exitNotFound || !strings.Contains(r.stderr, `has the uuid or name "not-a-name"`) {
		t.Fatalf("unknown target: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, nil, "", "list")
	if r.code != exitAuth || r.stderr != "error: no API key: pass --api-key or set KLAXON_API_KEY\n" {
		t.Fatalf("no key: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, nil, "", "list", "--api-key", "klx_wrong-key-that-must-not-be-shown")
	if r.code != exitAuth || !strings.HasPrefix(r.stderr, "error: 401 ") || strings.Contains(r.stdout+r.stderr, "wrong-key-that") {
		t.Fatalf("wrong key: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, map[string]string{"KLAXON_API_KEY": "k", "KLAXON_URL": "http://127.0.0.1:9"}, "", "list", "--retries", "1")
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "retrying in ") || !strings.Contains(r.stderr, "(attempt 2 of 2): cannot reach the gateway at http://127.0.0.1:9: connection refused") ||
		!strings.HasSuffix(r.stderr, "error: cannot reach the gateway at http://127.0.0.1:9: connection refused\n") {
		t.Fatalf("unreachable: %d %q", r.code, r.stderr)
	}
}

func TestAMessageNeverEchoesTheSecrets(t *testing.T) {
	given := secrets([]string{"fire", "--secret=whsec_abc", "--api-key", "klx_1"}, func(name string) string {
		return map[string]string{"KLAXON_INTEGRATION_SECRET": "whsec_abcdef"}[name]
	})
	if got := scrub("a whsec_abcdef b whsec_abc c klx_1", given); got != "a [redacted] b [redacted] c [redacted]" {
		t.Fatalf("scrubbed: %q", got)
	}
}

// flakyOnce answers the first request with a 503 and forwards the rest to the gateway, keeping
// every Idempotency-Key it saw.
func flakyOnce(t *testing.T) (*httptest.Server, *[]string) {
	upstream, _ := url.Parse(gateway.URL)
	forward := httputil.NewSingleHostReverseProxy(upstream)
	var mu sync.Mutex
	var keys []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		first := len(keys) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(503)
			_, _ = w.Write([]byte(`{"title":"Storage unavailable","status":503,"code":"storage_unavailable"}`))
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	return server, &keys
}

func TestASendIsRetriedWithOneIdempotencyKeyAndAnnounced(t *testing.T) {
	proxy, keys := flakyOnce(t)
	env := withKey()
	env["KLAXON_URL"] = proxy.URL
	r := klaxonRun(t, env, "", "send", "--to", gateway.Alice, "--priority", "high", "--idempotency-key", "press-7-2026-11-25", "retried", "send")
	if r.code != 0 || len(*keys) != 2 || (*keys)[0] != "press-7-2026-11-25" || (*keys)[1] != (*keys)[0] ||
		!regexp.MustCompile(`^retrying in \d+\.\d s \(attempt 2 of 4\): 503 Storage unavailable\n$`).MatchString(r.stderr) {
		t.Fatalf("exit %d, keys %q, stderr %q", r.code, *keys, r.stderr)
	}
	// Run again (a cron job re-running): the same key is replayed, nobody is paged twice.
	r = klaxonRun(t, withKey(), "", "send", "--to", gateway.Alice, "--priority", "high", "--idempotency-key", "press-7-2026-11-25", "retried", "send")
	if r.code != 0 || !strings.Contains(r.stdout, "(replayed: this send was already accepted)") {
		t.Fatalf("re-run: %d %q", r.code, r.stdout)
	}
}
