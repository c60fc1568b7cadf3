package klaxon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

func newClient(t *testing.T, url string) *klaxon.Client {
	t.Helper()
	c, err := klaxon.New(url, adminKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSendGetAckResolve(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	n, err := c.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "Press 7 hydraulic oil over 80 °C", Priority: klaxon.PriorityCritical, Source: "plc-7", Link: "https://grafana.lan/d/7"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status != "queued" || n.Message != "Press 7 hydraulic oil over 80 °C" || *n.Source != "plc-7" || n.Replayed {
		t.Fatalf("unexpected notification %+v", n)
	}
	if time.Since(n.CreatedAt) > 5*time.Minute || n.Links["self"] != "/api/v1/notifications/"+n.ID {
		t.Fatalf("created_at %v, links %v", n.CreatedAt, n.Links)
	}

	read, err := c.Get(ctx, n.ID)
	if err != nil || read.ID != n.ID || *read.Link != "https://grafana.lan/d/7" {
		t.Fatalf("get: %v %+v", err, read)
	}

	acked, err := c.Ack(ctx, n.ID, klaxon.AckOptions{By: "maria", Note: "valve closed"})
	if err != nil {
		t.Fatal(err)
	}
	if acked.Status != "acknowledged" || *acked.AcknowledgedBy != "maria" || *acked.AcknowledgedNote != "valve closed" || acked.AcknowledgedAt == nil {
		t.Fatalf("ack: %+v", acked)
	}
	resolved, err := c.Resolve(ctx, n.ID)
	if err != nil || resolved.Status != "resolved" || resolved.ResolvedAt == nil {
		t.Fatalf("resolve: %v %+v", err, resolved)
	}
	_, err = c.Ack(ctx, n.ID, klaxon.AckOptions{})
	var problem *klaxon.Error
	if !errors.As(err, &problem) || problem.Status != 409 || !errors.Is(err, klaxon.ErrConflict) {
		t.Fatalf("ack after resolve: %v", err)
	}
}

func TestTheSameIdempotencyKeyIsReplayed(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	alert := klaxon.Alert{RecipientUUID: alice, Message: "nightly backup failed", Priority: klaxon.PriorityHigh, IdempotencyKey: "go-backup-2026-11-22"}
	first, err := c.Send(ctx, alert)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Send(ctx, alert)
	if err != nil || again.ID != first.ID || !again.Replayed {
		t.Fatalf("replay: %v %+v", err, again)
	}
}

func TestErrorsCarryTheProblem(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	_, err := c.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "x", Priority: "urgent"})
	var problem *klaxon.Error
	if !errors.As(err, &problem) || problem.Status != 400 || problem.Code != "invalid_request" || !errors.Is(err, klaxon.ErrInvalid) {
		t.Fatalf("invalid priority: %v", err)
	}
	if problem.Type == "" || problem.Instance != "/api/v1/notifications/send" || len(problem.Errors) == 0 || problem.Errors[0].Pointer != "/priority" {
		t.Fatalf("problem fields: %+v", problem)
	}

	_, err = c.Send(ctx, klaxon.Alert{RecipientUUID: "00000000-0000-4000-8000-000000000000", Message: "nobody", Priority: "high"})
	if !errors.As(err, &problem) || problem.Status != 422 || problem.Errors[0].Pointer != "/recipient_uuid" {
		t.Fatalf("unknown recipient: %v", err)
	}
	if _, err = c.Get(ctx, "notif_00000000000000000000000000"); !errors.Is(err, klaxon.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	wrong, _ := klaxon.New(gatewayURL, "klx_abcdefgh_0123456789abcdef0123456789abcdef")
	if _, err = wrong.Get(ctx, "notif_x"); !errors.Is(err, klaxon.ErrUnauthorized) {
		t.Fatalf("wrong key: %v", err)
	}

	_, created := call("POST", "/api/v1/keys", map[string]any{"name": "go read-only", "scopes": []string{"notifications:read"}})
	reader, _ := klaxon.New(gatewayURL, created["key"].(string))
	if _, err = reader.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "no scope", Priority: "low"}); !errors.Is(err, klaxon.ErrForbidden) {
		t.Fatalf("missing scope: %v", err)
	}
}

