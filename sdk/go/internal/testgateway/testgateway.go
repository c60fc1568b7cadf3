// Package testgateway starts a real Klaxon gateway from this repository for
// the Go tests (the library's and the CLI's), as `npm start` does: on a free
// loopback port with a temporary data dir, and an admin key read from it.
package testgateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Gateway is a running gateway.
type Gateway struct {
	URL      string
	AdminKey string
	// Alice is a recipient created at start, to send alerts to.
	Alice   string
	dataDir string
	process *exec.Cmd
}

// Start runs the gateway from the repository at repo and waits until it
// answers /healthz. Stop it with Stop.
func Start(repo string) (*Gateway, error) {
	g, err := launch(repo)
	if err != nil {
		return nil, err
	}
	key, err := os.ReadFile(filepath.Join(g.dataDir, "initial-admin-key"))
	if err != nil {
		g.Stop()
		return nil, err
	}
	g.AdminKey = strings.TrimSpace(string(key))
	status, body := g.Call("POST", "/api/v1/recipients", map[string]any{"name": "Alice", "phone": "+4915112345678", "email": "alice@example.com"})
	if status != 201 {
		g.Stop()
		return nil, fmt.Errorf("recipient not created: %d %v", status, body)
	}
	g.Alice = body["uuid"].(string)
	return g, nil
}

// StartStandby runs a gateway as the standby box of a pair whose active is at active
// (docs/high-availability.md): every API route answers 503 standby with a Link to active. Its copy
// stays empty (its follower is /bin/true), so it never takes over.
func StartStandby(repo, active string) (*Gateway, error) {
	return launch(repo,
		"KLAXON_REPLICATION_ROLE=standby", "KLAXON_REPLICATION_PEER="+active, "KLAXON_REPLICATION_LITESTREAM=/bin/true",
		"KLAXON_REPLICATION_REPLICA=/nonexistent/replica", "KLAXON_REPLICATION_INCOMING=/nonexistent/incoming")
}

// launch starts a gateway process with extra settings in its environment and waits for its /healthz.
func launch(repo string, settings ...string) (*Gateway, error) {
	dataDir, err := os.MkdirTemp("", "klaxon-go-test-")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	process := exec.Command("node", "--import", "@swc-node/register/esm-register", "src/main.ts")
	process.Dir = repo
	process.Env = append(os.Environ(), "KLAXON_DATA_DIR="+dataDir, fmt.Sprintf("KLAXON_PORT=%d", port), "KLAXON_HOST=127.0.0.1", "KLAXON_LOG_LEVEL=warn", "KLAXON_CONFIG=")
	process.Env = append(process.Env, settings...)
	var log bytes.Buffer
	process.Stdout, process.Stderr = &log, &log
	if err := process.Start(); err != nil {
		os.RemoveAll(dataDir)
		return nil, err
	}
	g := &Gateway{URL: fmt.Sprintf("http://127.0.0.1:%d", port), dataDir: dataDir, process: process}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(g.URL + "/healthz"); err == nil {
			resp.Body.Close()
			return g, nil
		}
		if time.Now().After(deadline) {
			g.Stop()
			return nil, fmt.Errorf("the gateway did not start:\n%s", log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// FreePort is a loopback port nothing listens on (a box that is down, once it is not started).
func FreePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}

// DeadURL is the URL of a loopback port nothing listens on: a box that is down.
func DeadURL(t testing.TB) string {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// Landed is how many of the gateway's notifications carry message: a send that must land exactly once.
func (g *Gateway) Landed(message string) int {
	_, page := g.Call("GET", "/api/v1/notifications?limit=200", nil)
	count := 0
	for _, item := range page["items"].([]any) {
		if item.(map[string]any)["message"] == message {
			count++
		}
	}
	return count
}

// Stop ends the gateway (SIGTERM, as systemd stops it) and removes its data dir.
func (g *Gateway) Stop() {
	_ = g.process.Process.Signal(syscall.SIGTERM)
	_ = g.process.Wait()
	os.RemoveAll(g.dataDir)
}

// Call is a raw API call with the admin key, to set up and check what a client did.
func (g *Gateway) Call(method, path string, body any) (int, map[string]any) {
	var encoded []byte
	if body != nil {
		encoded, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, g.URL+path, bytes.NewReader(encoded))
	req.Header.Set("X-API-Key", g.AdminKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var decoded map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&decoded)
	return resp.StatusCode, decoded
}
