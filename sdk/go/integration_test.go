package klaxon_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// newIntegration creates a generic integration paging alice and returns a sender for it.
func newIntegration(t *testing.T, url string) (*klaxon.Integration, map[string]any) {
	t.Helper()
	status, created := call("POST", "/api/v1/integrations", map[string]any{"name": "press line " + t.Name(), "kind": "generic", "target": alice})
	if status != 201 {
		t.Fatalf("integration not created: %d %v", status, created)
	}
	integration, err := klaxon.NewIntegration(klaxon.IntegrationOptions{URL: url, ID: created["id"].(string), Secret: created["secret"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	return integration, created
}

func TestFireAndResolveThroughASignedIntegration(t *testing.T) {
	ctx := context.Background()
	integration, _ := newIntegration(t, gatewayURL)
	fired, err := integration.Fire(ctx, klaxon.IntegrationAlert{AlertID: "press-7-oil", Title: "Press 7", Message: "hydraulic oil over 80 °C", Severity: "critical", Source: "plc-7"})
	if err != nil {
		t.Fatal(err)
	}
	if fired.Outcome != "created" || fired.NotificationUUID == nil {
		t.Fatalf("fire: %+v", fired)
	}
	_, n := call("GET", "/api/v1/notifications/"+*fired.NotificationUUID, nil)
	if n["priority"] != "critical" || n["source"] != "plc-7" || n["recipient_uuid"] != alice {
		t.Fatalf("the fired alert: %v", n)
	}

	resolved, err := integration.ResolveAlert(ctx, "press-7-oil")
	if err != nil {
		t.Fatal(err)
	}
	if resolved.Outcome != "resolved" || *resolved.NotificationUUID != *fired.NotificationUUID {
		t.Fatalf("resolve: %+v", resolved)
	}
	if _, n = call("GET", "/api/v1/notifications/"+*fired.NotificationUUID, nil); n["status"] != "resolved" {
		t.Fatalf("not resolved: %v", n["status"])
	}
	again, err := integration.ResolveAlert(ctx, "press-7-oil")
	if err != nil || again.Outcome != "no_open_alert" {
		t.Fatalf("resolve again: %v %+v", err, again)
	}
}

func TestASignatureWithTheWrongSecretIsRefused(t *testing.T) {
	_, created := newIntegration(t, gatewayURL)
	impostor, _ := klaxon.NewIntegration(klaxon.IntegrationOptions{URL: gatewayURL, ID: created["id"].(string), Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")), Retries: -1})
	_, err := impostor.Fire(context.Background(), klaxon.IntegrationAlert{AlertID: "forged", Message: "forged"})
	if !errors.Is(err, klaxon.ErrUnauthorized) {
		t.Fatalf("forged event: %v", err)
	}
}

func TestSignedEventsAreRetriedWithAFreshTimestampAndTheSameID(t *testing.T) {
	proxy := startFlakyProxy(t)
	integration, created := newIntegration(t, proxy.URL)
	proxy.script(unavailable)
	fired, err := integration.Fire(context.Background(), klaxon.IntegrationAlert{AlertID: "retried-event", Message: "retried"})
	if err != nil || fired.Outcome != "created" {
		t.Fatalf("fire through a failing proxy: %v %+v", err, fired)
	}
	attempts := proxy.requests("/api/v1/integrations/" + created["id"].(string) + "/events")
	if len(attempts) != 2 || attempts[0].header.Get("webhook-id") != attempts[1].header.Get("webhook-id") {
		t.Fatalf("%d attempts; ids %q %q", len(attempts), attempts[0].header.Get("webhook-id"), attempts[len(attempts)-1].header.Get("webhook-id"))
	}
	if attempts[1].header.Get("X-Service-Signature") != attempts[1].header.Get("webhook-signature") || attempts[1].header.Get("X-API-Key") != "" {
		t.Fatalf("headers: %v", attempts[1].header)
	}
}

func TestIntegrationHeartbeatCreatesThenPings(t *testing.T) {
	ctx := context.Background()
	integration, _ := newIntegration(t, gatewayURL)
	first, err := integration.PingHeartbeat(ctx, "go-device-1", 30*time.Second)
	if err != nil || first.Outcome != "heartbeat_created" {
		t.Fatalf("first ping: %v %+v", err, first)
	}
	second, err := integration.PingHeartbeat(ctx, "go-device-1", 30*time.Second)
	if err != nil || second.Outcome != "pinged" || *second.HeartbeatStatus != "up" {
		t.Fatalf("second ping: %v %+v", err, second)
	}
	_, heartbeat := call("GET", "/api/v1/heartbeats/go-device-1", nil)
	if heartbeat["period_seconds"] != float64(30) || heartbeat["status"] != "up" || heartbeat["target"] != alice {
		t.Fatalf("heartbeat: %v", heartbeat)
	}
}

func TestHeartbeatLoopPingsUntilItsContextEnds(t *testing.T) {
	name := fmt.Sprintf("go-loop-%d", time.Now().UnixNano())
	if status, body := call("POST", "/api/v1/heartbeats", map[string]any{"name": name, "period_seconds": 10, "grace_seconds": 5, "target": alice}); status != 201 {
		t.Fatalf("heartbeat not created: %d %v", status, body)
	}
	proxy := startFlakyProxy(t)
	proxy.script(reply{hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	// The first ping is held at the proxy: Heartbeat must return anyway, or this test hangs.
	// A ping may time out on a loaded machine (each may take one period); the loop carries on.
	loop := newClient(t, proxy.URL).Heartbeat(ctx, name, 200*time.Millisecond, klaxon.HeartbeatOptions{})
	proxy.release()
	deadline := time.After(20 * time.Second)
	for {
		if pings, _, _ := loop.Stats(); pings >= 3 {
			break
		}
		select {
		case <-deadline:
			pings, failures, lastErr := loop.Stats()
			t.Fatalf("%d pings, %d failures, last %v", pings, failures, lastErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	<-loop.Done()
	seen := len(proxy.requests("/api/v1/heartbeats/" + name + "/ping"))
	time.Sleep(500 * time.Millisecond)
	if after := len(proxy.requests("/api/v1/heartbeats/" + name + "/ping")); after != seen {
		t.Fatalf("pinged after its context ended: %d then %d", seen, after)
	}
	_, heartbeat := call("GET", "/api/v1/heartbeats/"+name, nil)
	if heartbeat["status"] != "up" {
		t.Fatalf("heartbeat: %v", heartbeat)
	}
}

func TestHeartbeatLoopReportsFailuresAndKeepsGoing(t *testing.T) {
	failures := make(chan error, 10)
	c, _ := klaxon.NewWithOptions(klaxon.Options{URL: "http://127.0.0.1:39999", APIKey: adminKey, Retries: -1})
	loop := c.Heartbeat(context.Background(), "nobody-listens", 20*time.Millisecond, klaxon.HeartbeatOptions{OnError: func(err error) { failures <- err }})
	for i := 0; i < 2; i++ {
		if err := <-failures; !errors.Is(err, klaxon.ErrUnreachable) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	loop.Stop()
	if _, failed, lastErr := loop.Stats(); failed < 2 || lastErr == nil {
		t.Fatalf("stats: %d failures, last %v", failed, lastErr)
	}
}

func TestIntegrationReadsTheGatewayURLFromTheEnvironment(t *testing.T) {
	if os.Getenv("KLAXON_URL") != gatewayURL {
		t.Fatal("TestMain sets KLAXON_URL")
	}
	_, created := call("POST", "/api/v1/integrations", map[string]any{"name": "from env", "kind": "generic", "target": alice})
	integration, err := klaxon.NewIntegration(klaxon.IntegrationOptions{ID: created["id"].(string), Secret: created["secret"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := integration.Fire(context.Background(), klaxon.IntegrationAlert{AlertID: "env", Message: "from env"}); err != nil {
		t.Fatal(err)
	}
}