func TestRetriesKeepOneIdempotencyKeyAndPageOnce(t *testing.T) {
	proxy := startFlakyProxy(t)
	proxy.script(unavailable, reply{drop: true})
	n, err := newClient(t, proxy.URL).Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "go retried send", Priority: klaxon.PriorityCritical})
	if err != nil {
		t.Fatal(err)
	}
	sends := proxy.requests("/api/v1/notifications/send")
	if len(sends) != 3 {
		t.Fatalf("%d attempts, want 3", len(sends))
	}
	key := sends[0].header.Get("Idempotency-Key")
	for _, s := range sends {
		if s.header.Get("Idempotency-Key") != key || s.body != sends[0].body {
			t.Fatalf("attempts differ: %q vs %q", s.header.Get("Idempotency-Key"), key)
		}
	}
	_, page := call("GET", "/api/v1/notifications?limit=200", nil)
	count := 0
	for _, item := range page["items"].([]any) {
		if item.(map[string]any)["message"] == "go retried send" {
			count++
			if item.(map[string]any)["id"] != n.ID {
				t.Fatalf("another notification was stored")
			}
		}
	}
	if count != 1 {
		t.Fatalf("%d notifications stored, want 1", count)
	}
}

func TestGivesUpAfterTheRetries(t *testing.T) {
	proxy := startFlakyProxy(t)
	proxy.script(internal, internal, internal)
	c, _ := klaxon.NewWithOptions(klaxon.Options{URL: proxy.URL, APIKey: adminKey, Retries: 2})
	_, err := c.Get(context.Background(), "notif_00000000000000000000000000")
	if !errors.Is(err, klaxon.ErrServer) || len(proxy.requests("")) != 3 {
		t.Fatalf("err %v after %d attempts", err, len(proxy.requests("")))
	}

	proxy.script(reply{status: 429, headers: map[string]string{"Retry-After": "3600"}, body: `{"title":"Too many requests","status":429}`})
	_, err = c.Get(context.Background(), "notif_x")
	var problem *klaxon.Error
	if !errors.As(err, &problem) || problem.RetryAfter != time.Hour || len(proxy.requests("")) != 4 {
		t.Fatalf("a long Retry-After must be reported, not waited for: %v", err)
	}
}

func TestHonoursRetryAfterOn429(t *testing.T) {
	proxy := startFlakyProxy(t)
	proxy.script(reply{status: 429, headers: map[string]string{"Retry-After": "1"}, body: `{"title":"Too many requests","status":429,"code":"rate_limited"}`})
	sent, err := newClient(t, proxy.URL).Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "after 429", Priority: "low"})
	if err != nil || sent.Status != "queued" || len(proxy.requests("")) != 2 {
		t.Fatalf("%v after %d attempts", err, len(proxy.requests("")))
	}
}

func TestAnUnreachableGatewayIsANetworkError(t *testing.T) {
	c, _ := klaxon.NewWithOptions(klaxon.Options{URL: "http://127.0.0.1:39999", APIKey: adminKey, Retries: 1})
	_, err := c.Get(context.Background(), "notif_x")
	var network *klaxon.NetworkError
	if !errors.As(err, &network) || !network.Refused || !errors.Is(err, klaxon.ErrUnreachable) {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestContextCancellationStopsRetrying(t *testing.T) {
	proxy := startFlakyProxy(t)
	proxy.script(unavailable, unavailable, unavailable, unavailable)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(proxy.requests("")) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := newClient(t, proxy.URL).Get(ctx, "notif_x")
	if !errors.Is(err, klaxon.ErrServer) || len(proxy.requests("")) != 1 {
		t.Fatalf("err %v after %d attempts", err, len(proxy.requests("")))
	}
}
