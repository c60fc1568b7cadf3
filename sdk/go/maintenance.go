package klaxon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Maintenance statuses, by the gateway's clock.
const (
	MaintenanceUpcoming = "upcoming"
	MaintenanceActive   = "active"
	MaintenanceEnded    = "ended"
)

// Maintenance is a window to start: while it is active, alerts it covers are
// recorded as "suppressed" and nobody is paged. EndsAt and Reason are
// required, and at least one of the lists must name something.
type Maintenance struct {
	// StartsAt defaults to now (the zero time is left out).
	StartsAt time.Time `json:"-"`
	EndsAt   time.Time `json:"-"`
	Reason   string    `json:"reason"`
	// Targets are recipient, group or schedule uuids: alerts sent to them are held.
	Targets []string `json:"targets,omitempty"`
	// Sources are alert sources, compared exactly.
	Sources []string `json:"sources,omitempty"`
	// Integrations are integration ids: every alert coming through them is held.
	Integrations []string `json:"integrations,omitempty"`
	// Heartbeats are heartbeat names: one going down pages only if still down at the end.
	Heartbeats []string `json:"heartbeats,omitempty"`
	// IdempotencyKey defaults to a new key per call (reused by its retries).
	IdempotencyKey string `json:"-"`
}

// MarshalJSON writes the window as the gateway takes it, without a zero StartsAt.
func (m Maintenance) MarshalJSON() ([]byte, error) {
	type plain Maintenance
	body := struct {
		plain
		StartsAt string `json:"starts_at,omitempty"`
		EndsAt   string `json:"ends_at"`
	}{plain: plain(m), EndsAt: m.EndsAt.UTC().Format(time.RFC3339Nano)}
	if !m.StartsAt.IsZero() {
		body.StartsAt = m.StartsAt.UTC().Format(time.RFC3339Nano)
	}
	return json.Marshal(body)
}

// Actor is who did something: Type "api_key" (ID the key's), "dashboard", "system"...
type Actor struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
}

// MaintenanceWindow is a window as the gateway keeps it.
type MaintenanceWindow struct {
	UUID     string    `json:"uuid"`
	StartsAt time.Time `json:"starts_at"`
	// EndsAt moves to the moment the window was ended early.
	EndsAt       time.Time `json:"ends_at"`
	Reason       string    `json:"reason"`
	Targets      []string  `json:"targets"`
	Sources      []string  `json:"sources"`
	Integrations []string  `json:"integrations"`
	Heartbeats   []string  `json:"heartbeats"`
	// Status is MaintenanceUpcoming, MaintenanceActive or MaintenanceEnded.
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy Actor     `json:"created_by"`
	// Raw is the window's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a window and keeps its JSON in Raw.
func (w *MaintenanceWindow) UnmarshalJSON(data []byte) error {
	type plain MaintenanceWindow
	return keepRaw(data, (*plain)(w), &w.Raw)
}

// MaintenanceList is the gateway's list of windows, latest start first.
type MaintenanceList struct {
	Items []MaintenanceWindow `json:"items"`
	// Raw is the list's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a list and keeps its JSON in Raw.
func (l *MaintenanceList) UnmarshalJSON(data []byte) error {
	type plain MaintenanceList
	return keepRaw(data, (*plain)(l), &l.Raw)
}

// StartMaintenance creates a maintenance window (scope recipients:write), with
// one Idempotency-Key for all its attempts so a retry never makes two.
func (c *Client) StartMaintenance(ctx context.Context, m Maintenance) (*MaintenanceWindow, error) {
	key := m.IdempotencyKey
	if key == "" {
		key = newID("klaxon-go-")
	}
	var window MaintenanceWindow
	r := request{method: http.MethodPost, path: "/api/v1/maintenance", body: m, headers: http.Header{"Idempotency-Key": {key}}, policy: idempotent}
	if _, err := c.t.do(ctx, r, &window); err != nil {
		return nil, err
	}
	return &window, nil
}

// EndMaintenance ends an upcoming or active window now; one already ended is ErrConflict.
func (c *Client) EndMaintenance(ctx context.Context, uuid string) (*MaintenanceWindow, error) {
	var window MaintenanceWindow
	if _, err := c.t.do(ctx, request{method: http.MethodPost, path: path("api", "v1", "maintenance", uuid, "end"), policy: idempotent}, &window); err != nil {
		return nil, err
	}
	return &window, nil
}

// GetMaintenance reads one window.
func (c *Client) GetMaintenance(ctx context.Context, uuid string) (*MaintenanceWindow, error) {
	var window MaintenanceWindow
	if _, err := c.t.do(ctx, request{method: http.MethodGet, path: path("api", "v1", "maintenance", uuid), policy: idempotent}, &window); err != nil {
		return nil, err
	}
	return &window, nil
}

// ListMaintenance lists windows, latest start first; status ("" for all) keeps one status.
func (c *Client) ListMaintenance(ctx context.Context, status string) (*MaintenanceList, error) {
	query := url.Values{}
	if status != "" {
		query.Set("status", status)
	}
	var list MaintenanceList
	if _, err := c.t.do(ctx, request{method: http.MethodGet, path: "/api/v1/maintenance", query: query, policy: idempotent}, &list); err != nil {
		return nil, err
	}
	return &list, nil
}
