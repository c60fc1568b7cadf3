package klaxon

import (
	"context"
	"net/http"
	"time"
)

// Priorities the gateway accepts, most urgent first.
const (
	PriorityCritical = "critical"
	PriorityHigh     = "high"
	PriorityMedium   = "medium"
	PriorityLow      = "low"
	PriorityInfo     = "info"
)

// Alert is what Send sends. RecipientUUID, Message and Priority are required.
type Alert struct {
	RecipientUUID string `json:"recipient_uuid"`
	Message       string `json:"message"`
	Priority      string `json:"priority"`
	Source        string `json:"source,omitempty"`
	DedupKey      string `json:"dedup_key,omitempty"`
	Link          string `json:"link,omitempty"`
	Service       string `json:"service,omitempty"`
	Environment   string `json:"environment,omitempty"`
	// IdempotencyKey defaults to a new key per Send call (reused by its retries).
	// Set your own, derived from the event, to make repeated runs of your program safe too.
	IdempotencyKey string `json:"-"`
}

// Attempt is one delivery attempt of a notification.
type Attempt struct {
	Channel       string     `json:"channel"`
	RecipientUUID string     `json:"recipient_uuid"`
	Target        string     `json:"target"`
	Step          int        `json:"step"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`
	Outcome       string     `json:"outcome"`
	Error         *string    `json:"error"`
}

// EscalationState is where a notification's escalation chain stands.
type EscalationState struct {
	Step       int        `json:"step"`
	StepsTotal int        `json:"steps_total"`
	NextStepAt *time.Time `json:"next_step_at"`
}

// Notification is the long form of a notification (CONTRACT section 2).
type Notification struct {
	ID                string            `json:"id"`
	Status            string            `json:"status"`
	RecipientUUID     string            `json:"recipient_uuid"`
	Message           string            `json:"message"`
	Priority          string            `json:"priority"`
	ChannelsPlanned   []string          `json:"channels_planned"`
	EscalationChainID string            `json:"escalation_chain_id"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
	Source            *string           `json:"source"`
	DedupKey          *string           `json:"dedup_key"`
	Link              *string           `json:"link"`
	Service           *string           `json:"service"`
	Environment       *string           `json:"environment"`
	Occurrences       int               `json:"occurrences"`
	AcknowledgedAt    *time.Time        `json:"acknowledged_at"`
	AcknowledgedBy    *string           `json:"acknowledged_by"`
	AcknowledgedVia   *string           `json:"acknowledged_via"`
	AcknowledgedNote  *string           `json:"acknowledged_note"`
	ResolvedAt        *time.Time        `json:"resolved_at"`
	Escalation        EscalationState   `json:"escalation"`
	Attempts          []Attempt         `json:"attempts"`
	Links             map[string]string `json:"links"`
	// Replayed is true when the gateway answered a repeated Idempotency-Key with the first answer.
	Replayed bool `json:"-"`
}

// Send sends an alert to a recipient or group and returns the stored notification.
func (c *Client) Send(ctx context.Context, alert Alert) (*Notification, error) {
	key := alert.IdempotencyKey
	if key == "" {
		key = newID("klaxon-go-")
	}
	headers := http.Header{"Idempotency-Key": {key}, "Prefer": {"return=representation"}}
	var n Notification
	answer, err := c.t.do(ctx, request{method: http.MethodPost, path: "/api/v1/notifications/send", body: alert, headers: headers, policy: idempotent}, &n)
	if err != nil {
		return nil, err
	}
	n.Replayed = answer.Get("Idempotent-Replayed") == "true"
	return &n, nil
}

// Get reads a notification: status, escalation, attempts and acknowledgement.
func (c *Client) Get(ctx context.Context, id string) (*Notification, error) {
	var n Notification
	if _, err := c.t.do(ctx, request{method: http.MethodGet, path: path("api", "v1", "notifications", id), policy: idempotent}, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// AckOptions are optional details of an acknowledgement.
type AckOptions struct {
	// By is who acknowledges; default the API key's name.
	By   string `json:"by,omitempty"`
	Note string `json:"note,omitempty"`
}

// Ack acknowledges a notification, stopping its escalation. Acknowledging
// again returns the first acknowledgement; a resolved one is ErrConflict.
func (c *Client) Ack(ctx context.Context, id string, opts AckOptions) (*Notification, error) {
	var n Notification
	if _, err := c.t.do(ctx, request{method: http.MethodPost, path: path("api", "v1", "notifications", id, "ack"), body: opts, policy: idempotent}, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// Resolve marks a notification resolved (the problem is gone), stopping its escalation.
func (c *Client) Resolve(ctx context.Context, id string) (*Notification, error) {
	var n Notification
	if _, err := c.t.do(ctx, request{method: http.MethodPost, path: path("api", "v1", "notifications", id, "resolve"), policy: idempotent}, &n); err != nil {
		return nil, err
	}
	return &n, nil
}
