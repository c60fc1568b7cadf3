package klaxon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// PolicyLevel is one level of an escalation policy: the recipients, groups and
// schedules it pages when it starts, and the minutes until the next level
// (nil on the last level: its people's own chains run to their end).
type PolicyLevel struct {
	Targets              []string `json:"targets"`
	EscalateAfterMinutes *int     `json:"escalate_after_minutes"`
}

// NewPolicy is an escalation policy to create: ordered levels, and how many
// more times the whole policy runs while nobody acknowledges.
type NewPolicy struct {
	Name   string        `json:"name"`
	Repeat int           `json:"repeat"`
	Levels []PolicyLevel `json:"levels"`
	// IdempotencyKey defaults to a new key per call (reused by its retries).
	IdempotencyKey string `json:"-"`
}

// EscalationPolicy is a policy as the gateway keeps it; its UUID is a send
// target like a recipient's.
type EscalationPolicy struct {
	UUID      string        `json:"uuid"`
	Name      string        `json:"name"`
	Repeat    int           `json:"repeat"`
	Levels    []PolicyLevel `json:"levels"`
	CreatedAt string        `json:"created_at"`
	UpdatedAt string        `json:"updated_at"`
	// Raw is the policy's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a policy and keeps its JSON in Raw.
func (p *EscalationPolicy) UnmarshalJSON(data []byte) error {
	type plain EscalationPolicy
	return keepRaw(data, (*plain)(p), &p.Raw)
}

// PolicyPage is one page of escalation policies; NextCursor is nil on the last.
type PolicyPage struct {
	Items      []EscalationPolicy `json:"items"`
	NextCursor *string            `json:"next_cursor"`
}

// CreateEscalationPolicy creates a policy (scope recipients:write), with one
// Idempotency-Key for all its attempts so a retry never makes two. A target no
// recipient, group or schedule has, or a policy, is a 422 *Error.
func (c *Client) CreateEscalationPolicy(ctx context.Context, p NewPolicy) (*EscalationPolicy, error) {
	key := p.IdempotencyKey
	if key == "" {
		key = newID("klaxon-go-")
	}
	var policy EscalationPolicy
	r := request{method: http.MethodPost, path: "/api/v1/escalation-policies", body: p, headers: http.Header{"Idempotency-Key": {key}}, policy: idempotent}
	if _, err := c.t.do(ctx, r, &policy); err != nil {
		return nil, err
	}
	return &policy, nil
}

// ListEscalationPolicies reads one page of policies (scope recipients:read);
// an empty cursor starts at the first.
func (c *Client) ListEscalationPolicies(ctx context.Context, cursor string) (*PolicyPage, error) {
	query := url.Values{"limit": {"200"}}
	if cursor != "" {
		query.Set("cursor", cursor)
	}
	var page PolicyPage
	if _, err := c.t.do(ctx, request{method: http.MethodGet, path: "/api/v1/escalation-policies", query: query, policy: idempotent}, &page); err != nil {
		return nil, err
	}
	return &page, nil
}
