package klaxon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klaxon/klaxon-go/internal/testgateway"
)

// gatewayURL and adminKey belong to the real gateway TestMain starts from the
// repository (as `npm start` does) on a free loopback port with a temp data dir.
var (
	gateway    *testgateway.Gateway
	gatewayURL string
	// standbyURL is a second gateway standing by as the other box of gateway's pair.
	standbyURL string
	adminKey   string
	alice      string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	repo, _ := filepath.Abs("../..")
	started, err := testgateway.Start(repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer started.Stop()
	gateway, gatewayURL, adminKey, alice = started, started.URL, started.AdminKey, started.Alice
	standby, err := testgateway.StartStandby(repo, gatewayURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer standby.Stop()
	standbyURL = standby.URL
	// The examples read the environment, as a program on the box would.
	os.Setenv("KLAXON_URL", gatewayURL)
	os.Setenv("KLAXON_API_KEY", adminKey)
	os.Setenv("KLAXON_RECIPIENT", alice)
	status, integration := call("POST", "/api/v1/integrations", map[string]any{"name": "examples", "kind": "generic", "target": alice})
	if status != 201 {
		fmt.Fprintf(os.Stderr, "integration not created: %d %v\n", status, integration)
		return 1
	}
	os.Setenv("KLAXON_INTEGRATION_ID", integration["id"].(string))
	os.Setenv("KLAXON_INTEGRATION_SECRET", integration["secret"].(string))
	return m.Run()
}

// call is a raw API call with the admin key, to set up and check what the library did.
func call(method, path string, body any) (int, map[string]any) {
	return gateway.Call(method, path, body)
}
