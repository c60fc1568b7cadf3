package klaxon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// createSchedule makes a daily rotation of Alice from starts on, with a second
// recipient as the fallback, and returns its uuid and the fallback's.
func createSchedule(t *testing.T, starts time.Time) (schedule, fallback string) {
	t.Helper()
	status, bob := call("POST", "/api/v1/recipients", map[string]any{"name": "Bob", "email": "bob@plant.lan"})
	if status != 201 {
		t.Fatalf("recipient: %d %v", status, bob)
	}
	status, created := call("POST", "/api/v1/schedules", map[string]any{
		"name":     "Press line",
		"timezone": "Europe/Berlin",
		"layers": []any{map[string]any{
			"type": "rotation", "name": "Days", "members": []string{alice},
			"shift_length_days": 1, "starts_at": starts.Format(time.RFC3339),
		}},
		"fallback": bob["uuid"],
	})
	if status != 201 {
		t.Fatalf("schedule: %d %v", status, created)
	}
	return created["uuid"].(string), bob["uuid"].(string)
}

func TestOnCallNowAndAtAnInstant(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	starts := time.Now().Add(-36 * time.Hour).Truncate(time.Hour)
	schedule, fallback := createSchedule(t, starts)

	now, err := c.OnCall(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if len(now.Recipients) != 1 || now.Recipients[0].UUID != alice || now.Shift == nil || now.Fallback != nil {
		t.Fatalf("on call now: %+v", now)
	}
	if now.Shift.Source != "rotation" || *now.Shift.LayerName != "Days" || *now.Shift.Layer != 0 || now.Shift.Target.Kind != "recipient" {
		t.Fatalf("shift: %+v", now.Shift)
	}
	if !now.Shift.StartsAt.Before(time.Now()) || !now.Shift.EndsAt.After(time.Now()) || len(now.Raw) == 0 {
		t.Fatalf("shift span %v-%v", now.Shift.StartsAt, now.Shift.EndsAt)
	}

	// Before the first hand-off nobody is on a shift: the fallback is paged.
	before := starts.Add(-time.Hour)
	gap, err := c.OnCallAt(ctx, schedule, before)
	if err != nil {
		t.Fatal(err)
	}
	if !gap.At.Equal(before) || gap.Shift != nil || gap.Fallback == nil || gap.Fallback.UUID != fallback || gap.Recipients[0].Name != "Bob" {
		t.Fatalf("in the gap: %+v", gap)
	}

	_, err = c.OnCall(ctx, "5b0b5c53-0000-4000-8000-000000000000")
	if !errors.Is(err, klaxon.ErrNotFound) {
		t.Fatalf("unknown schedule: %v", err)
	}
}
