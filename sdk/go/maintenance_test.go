package klaxon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

func TestMaintenanceStartHoldsAlertsAndEnds(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	ends := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	window, err := c.StartMaintenance(ctx, klaxon.Maintenance{EndsAt: ends, Reason: "press 7 relined", Targets: []string{alice}, Sources: []string{"plc-7"}})
	if err != nil {
		t.Fatal(err)
	}
	if window.Status != klaxon.MaintenanceActive || !window.EndsAt.Equal(ends) || window.Reason != "press 7 relined" ||
		len(window.Targets) != 1 || window.Targets[0] != alice || window.Sources[0] != "plc-7" || window.CreatedBy.Type == "" || len(window.Raw) == 0 {
		t.Fatalf("started: %+v", window)
	}

	// Meanwhile an alert to Alice is recorded and pages nobody.
	n, err := c.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "press 7 pressure low", Priority: klaxon.PriorityHigh})
	if err != nil || n.Status != "suppressed" {
		t.Fatalf("send during maintenance: %v %+v", err, n)
	}

	active, err := c.ListMaintenance(ctx, klaxon.MaintenanceActive)
	if err != nil || len(active.Items) != 1 || active.Items[0].UUID != window.UUID {
		t.Fatalf("active: %v %+v", err, active)
	}
	ended, err := c.EndMaintenance(ctx, window.UUID)
	if err != nil || ended.Status != klaxon.MaintenanceEnded || !ended.EndsAt.Before(ends) {
		t.Fatalf("ended: %v %+v", err, ended)
	}
	read, err := c.GetMaintenance(ctx, window.UUID)
	if err != nil || read.Status != klaxon.MaintenanceEnded {
		t.Fatalf("read: %v %+v", err, read)
	}
	if _, err := c.EndMaintenance(ctx, window.UUID); !errors.Is(err, klaxon.ErrConflict) {
		t.Fatalf("ending twice: %v", err)
	}
	after, err := c.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "press 7 pressure low again", Priority: klaxon.PriorityHigh})
	if err != nil || after.Status == "suppressed" {
		t.Fatalf("send after maintenance: %v %+v", err, after)
	}
}

func TestMaintenanceStartsLaterAndRefusesAWindowWithoutAnything(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, gatewayURL)
	starts := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	later, err := c.StartMaintenance(ctx, klaxon.Maintenance{StartsAt: starts, EndsAt: starts.Add(time.Hour), Reason: "annual shutdown", Sources: []string{"line-3"}})
	if err != nil || later.Status != klaxon.MaintenanceUpcoming || !later.StartsAt.Equal(starts) {
		t.Fatalf("upcoming: %v %+v", err, later)
	}
	upcoming, err := c.ListMaintenance(ctx, klaxon.MaintenanceUpcoming)
	if err != nil || len(upcoming.Items) == 0 || upcoming.Items[0].UUID != later.UUID {
		t.Fatalf("upcoming list: %v %+v", err, upcoming)
	}
	_, err = c.StartMaintenance(ctx, klaxon.Maintenance{EndsAt: starts, Reason: "nothing named"})
	if !errors.Is(err, klaxon.ErrInvalid) {
		t.Fatalf("nothing named: %v", err)
	}
}
