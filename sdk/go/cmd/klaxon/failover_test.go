package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/klaxon/klaxon-go/internal/testgateway"
)

// losingBox passes each request to the gateway and drops the connection instead of answering:
// a box that stored the send before its answer was lost.
func losingBox(t *testing.T) string {
	upstream, _ := url.Parse(gateway.URL)
	forward := httputil.NewSingleHostReverseProxy(upstream)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forward.ServeHTTP(httptest.NewRecorder(), r)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(server.Close)
	return server.URL
}

func sendThrough(t *testing.T, message string, urlArgs ...string) result {
	t.Helper()
	env := withKey()
	env["KLAXON_URL"] = ""
	args := append([]string{"send", "--to", gateway.Alice, "--priority", "high", "--retries", "0", message}, urlArgs...)
	return klaxonRun(t, env, "", args...)
}

func TestKlaxonURLListsBothBoxesAndTheStandbyIsPassed(t *testing.T) {
	env := withKey()
	env["KLAXON_URL"] = standby.URL + ", " + gateway.URL
	r := klaxonRun(t, env, "", "send", "--to", gateway.Alice, "--priority", "high", "--retries", "0", "cli pair: standby first")
	if r.code != 0 || gateway.Landed("cli pair: standby first") != 1 {
		t.Fatalf("exit %d, landed %d, stderr %q", r.code, gateway.Landed("cli pair: standby first"), r.stderr)
	}
}

func TestRepeatedURLFlagsPassABoxThatIsDown(t *testing.T) {
	r := sendThrough(t, "cli pair: first box down", "--url", testgateway.DeadURL(t), "--url", gateway.URL)
	if r.code != 0 || gateway.Landed("cli pair: first box down") != 1 {
		t.Fatalf("exit %d, landed %d, stderr %q", r.code, gateway.Landed("cli pair: first box down"), r.stderr)
	}
}

func TestASendWhoseAnswerWasLostLandsOnceThroughTheOtherBox(t *testing.T) {
	r := sendThrough(t, "cli pair: answer lost", "--url", losingBox(t), "--url", gateway.URL)
	if r.code != 0 || !strings.Contains(r.stdout, "replayed") || gateway.Landed("cli pair: answer lost") != 1 {
		t.Fatalf("exit %d, landed %d, stdout %q, stderr %q", r.code, gateway.Landed("cli pair: answer lost"), r.stdout, r.stderr)
	}
}

func TestTheStandbysLinkToAnUnlistedBoxIsNotFollowed(t *testing.T) {
	r := sendThrough(t, "cli pair: unlisted active", "--url", standby.URL)
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "503") || gateway.Landed("cli pair: unlisted active") != 0 {
		t.Fatalf("exit %d, landed %d, stderr %q", r.code, gateway.Landed("cli pair: unlisted active"), r.stderr)
	}
}
