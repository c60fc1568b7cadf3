package klaxon

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// IntegrationOptions configure an Integration: a generic integration created
// on the gateway (POST /api/v1/integrations, kind "generic"), whose id and
// whsec_ secret are shown once at creation.
type IntegrationOptions struct {
	// URL of the gateway; default $KLAXON_URL, else DefaultURL.
	URL string
	// URLs of the two boxes of a pair, as in Options.
	URLs   []string
	ID     string
	Secret string
	// Retries, Timeout, HTTPClient and OnRetry as in Options.
	Retries    int
	Timeout    time.Duration
	HTTPClient *http.Client
	OnRetry    func(attempt int, wait time.Duration, err error)
}

// Integration sends events to a generic integration, signed with its secret
// exactly as the gateway signs its own webhooks (Standard Webhooks: webhook-id,
// webhook-timestamp, webhook-signature and X-Service-Signature). No API key is
// needed, so a device holds only what lets it raise its own alerts.
type Integration struct {
	t   *transport
	id  string
	key []byte
}

// NewIntegration returns a sender for the integration opts.ID.
func NewIntegration(opts IntegrationOptions) (*Integration, error) {
	if opts.ID == "" {
		return nil, errors.New("klaxon: the integration id is required")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(opts.Secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New("klaxon: the integration secret must be whsec_ followed by base64")
	}
	t, err := newTransport(Options{URL: opts.URL, URLs: opts.URLs, Retries: opts.Retries, Timeout: opts.Timeout, HTTPClient: opts.HTTPClient, OnRetry: opts.OnRetry}, false)
	if err != nil {
		return nil, err
	}
	// Signed events authenticate by signature alone; an API key from the environment is not sent along.
	t.apiKey = ""
	return &Integration{t: t, id: opts.ID, key: key}, nil
}

// IntegrationAlert is an alert raised through an integration. AlertID is its
// dedup key within the integration: firing again while it is open merges.
type IntegrationAlert struct {
	AlertID string
	Title   string
	Message string
	// Severity words such as critical, error, warning or info map to priorities;
	// empty uses the integration's default priority.
	Severity string
	Source   string
	Link     string
}

// event is the generic integration body (CONTRACT section 8).
type event struct {
	AlertID       string `json:"alert_id"`
	Action        string `json:"action"`
	Title         string `json:"title,omitempty"`
	Message       string `json:"message,omitempty"`
	Severity      string `json:"severity,omitempty"`
	Source        string `json:"source,omitempty"`
	Link          string `json:"link,omitempty"`
	PeriodSeconds int    `json:"period_seconds,omitempty"`
}

// EventResult is what the gateway did with one event.
type EventResult struct {
	AlertID string `json:"alert_id"`
	Action  string `json:"action"`
	// Outcome is created, merged, resolved, no_open_alert, pinged or heartbeat_created.
	Outcome          string  `json:"outcome"`
	NotificationUUID *string `json:"notification_uuid"`
	HeartbeatStatus  *string `json:"heartbeat_status"`
	// Raw is this result's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// Fire raises (or, while open, merges into) the alert alert.AlertID.
func (i *Integration) Fire(ctx context.Context, alert IntegrationAlert) (*EventResult, error) {
	if alert.AlertID == "" {
		return nil, errors.New("klaxon: AlertID is required")
	}
	return i.send(ctx, event{AlertID: alert.AlertID, Action: "fire", Title: alert.Title, Message: alert.Message, Severity: alert.Severity, Source: alert.Source, Link: alert.Link})
}

// ResolveAlert resolves the open alert alertID, stopping its escalation
// (outcome no_open_alert when none is open).
func (i *Integration) ResolveAlert(ctx context.Context, alertID string) (*EventResult, error) {
	return i.send(ctx, event{AlertID: alertID, Action: "resolve"})
}

// PingHeartbeat pings the heartbeat name once, creating it with period on first use.
func (i *Integration) PingHeartbeat(ctx context.Context, name string, period time.Duration) (*EventResult, error) {
	return i.send(ctx, event{AlertID: name, Action: "heartbeat", PeriodSeconds: int(period.Round(time.Second) / time.Second)})
}

func (i *Integration) send(ctx context.Context, e event) (*EventResult, error) {
	// One id per event, kept by every retry, so the gateway can tell a repeat from a new event;
	// the timestamp is each attempt's own.
	messageID := newID("msg_")
	sign := func(body []byte, headers http.Header) {
		timestamp := strconv.FormatInt(time.Now().Unix(), 10)
		signature := Sign(i.key, messageID, timestamp, body)
		headers.Set("webhook-id", messageID)
		headers.Set("webhook-timestamp", timestamp)
		headers.Set("webhook-signature", signature)
		headers.Set("X-Service-Signature", signature)
	}
	var answer struct {
		Results []EventResult `json:"results"`
	}
	if _, err := i.t.do(ctx, request{method: http.MethodPost, path: path("api", "v1", "integrations", i.id, "events"), body: e, policy: idempotent, sign: sign}, &answer); err != nil {
		return nil, err
	}
	if len(answer.Results) != 1 {
		return nil, fmt.Errorf("klaxon: the gateway answered %d results for one event", len(answer.Results))
	}
	return &answer.Results[0], nil
}

// Sign returns the Standard Webhooks signature "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>",
// key being the decoded bytes of a whsec_ secret.
func Sign(key []byte, id, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
