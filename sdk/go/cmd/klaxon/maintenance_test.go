package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMaintenanceStartListAndEnd(t *testing.T) {
	r := klaxonRun(t, withKey(), "", "maintenance", "start", "--for", "2h", "--reason", "press 7 relined", "--target", gateway.Alice, "--source", "plc-7", "--source", "plc-8")
	match := regexp.MustCompile(`^maintenance  (\S+)\nstatus       active\nfrom         ` + readableTimePattern + `\nuntil        ` + readableTimePattern + `\nreason       press 7 relined\nholds        targets: ` + gateway.Alice + `; sources: plc-7, plc-8\n$`).FindStringSubmatch(r.stdout)
	if r.code != 0 || match == nil {
		t.Fatalf("start: %d %q %q", r.code, r.stdout, r.stderr)
	}
	uuid := match[1]

	// While it is active, a send to Alice is held: suppressed, and listed so.
	r = klaxonRun(t, withKey(), "", "send", "--to", gateway.Alice, "--priority", "high", "press 7 pressure low")
	if r.code != 0 || !strings.Contains(r.stdout, "status            suppressed") {
		t.Fatalf("send during maintenance: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "list", "--status", "suppressed", "--to", gateway.Alice)
	if r.code != 0 || !strings.Contains(r.stdout, "press 7 pressure low") {
		t.Fatalf("list suppressed: %d %q %q", r.code, r.stdout, r.stderr)
	}

	r = klaxonRun(t, withKey(), "", "maintenance", "list", "--status", "active")
	if r.code != 0 || !regexp.MustCompile(`(?m)^UUID +STATUS +FROM +UNTIL +REASON\n`+uuid+` +active +`+readableTimePattern+` +`+readableTimePattern+` +press 7 relined$`).MatchString(r.stdout) {
		t.Fatalf("list: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "maintenance", "end", uuid, "--json")
	var ended map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ended) != nil || ended["status"] != "ended" || ended["uuid"] != uuid {
		t.Fatalf("end: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Ending it again is the gateway's "no": exit 1.
	r = klaxonRun(t, withKey(), "", "maintenance", "end", uuid)
	if r.code != exitFailed || !strings.HasPrefix(r.stderr, "error: 409 ") {
		t.Fatalf("end twice: %d %q", r.code, r.stderr)
	}
}

func TestMaintenancePlannedWithFromAndUntil(t *testing.T) {
	starts := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	r := klaxonRun(t, withKey(), "", "maintenance", "start", "--from", starts.Format(time.RFC3339), "--until", starts.Add(3*time.Hour).Format(time.RFC3339), "--reason", "annual shutdown", "--source", "line-3", "--json")
	var window map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &window) != nil || window["status"] != "upcoming" || window["starts_at"] != starts.Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("planned: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestMaintenanceMistakesExitWith2(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		message string
	}{
		{[]string{"maintenance", "start", "--for", "2h", "--source", "x"}, "--reason is required"},
		{[]string{"maintenance", "start", "--reason", "r", "--source", "x"}, "give one of --for or --until"},
		{[]string{"maintenance", "start", "--reason", "r", "--for", "2h", "--until", "2026-11-26T18:00:00Z"}, "give one of --for or --until"},
		{[]string{"maintenance", "start", "--reason", "r", "--for", "two hours"}, `--for must be a duration such as 2h, 90m or 1h30m, got "two hours"`},
		{[]string{"maintenance", "start", "--reason", "r", "--until", "18:00"}, "--until must be an ISO 8601 time with a zone"},
		{[]string{"maintenance", "list", "--status", "over"}, "--status must be one of upcoming, active, ended"},
		{[]string{"maintenance", "end"}, "missing argument: klaxon maintenance end <uuid>"},
	} {
		r := klaxonRun(t, withKey(), "", tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "error: "+tc.message) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
	}
	// A window that names nothing is refused by the gateway: exit 2 with its pointer.
	r := klaxonRun(t, withKey(), "", "maintenance", "start", "--reason", "r", "--for", "1h")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "error: 400 ") {
		t.Errorf("nothing named: %d %q", r.code, r.stderr)
	}
}
