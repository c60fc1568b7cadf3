package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klaxon/klaxon-go/internal/testgateway"
)

// gateway is the real gateway TestMain starts from the repository; the tests
// run the CLI in-process against it (cli_test.go) and as the built binary (build_test.go).
var (
	gateway     *testgateway.Gateway
	integration struct{ id, secret string }
	// standby stands by as the other box of gateway's pair: 503 standby, Link to gateway.
	standby *testgateway.Gateway
)

// readableTimePattern matches a time as the CLI prints it for people: in a named zone, not ISO.
const readableTimePattern = `\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d \S+`

func TestMain(m *testing.M) {
	if state := os.Getenv("KLAXON_TEST_PRINT_STATE"); state != "" {
		os.Exit(printState(state))
	}
	os.Exit(runTests(m))
}

// printState makes the test binary a command for `heartbeat -- <command>` to
// wrap: it prints the heartbeat's state as the gateway sees it during the run.
func printState(url string) int {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-Key", os.Getenv("KLAXON_TEST_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	var state map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&state)
	fmt.Printf("during the run: %v, started %v\n", state["status"], state["last_start_at"] != nil)
	return 0
}

func runTests(m *testing.M) int {
	repo, _ := filepath.Abs("../../../..")
	started, err := testgateway.Start(repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer started.Stop()
	gateway = started
	if standby, err = testgateway.StartStandby(repo, gateway.URL); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer standby.Stop()
	status, body := gateway.Call("POST", "/api/v1/integrations", map[string]any{"name": "tank-sensors", "kind": "generic", "target": gateway.Alice})
	if status != 201 {
		fmt.Fprintf(os.Stderr, "integration not created: %d %v\n", status, body)
		return 1
	}
	integration.id, integration.secret = body["id"].(string), body["secret"].(string)
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	return code
}

// result is what one run of the CLI did.
type result struct {
	code           int
	stdout, stderr string
}

// klaxonRun runs the CLI in-process with env as its whole environment (plus the gateway's URL
// unless env sets KLAXON_URL) and stdin as its standard input.
func klaxonRun(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	lookup := func(name string) string {
		if value, ok := env[name]; ok {
			return value
		}
		if name == "KLAXON_URL" {
			return gateway.URL
		}
		return ""
	}
	code := run(context.Background(), args, console{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr, env: lookup})
	return result{code, stdout.String(), stderr.String()}
}

// withKey is the environment of a device holding the admin key.
func withKey() map[string]string { return map[string]string{"KLAXON_API_KEY": gateway.AdminKey} }

// newPingURL creates a heartbeat and returns its keyless ping URL.
func newPingURL(t *testing.T, name string) string {
	t.Helper()
	status, body := gateway.Call("POST", "/api/v1/heartbeats", map[string]any{"name": name, "period_seconds": 3600, "target": gateway.Alice})
	if status != 201 {
		t.Fatalf("heartbeat not created: %d %v", status, body)
	}
	return body["ping_url"].(string)
}

func heartbeatStatus(t *testing.T, name string) string {
	t.Helper()
	_, body := gateway.Call("GET", "/api/v1/heartbeats/"+name, nil)
	status, _ := body["status"].(string)
	return status
}
