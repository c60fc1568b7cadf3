package klaxon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
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
	// Detail is the channel's answer ("accepted by the SMTP server: 250 OK") or why the attempt did not reach the person.
	Detail *string `json:"detail"`
	// Error is Detail only when the attempt did not reach the person.
	//
	// Deprecated: read Detail; the gateway drops this field in 0.3.0.
	Error *string `json:"error"`
}

// EscalationState is where a notification's escalation chain stands.
type EscalationState struct {
	Step       int        `json:"step"`
	StepsTotal int        `json:"steps_total"`
	NextStepAt *time.Time `json:"next_step_at"`
	// WaitingFor says why an alert is not paging now (no channel can reach anyone), in words.
	WaitingFor []WaitingReason `json:"waiting_for"`
}

// WaitingReason is one reason an alert waits: a channel that cannot be used, or none in the plan.
type WaitingReason struct {
	Channel *string `json:"channel"`
	Reason  string  `json:"reason"`
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
	// Raw is the notification's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// Receipt is the gateway's short answer to a send (202): accepted, and what it plans.
type Receipt struct {
	Status            string   `json:"status"`
	NotificationUUID  string   `json:"notification_uuid"`
	ChannelsPlanned   []string `json:"channels_planned"`
	EscalationChainID string   `json:"escalation_chain_id"`
	// Replayed is true when the gateway answered a repeated Idempotency-Key with the first answer.
	Replayed bool `json:"-"`
	// Raw is the receipt's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// Send sends an alert to a recipient or group and returns the stored notification.
func (c *Client) Send(ctx context.Context, alert Alert) (*Notification, error) {
	var n Notification
	replayed, err := c.send(ctx, alert, http.Header{"Prefer": {"return=representation"}}, &n)
	if err != nil {
		return nil, err
	}
	n.Replayed = replayed
	return &n, nil
}

// Submit sends an alert like Send but takes the gateway's short answer, a
// Receipt, instead of the stored notification: all a device that only raises
// alerts needs, and what the klaxon CLI prints.
func (c *Client) Submit(ctx context.Context, alert Alert) (*Receipt, error) {
	var r Receipt
	replayed, err := c.send(ctx, alert, http.Header{}, &r)
	if err != nil {
		return nil, err
	}
	r.Replayed = replayed
	return &r, nil
}

// send posts the alert with one Idempotency-Key for all its attempts and says whether the answer was replayed.
func (c *Client) send(ctx context.Context, alert Alert, headers http.Header, out any) (bool, error) {
	key := alert.IdempotencyKey
	if key == "" {
		key = newID("klaxon-go-")
	}
	headers.Set("Idempotency-Key", key)
	answer, err := c.t.do(ctx, request{method: http.MethodPost, path: "/api/v1/notifications/send", body: alert, headers: headers, policy: idempotent}, out)
	if err != nil {
		return false, err
	}
	return answer.Get("Idempotent-Replayed") == "true", nil
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

// NotificationFilter narrows ListNotifications; empty fields do not filter.
type NotificationFilter struct {
	// Status is queued, notifying, acknowledged, resolved, exhausted or suppressed (held by a maintenance window).
	Status string
	// RecipientUUID keeps those sent to this recipient or group.
	RecipientUUID string
	Priority      string
	// Limit is the page size, 1 to 200; 0 takes the gateway's default (50).
	Limit int
	// Cursor continues from a page's NextCursor.
	Cursor string
}

// NotificationPage is one page of notifications, newest first.
type NotificationPage struct {
	Items []Notification `json:"items"`
	// NextCursor continues the list (NotificationFilter.Cursor); empty on the last page.
	NextCursor string `json:"next_cursor"`
}

// ListNotifications reads one page of notifications, newest first.
func (c *Client) ListNotifications(ctx context.Context, filter NotificationFilter) (*NotificationPage, error) {
	query := url.Values{}
	for name, value := range map[string]string{"status": filter.Status, "recipient_uuid": filter.RecipientUUID, "priority": filter.Priority, "cursor": filter.Cursor} {
		if value != "" {
			query.Set(name, value)
		}
	}
	if filter.Limit != 0 {
		query.Set("limit", strconv.Itoa(filter.Limit))
	}
	var page NotificationPage
	if _, err := c.t.do(ctx, request{method: http.MethodGet, path: "/api/v1/notifications", query: query, policy: idempotent}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}
