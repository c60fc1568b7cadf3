package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestHeartbeatPingsItsURLWithoutAKey(t *testing.T) {
	url := newPingURL(t, "cli-plc-3")
	r := klaxonRun(t, nil, "", "heartbeat", url)
	if r.code != 0 || !regexp.MustCompile(`^pinged cli-plc-3: up, next ping expected by `+readableTimePattern+`\n$`).MatchString(r.stdout) {
		t.Fatalf("ping: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, withKey(), "", "heartbeat", "ping", "cli-plc-3", "--json")
	var answer map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &answer) != nil || answer["name"] != "cli-plc-3" || answer["status"] != "up" {
		t.Fatalf("ping by name: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, nil, "", "heartbeat", gateway.URL+"/ping/no-heartbeat-has-this-token-xxxxxx")
	if r.code != exitNotFound {
		t.Fatalf("unknown token: %d %q", r.code, r.stderr)
	}
}

func TestHeartbeatAroundASucceedingCommand(t *testing.T) {
	url := newPingURL(t, "cli-nightly-backup")
	r := klaxonRun(t, nil, "", "heartbeat", url, "--", "sh", "-c", "echo backed up; echo note >&2")
	if r.code != 0 || r.stdout != "backed up\n" || r.stderr != "note\n" || heartbeatStatus(t, "cli-nightly-backup") != "up" {
		t.Fatalf("exit %d, stdout %q, stderr %q, status %s", r.code, r.stdout, r.stderr, heartbeatStatus(t, "cli-nightly-backup"))
	}
	// The command runs after /start: it sees the run started (the ping after it ends the run).
	t.Setenv("KLAXON_TEST_PRINT_STATE", gateway.URL+"/api/v1/heartbeats/cli-nightly-backup")
	t.Setenv("KLAXON_TEST_KEY", gateway.AdminKey)
	r = klaxonRun(t, nil, "", "heartbeat", url, "--", os.Args[0])
	if r.code != 0 || r.stdout != "during the run: up, started true\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestHeartbeatAroundAFailingCommandReportsFailAndItsExitCode(t *testing.T) {
	url := newPingURL(t, "cli-etl")
	r := klaxonRun(t, nil, "input\n", "heartbeat", url, "--", "sh", "-c", "read line; echo \"got $line\"; exit 7")
	if r.code != 7 || r.stdout != "got input\n" || r.stderr != "klaxon: the command exited with 7: reported to heartbeat cli-etl (down)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	_, state := gateway.Call("GET", "/api/v1/heartbeats/cli-etl", nil)
	if state["status"] != "down" || state["notification_id"] == nil {
		t.Fatalf("the failure must page: %v", state)
	}

	url = newPingURL(t, "cli-killed-job")
	r = klaxonRun(t, nil, "", "heartbeat", url, "--", "sh", "-c", "kill -TERM $$")
	if r.code != 128+15 || heartbeatStatus(t, "cli-killed-job") != "down" {
		t.Fatalf("a command ended by SIGTERM: %d %q", r.code, r.stderr)
	}

	url = newPingURL(t, "cli-missing-tool")
	r = klaxonRun(t, nil, "", "heartbeat", url, "--", "/nonexistent/backup-tool")
	if r.code != 127 || !strings.Contains(r.stderr, "cannot run /nonexistent/backup-tool") || heartbeatStatus(t, "cli-missing-tool") != "down" {
		t.Fatalf("a command that cannot start: %d %q", r.code, r.stderr)
	}
}

func TestAnUnreachableGatewayNeverStopsTheWrappedCommand(t *testing.T) {
	r := klaxonRun(t, nil, "", "heartbeat", "http://127.0.0.1:9/ping/token", "--retries", "0", "--", "sh", "-c", "echo ran")
	if r.code != 0 || r.stdout != "ran\n" || !strings.Contains(r.stderr, "klaxon: /start not recorded: cannot reach the gateway") || !strings.Contains(r.stderr, "the ping after success was not recorded") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// device is the environment of a device holding only its integration's id and secret.
func device() map[string]string {
	return map[string]string{"KLAXON_INTEGRATION_ID": integration.id, "KLAXON_INTEGRATION_SECRET": integration.secret}
}

func TestFireAndResolveThroughTheSignedIntegration(t *testing.T) {
	r := klaxonRun(t, device(), "", "fire", "tank-3-level", "level below 10 %", "--title", "Tank 3", "--severity", "warning")
	match := regexp.MustCompile(`^fired tank-3-level: created \(notification (notif_\w+)\)\n$`).FindStringSubmatch(r.stdout)
	if r.code != 0 || match == nil {
		t.Fatalf("fire: %d %q %q", r.code, r.stdout, r.stderr)
	}
	_, n := gateway.Call("GET", "/api/v1/notifications/"+match[1], nil)
	if n["message"] != "Tank 3: level below 10 %" || n["priority"] != "medium" || n["source"] != "tank-sensors" {
		t.Fatalf("the alert: %v", n)
	}
	r = klaxonRun(t, device(), "", "fire", "tank-3-level", "still low", "--json")
	var result map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &result) != nil || result["outcome"] != "merged" || result["notification_uuid"] != match[1] {
		t.Fatalf("fire again: %d %q", r.code, r.stdout)
	}
	r = klaxonRun(t, device(), "", "resolve", "tank-3-level")
	if r.code != 0 || r.stdout != "resolved tank-3-level: resolved (notification "+match[1]+")\n" {
		t.Fatalf("resolve: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = klaxonRun(t, device(), "", "resolve", "tank-3-level")
	if r.code != 0 || r.stdout != "resolved tank-3-level: no_open_alert\n" {
		t.Fatalf("resolve again: %d %q", r.code, r.stdout)
	}
}

func TestAWrongIntegrationSecretIsRefusedAndNeverShown(t *testing.T) {
	wrong := "whsec_" + strings.Repeat("QUJD", 11)
	r := klaxonRun(t, nil, "", "fire", "x", "y", "--integration", integration.id, "--secret", wrong)
	if r.code != exitAuth || !strings.HasPrefix(r.stderr, "error: 401 ") || strings.Contains(r.stdout+r.stderr, wrong) {
		t.Fatalf("wrong secret: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, map[string]string{"KLAXON_INTEGRATION_ID": integration.id}, "", "fire", "x", "y")
	if r.code != exitAuth || !strings.Contains(r.stderr, "no integration secret") {
		t.Fatalf("no secret: %d %q", r.code, r.stderr)
	}
	r = klaxonRun(t, device(), "", "fire", "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "give a message or --title") {
		t.Fatalf("nothing to say: %d %q", r.code, r.stderr)
	}
}
