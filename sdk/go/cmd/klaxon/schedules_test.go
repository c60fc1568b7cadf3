package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// crewSchedule makes a 3-shift pattern with one crew (Alice) on every shift
// from yesterday on, and Bob as the fallback; it returns the schedule's uuid
// and the day the pattern starts.
func crewSchedule(t *testing.T) (string, time.Time) {
	t.Helper()
	status, bob := gateway.Call("POST", "/api/v1/recipients", map[string]any{"name": "Bob", "email": "bob@plant.lan"})
	if status != 201 {
		t.Fatalf("recipient: %d %v", status, bob)
	}
	day := time.Now().UTC().AddDate(0, 0, -1)
	startsOn := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	status, schedule := gateway.Call("POST", "/api/v1/schedules", map[string]any{
		"name":     "Maintenance on-call",
		"timezone": "UTC",
		"layers": []any{map[string]any{
			"type":      "shift_pattern",
			"name":      "Crews",
			"shifts":    []any{map[string]string{"name": "early", "starts": "06:00"}, map[string]string{"name": "late", "starts": "14:00"}, map[string]string{"name": "night", "starts": "22:00"}},
			"crews":     []any{map[string]string{"name": "A", "target": gateway.Alice}},
			"cycle":     [][]string{{"A", "A", "A"}},
			"starts_on": startsOn.Format("2006-01-02"),
		}},
		"fallback": bob["uuid"],
	})
	if status != 201 {
		t.Fatalf("schedule: %d %v", status, schedule)
	}
	return schedule["uuid"].(string), startsOn
}

func TestOnCallSaysWhoAndWhy(t *testing.T) {
	schedule, startsOn := crewSchedule(t)
	// By name, as people know it (issue 33); case and blanks as typed.
	r := klaxonRun(t, withKey(), "", "oncall", "maintenance  On-Call")
	if r.code != 0 || !regexp.MustCompile(`^on call  Alice\npaged    Alice \(recipient\)\nshift    (early|late|night), crew A, Crews\nfrom     \d+ \w+ \d{4}, \d\d:00:00 UTC\nuntil    \d+ \w+ \d{4}, \d\d:00:00 UTC\n$`).MatchString(r.stdout) {
		t.Fatalf("oncall: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// Before the pattern's first shift it is a gap: the fallback is named.
	r = klaxonRun(t, withKey(), "", "oncall", schedule, "--at", startsOn.Add(3*time.Hour).Format(time.RFC3339))
	if r.code != 0 || !strings.Contains(r.stdout, "on call  Bob\nshift    none: a gap, the fallback Bob is paged\n") {
		t.Fatalf("oncall in a gap: %d %q %q", r.code, r.stdout, r.stderr)
	}

	at := startsOn.Add(23 * time.Hour).Format("2006-01-02T15:04:05+00:00")
	r = klaxonRun(t, withKey(), "", "oncall", schedule, "--at", at, "--json")
	var answer struct {
		At    string `json:"at"`
		Shift struct {
			ShiftName string `json:"shift_name"`
			StartsAt  string `json:"starts_at"`
		} `json:"shift"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &answer) != nil || answer.Shift.ShiftName != "night" || answer.Shift.StartsAt != startsOn.Add(22*time.Hour).Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("oncall --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestOnCallTellsTheShiftInTheSchedulesZone(t *testing.T) {
	rotation := map[string]any{"type": "rotation", "members": []string{gateway.Alice}, "starts_at": "2026-01-05T06:00:00Z", "shift_length_hours": 12}
	status, schedule := gateway.Call("POST", "/api/v1/schedules", map[string]any{
		"name": "Boiler house", "timezone": "Europe/Berlin", "layers": []any{rotation}, "fallback": gateway.Alice,
	})
	if status != 201 {
		t.Fatalf("schedule: %d %v", status, schedule)
	}
	// Shifts start at 06:00 and 18:00 UTC: 07:00 and 19:00 in Berlin (08:00 and 20:00 in summer), named (issue 33).
	r := klaxonRun(t, withKey(), "", "oncall", "Boiler house")
	local := `\d+ \w+ \d{4}, (07|08|19|20):00:00 CES?T`
	if r.code != 0 || !regexp.MustCompile(`\nfrom     `+local+`\nuntil    `+local+`\n$`).MatchString(r.stdout) {
		t.Fatalf("oncall: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "oncall", "Boiler house", "--json")
	if r.code != 0 || !regexp.MustCompile(`"starts_at": ?"\d{4}-\d\d-\d\dT(06|18):00:00\.000Z"`).MatchString(r.stdout) {
		t.Fatalf("oncall --json: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestOnCallMistakesMapToTheirExitCodes(t *testing.T) {
	r := klaxonRun(t, withKey(), "", "oncall", "5b0b5c53-0000-4000-8000-000000000000")
	if r.code != exitNotFound || !strings.HasPrefix(r.stderr, "error: 404 ") {
		t.Fatalf("unknown schedule: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "oncall", "5b0b5c53-0000-4000-8000-000000000000", "--at", "tomorrow")
	if r.code != exitUsage || !strings.Contains(r.stderr, "error: --at must be an ISO 8601 time with a zone") {
		t.Fatalf("bad --at: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "oncall")
	if r.code != exitUsage || !strings.Contains(r.stderr, "missing argument: klaxon oncall <schedule> [flags]") {
		t.Fatalf("no schedule: %d %q", r.code, r.stderr)
	}
}

func TestATargetNameTwoShareIsRefusedListingBoth(t *testing.T) {
	_, schedule := gateway.Call("POST", "/api/v1/schedules", map[string]any{
		"name": "Press hall", "timezone": "Europe/Berlin", "fallback": gateway.Alice,
		"layers": []any{map[string]any{"type": "rotation", "members": []string{gateway.Alice}, "starts_at": "2026-01-05T06:00:00Z", "shift_length_hours": 12}},
	})
	r := klaxonRun(t, withKey(), "", "send", "--to", "Press hall", "--priority", "high", "--json", "belt 4 stopped")
	var receipt struct {
		UUID string `json:"notification_uuid"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &receipt) != nil {
		t.Fatalf("send by name: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if _, sent := gateway.Call("GET", "/api/v1/notifications/"+receipt.UUID, nil); sent["recipient_uuid"] != schedule["uuid"] {
		t.Fatalf("sent to %v, not the schedule %v", sent["recipient_uuid"], schedule["uuid"])
	}
	_, group := gateway.Call("POST", "/api/v1/groups", map[string]any{"name": "Press hall", "members": []string{gateway.Alice}})
	r = klaxonRun(t, withKey(), "", "oncall", "Press hall")
	if r.code != exitFailed || !strings.Contains(r.stderr, `schedule "Press hall" (`+schedule["uuid"].(string)+`)`) || !strings.Contains(r.stderr, `group "Press hall" (`+group["uuid"].(string)+`)`) {
		t.Fatalf("ambiguous name: %d %q", r.code, r.stderr)
	}
}
