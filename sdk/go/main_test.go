package klaxon_test

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

// gatewayURL and adminKey belong to the real gateway TestMain starts from the
// repository (as `npm start` does) on a free loopback port with a temp data dir.
var (
	gatewayURL string
	adminKey   string
	alice      string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dataDir, err := os.MkdirTemp("", "klaxon-go-test-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dataDir)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()

	repo, _ := filepath.Abs("../..")
	gateway := exec.Command("node", "--import", "@swc-node/register/esm-register", "src/main.ts")
	gateway.Dir = repo
	gateway.Env = append(os.Environ(), "KLAXON_DATA_DIR="+dataDir, fmt.Sprintf("KLAXON_PORT=%d", port), "KLAXON_HOST=127.0.0.1", "KLAXON_LOG_LEVEL=warn", "KLAXON_CONFIG=")
	var log bytes.Buffer
	gateway.Stdout, gateway.Stderr = &log, &log
	if err := gateway.Start(); err != nil {
		panic(err)
	}
	defer func() {
		_ = gateway.Process.Signal(syscall.SIGTERM)
		_ = gateway.Wait()
	}()
	gatewayURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(gatewayURL + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "the gateway did not start:\n%s\n", log.String())
			return 1
		}
		time.Sleep(200 * time.Millisecond)
	}
	key, err := os.ReadFile(filepath.Join(dataDir, "initial-admin-key"))
	if err != nil {
		panic(err)
	}
	adminKey = strings.TrimSpace(string(key))
	// The examples read the environment, as a program on the box would.
	os.Setenv("KLAXON_URL", gatewayURL)
	os.Setenv("KLAXON_API_KEY", adminKey)

	status, body := call("POST", "/api/v1/recipients", map[string]any{"name": "Alice", "phone": "+4915112345678", "email": "alice@example.com"})
	if status != 201 {
		panic(fmt.Sprintf("recipient not created: %d %v", status, body))
	}
	alice = body["uuid"].(string)
	os.Setenv("KLAXON_RECIPIENT", alice)
	status, integration := call("POST", "/api/v1/integrations", map[string]any{"name": "examples", "kind": "generic", "target": alice})
	if status != 201 {
		panic(fmt.Sprintf("integration not created: %d %v", status, integration))
	}
	os.Setenv("KLAXON_INTEGRATION_ID", integration["id"].(string))
	os.Setenv("KLAXON_INTEGRATION_SECRET", integration["secret"].(string))
	return m.Run()
}

// call is a raw API call with the admin key, to set up and check what the library did.
func call(method, path string, body any) (int, map[string]any) {
	var reader *bytes.Reader
	if body != nil {
		encoded, _ := json.Marshal(body)
		reader = bytes.NewReader(encoded)
	} else {
		reader = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, gatewayURL+path, reader)
	req.Header.Set("X-API-Key", adminKey)
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
