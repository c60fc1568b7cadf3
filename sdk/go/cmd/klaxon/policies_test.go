package main

import (
	"encoding/json"
	"regexp"
	"testing"
)

func TestPoliciesCreateByNameAndList(t *testing.T) {
	status, lead := gateway.Call("POST", "/api/v1/recipients", map[string]any{"name": "Foreman Kai", "email": "kai@plant.lan"})
	if status != 201 {
		t.Fatalf("recipient: %d %v", status, lead)
	}
	r := klaxonRun(t, withKey(), "", "policies", "create", "--name", "Paint shop", "--level", gateway.Alice+"@10", "--level", "foreman kai", "--repeat", "1", "--json")
	var created struct {
		UUID   string `json:"uuid"`
		Repeat int    `json:"repeat"`
		Levels []struct {
			Targets              []string `json:"targets"`
			EscalateAfterMinutes *int     `json:"escalate_after_minutes"`
		} `json:"levels"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &created) != nil {
		t.Fatalf("create: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if created.Repeat != 1 || len(created.Levels) != 2 || created.Levels[0].Targets[0] != gateway.Alice ||
		*created.Levels[0].EscalateAfterMinutes != 10 || created.Levels[1].Targets[0] != lead["uuid"] || created.Levels[1].EscalateAfterMinutes != nil {
		t.Fatalf("created: %+v", created)
	}
	r = klaxonRun(t, withKey(), "", "policies", "list")
	if r.code != 0 || !regexp.MustCompile(`(?m)^`+created.UUID+` +Paint shop +2 +1$`).MatchString(r.stdout) {
		t.Fatalf("list: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// A policy is a target by name too.
	r = klaxonRun(t, withKey(), "", "send", "--to", "paint shop", "--priority", "high", "booth 2 extraction failed")
	if r.code != 0 {
		t.Fatalf("send to the policy: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "policies", "create", "--name", "Nobody", "--level", "no such target@5")
	if r.code != exitNotFound {
		t.Fatalf("unknown target: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
