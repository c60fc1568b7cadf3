package klaxon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Person is a recipient named in an answer: who is on call.
type Person struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

// ShiftTarget is the recipient or group a shift (or a gap's fallback) pages.
type ShiftTarget struct {
	UUID string `json:"uuid"`
	// Kind is "recipient" or "group".
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Shift is a final shift of a schedule, after overrides.
type Shift struct {
	StartsAt time.Time   `json:"starts_at"`
	EndsAt   time.Time   `json:"ends_at"`
	Target   ShiftTarget `json:"target"`
	// Recipients are the people the target pages (a group's members).
	Recipients []Person `json:"recipients"`
	// Source is "rotation", "shift_pattern" or "override".
	Source string `json:"source"`
	// Layer is the index of the layer; nil for an override.
	Layer      *int    `json:"layer"`
	LayerName  *string `json:"layer_name"`
	ShiftName  *string `json:"shift_name"`
	Crew       *string `json:"crew"`
	OverrideID *string `json:"override_id"`
}

// OnCall says who a schedule pages at an instant, and why.
type OnCall struct {
	At time.Time `json:"at"`
	// Recipients are who is paged: the shift's people, or in a gap the fallback's.
	Recipients []Person `json:"recipients"`
	// Shift is the final shift holding At; nil in a gap.
	Shift *Shift `json:"shift"`
	// Fallback is, in a gap, the target paged instead; nil otherwise.
	Fallback *ShiftTarget `json:"fallback"`
	// Raw is the answer's JSON as the gateway sent it.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an on-call answer and keeps its JSON in Raw.
func (o *OnCall) UnmarshalJSON(data []byte) error {
	type plain OnCall
	return keepRaw(data, (*plain)(o), &o.Raw)
}

// Schedule is an on-call schedule as a client reads it: its name, and the zone its shifts are read in.
type Schedule struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
	// Timezone is the IANA zone the schedule's shifts are read in (and told in).
	Timezone string `json:"timezone"`
}

// Schedule reads a schedule (scope recipients:read).
func (c *Client) Schedule(ctx context.Context, scheduleUUID string) (*Schedule, error) {
	var answer Schedule
	r := request{method: http.MethodGet, path: path("api", "v1", "schedules", scheduleUUID), policy: idempotent}
	if _, err := c.t.do(ctx, r, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}

// OnCall says who the schedule pages now (scope recipients:read).
func (c *Client) OnCall(ctx context.Context, scheduleUUID string) (*OnCall, error) {
	return c.onCall(ctx, scheduleUUID, nil)
}

// OnCallAt says who the schedule pages at an instant, past or future.
func (c *Client) OnCallAt(ctx context.Context, scheduleUUID string, at time.Time) (*OnCall, error) {
	return c.onCall(ctx, scheduleUUID, url.Values{"at": {at.UTC().Format(time.RFC3339Nano)}})
}

func (c *Client) onCall(ctx context.Context, scheduleUUID string, query url.Values) (*OnCall, error) {
	var answer OnCall
	r := request{method: http.MethodGet, path: path("api", "v1", "schedules", scheduleUUID, "on-call"), query: query, policy: idempotent}
	if _, err := c.t.do(ctx, r, &answer); err != nil {
		return nil, err
	}
	return &answer, nil
}
