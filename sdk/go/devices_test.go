package klaxon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// newRecipient makes a recipient of its own for a test that counts what was sent to it.
func newRecipient(t *testing.T, name string) string {
	t.Helper()
	status, body := call("POST", "/api/v1/recipients", map[string]any{"name": name, "email": strings.ToLower(name) + "@example.com"})
	if status != 201 {
		t.Fatalf("recipient not created: %d %v", status, body)
	}
	return body["uuid"].(string)
}

func TestSubmitAnswersTheReceiptAndAnswersKeepTheirJSON(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	receipt, err := c.Submit(ctx, klaxon.Alert{RecipientUUID: alice, Message: "tank 3 low", Priority: klaxon.PriorityLow})
	if err != nil {
		t.Fatal(err)
	}
	if receipt.Status != "queued" || !strings.HasPrefix(receipt.NotificationUUID, "notif_") || receipt.EscalationChainID == "" || receipt.Replayed {
		t.Fatalf("receipt %+v", receipt)
	}
	var raw map[string]any
	if err := json.Unmarshal(receipt.Raw, &raw); err != nil || raw["notification_uuid"] != receipt.NotificationUUID || len(raw) != 4 {
		t.Fatalf("receipt raw %s", receipt.Raw)
	}
	n, err := c.Get(ctx, receipt.NotificationUUID)
	if err != nil {
		t.Fatal(err)
	}
	raw = nil
	// Raw keeps every field, also those Notification has no field for.
	if err := json.Unmarshal(n.Raw, &raw); err != nil || raw["id"] != n.ID || raw["message"] != "tank 3 low" || raw["links"] == nil {
		t.Fatalf("notification raw %s", n.Raw)
	}
	_, err = c.Get(ctx, "notif_00000000000000000000000000")
	var problem *klaxon.Error
	if !errors.As(err, &problem) || !strings.Contains(string(problem.Raw), `"status":404`) {
		t.Fatalf("the problem keeps its JSON: %v %s", err, problem.Raw)
	}
}

func TestListNotificationsFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	bob := newRecipient(t, "Bob")
	for i := 1; i <= 3; i++ {
		if _, err := c.Submit(ctx, klaxon.Alert{RecipientUUID: bob, Message: fmt.Sprintf("bob %d", i), Priority: klaxon.PriorityInfo}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.ListNotifications(ctx, klaxon.NotificationFilter{RecipientUUID: bob, Limit: 2})
	if err != nil || len(first.Items) != 2 || first.NextCursor == "" || first.Items[0].Message != "bob 3" {
		t.Fatalf("first page: %v %+v", err, first)
	}
	rest, err := c.ListNotifications(ctx, klaxon.NotificationFilter{RecipientUUID: bob, Limit: 2, Cursor: first.NextCursor})
	if err != nil || len(rest.Items) != 1 || rest.NextCursor != "" || rest.Items[0].Message != "bob 1" || len(rest.Items[0].Raw) == 0 {
		t.Fatalf("last page: %v %+v", err, rest)
	}
	none, err := c.ListNotifications(ctx, klaxon.NotificationFilter{RecipientUUID: bob, Status: "resolved"})
	if err != nil || len(none.Items) != 0 {
		t.Fatalf("status filter: %v %+v", err, none)
	}
	_, err = c.ListNotifications(ctx, klaxon.NotificationFilter{Limit: 500})
	if !errors.Is(err, klaxon.ErrInvalid) {
		t.Fatalf("limit 500: %v", err)
	}
}

// newPingURL creates a heartbeat and returns its keyless ping URL.
func newPingURL(t *testing.T, name string) string {
	t.Helper()
	status, body := call("POST", "/api/v1/heartbeats", map[string]any{"name": name, "period_seconds": 3600, "target": alice})
	if status != 201 {
		t.Fatalf("heartbeat not created: %d %v", status, body)
	}
	return body["ping_url"].(string)
}

func TestPingURLStartsPingsAndFailsWithoutAKey(t *testing.T) {
	ctx := context.Background()
	p, err := klaxon.NewPingURL(newPingURL(t, "go-nightly-backup"), klaxon.PingURLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started, err := p.Start(ctx)
	if err != nil || started.Name != "go-nightly-backup" || started.Status != "new" {
		t.Fatalf("start: %v %+v", err, started)
	}
	pinged, err := p.Ping(ctx)
	if err != nil || pinged.Status != "up" || pinged.ExpectedAt == nil || len(pinged.Raw) == 0 {
		t.Fatalf("ping: %v %+v", err, pinged)
	}
	failed, err := p.Fail(ctx, 3)
	if err != nil || failed.Status != "down" {
		t.Fatalf("fail: %v %+v", err, failed)
	}
	_, state := call("GET", "/api/v1/heartbeats/go-nightly-backup", nil)
	if state["status"] != "down" || state["notification_id"] == nil {
		t.Fatalf("the failure must page: %v", state)
	}

	wrong, _ := klaxon.NewPingURL(gatewayURL+"/ping/not-a-token-of-any-heartbeat-xx", klaxon.PingURLOptions{})
	if _, err := wrong.Ping(ctx); !errors.Is(err, klaxon.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
	if _, err := klaxon.NewPingURL("ftp://box/ping/x", klaxon.PingURLOptions{}); err == nil {
		t.Fatal("a ping URL must be http(s)")
	}
}

func TestOnRetryIsToldAboutEachRepeat(t *testing.T) {
	proxy := startFlakyProxy(t)
	proxy.script(internal, unavailable)
	type note struct {
		attempt int
		wait    time.Duration
		err     error
	}
	var notes []note
	c, _ := klaxon.NewWithOptions(klaxon.Options{URL: proxy.URL, APIKey: adminKey, OnRetry: func(attempt int, wait time.Duration, err error) {
		notes = append(notes, note{attempt, wait, err})
	}})
	if _, err := c.ListNotifications(context.Background(), klaxon.NotificationFilter{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0].attempt != 2 || notes[1].attempt != 3 || !errors.Is(notes[0].err, klaxon.ErrServer) || !errors.Is(notes[1].err, klaxon.ErrServer) || notes[0].wait <= 0 || notes[1].wait < time.Second {
		t.Fatalf("notes %+v", notes)
	}
}
