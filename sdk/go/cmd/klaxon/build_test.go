package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The release binaries, built once by sdk/go/build-cli.sh (as a release is) into a temp dir.
var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
	buildLog  []byte
)

const (
	testVersion = "9.8.7-test"
	testCommit  = "0123456789ab"
	// maxBinaryBytes is the limit: every device binary under 10 MB.
	maxBinaryBytes = 10 * 1000 * 1000
)

var deviceBinaries = []string{"klaxon-linux-amd64", "klaxon-linux-arm64", "klaxon-linux-arm", "klaxon-windows-amd64.exe", "klaxon-darwin-arm64"}

func builtBinaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "klaxon-device-cli-")
		if err != nil {
			buildErr = err
			return
		}
		builtDir = dir
		build := exec.Command("bash", filepath.Join("..", "..", "build-cli.sh"), dir)
		build.Env = append(os.Environ(), "KLAXON_VERSION="+testVersion, "KLAXON_COMMIT="+testCommit)
		buildLog, buildErr = build.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build-cli.sh: %v\n%s", buildErr, buildLog)
	}
	return builtDir
}

func TestEveryDeviceBinaryIsBuiltAndUnder10MB(t *testing.T) {
	dir := builtBinaries(t)
	for _, name := range deviceBinaries {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s was not built: %v", name, err)
			continue
		}
		if info.Size() > maxBinaryBytes {
			t.Errorf("%s is %d bytes, over 10 MB", name, info.Size())
		}
		t.Logf("%s: %.1f MB", name, float64(info.Size())/1e6)
	}
	page, err := os.ReadFile(filepath.Join(dir, "klaxon.1"))
	if err != nil || string(page) != manPage() {
		t.Errorf("the man page beside the binaries: %v", err)
	}
}

// device runs a built binary (under an emulator when one is given) with only the given environment.
func runBinary(t *testing.T, emulator []string, binary string, env []string, stdin string, args ...string) result {
	t.Helper()
	line := append(append(append([]string{}, emulator...), binary), args...)
	cmd := exec.Command(line[0], line[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("%v: %v", line, err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func keyEnv() []string {
	return []string{"KLAXON_URL=" + gateway.URL, "KLAXON_API_KEY=" + gateway.AdminKey}
}

func TestTheLinuxAmd64BinaryAgainstTheGateway(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("this machine is %s/%s: the linux/amd64 binary cannot run here", runtime.GOOS, runtime.GOARCH)
	}
	binary := filepath.Join(builtBinaries(t), "klaxon-linux-amd64")
	r := runBinary(t, nil, binary, nil, "", "--version")
	if r.code != 0 || r.stdout != "klaxon "+testVersion+" (commit "+testCommit+", linux/amd64)\n" {
		t.Fatalf("--version: %d %q", r.code, r.stdout)
	}
	r = runBinary(t, nil, binary, keyEnv(), "compressor 2 stopped\n", "send", "--to", gateway.Alice, "--priority", "high", "--json", "-")
	var receipt map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &receipt) != nil || receipt["status"] != "queued" {
		t.Fatalf("send: %d %q %q", r.code, r.stdout, r.stderr)
	}
	id := receipt["notification_uuid"].(string)
	for _, step := range [][]string{{"get", id}, {"list", "--limit", "5"}, {"ack", id, "--by", "maria"}, {"resolve", id}} {
		if r = runBinary(t, nil, binary, keyEnv(), "", step...); r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Fatalf("%v: %d %q %q", step, r.code, r.stdout, r.stderr)
		}
	}
	if _, n := gateway.Call("GET", "/api/v1/notifications/"+id, nil); n["status"] != "resolved" || n["acknowledged_by"] != "maria" || n["message"] != "compressor 2 stopped" {
		t.Fatalf("stored: %v", n)
	}
	for code, args := range map[int][]string{
		exitNotFound:    {"get", "notif_00000000000000000000000000"},
		exitUsage:       {"send", "--priority", "loud", "x"},
		exitFailed:      {"ack", id},
		exitUnavailable: {"list", "--url", "http://127.0.0.1:9", "--retries", "0"},
	} {
		if r = runBinary(t, nil, binary, keyEnv(), "", args...); r.code != code {
			t.Errorf("%v: exit %d, want %d (%q)", args, r.code, code, r.stderr)
		}
	}
	if r = runBinary(t, nil, binary, nil, "", "list"); r.code != exitAuth {
		t.Errorf("no key: exit %d", r.code)
	}
	url := newPingURL(t, "amd64-cron-job")
	r = runBinary(t, nil, binary, nil, "", "heartbeat", url, "--", "sh", "-c", "echo working; exit 4")
	if r.code != 4 || r.stdout != "working\n" || heartbeatStatus(t, "amd64-cron-job") != "down" {
		t.Fatalf("heartbeat around a failing job: %d %q %q", r.code, r.stdout, r.stderr)
	}
	device := []string{"KLAXON_URL=" + gateway.URL, "KLAXON_INTEGRATION_ID=" + integration.id, "KLAXON_INTEGRATION_SECRET=" + integration.secret}
	if r = runBinary(t, nil, binary, device, "", "fire", "amd64-door", "door open", "--severity", "critical"); r.code != 0 || !strings.HasPrefix(r.stdout, "fired amd64-door: created") {
		t.Fatalf("fire: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r = runBinary(t, nil, binary, device, "", "resolve", "amd64-door"); r.code != 0 || !strings.HasPrefix(r.stdout, "resolved amd64-door: resolved") {
		t.Fatalf("resolve through the integration: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// qemuAarch64 is Debian's qemu-user-static (or qemu-user) emulator, run directly: no binfmt needed.
func qemuAarch64() string {
	for _, name := range []string{"qemu-aarch64-static", "qemu-aarch64"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

func TestTheLinuxArm64BinarySendsUnderQemu(t *testing.T) {
	qemu := qemuAarch64()
	if qemu == "" {
		t.Skip("qemu-aarch64 is not installed (Debian: apt-get install qemu-user-static): the arm64 binary was built but not run")
	}
	binary := filepath.Join(builtBinaries(t), "klaxon-linux-arm64")
	r := runBinary(t, []string{qemu}, binary, nil, "", "--version")
	if r.code != 0 || r.stdout != "klaxon "+testVersion+" (commit "+testCommit+", linux/arm64)\n" {
		t.Fatalf("--version under qemu: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, []string{qemu}, binary, keyEnv(), "", "send", "--to", gateway.Alice, "--priority", "critical", "--source", "pi-4", "--json", "sent from arm64")
	var receipt map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &receipt) != nil {
		t.Fatalf("send under qemu: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if _, n := gateway.Call("GET", "/api/v1/notifications/"+receipt["notification_uuid"].(string), nil); n["message"] != "sent from arm64" || n["source"] != "pi-4" {
		t.Fatalf("stored: %v", n)
	}
}

func TestAStoppedKlaxonStopsTheWrappedCommandAndReportsIt(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("this machine is %s/%s: the linux/amd64 binary cannot run here", runtime.GOOS, runtime.GOARCH)
	}
	url := newPingURL(t, "amd64-stopped-job")
	cmd := exec.Command(filepath.Join(builtBinaries(t), "klaxon-linux-amd64"), "heartbeat", url, "--", "sleep", "300")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The run has started once the gateway holds its /start; then systemd (say) stops klaxon.
	for polls := 0; ; polls++ {
		_, state := gateway.Call("GET", "/api/v1/heartbeats/amd64-stopped-job", nil)
		if state["last_start_at"] != nil {
			break
		}
		if polls == 1200 {
			_ = cmd.Process.Kill()
			t.Fatal("klaxon never sent /start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+15 || heartbeatStatus(t, "amd64-stopped-job") != "down" {
		t.Fatalf("exit %d, status %s: sleep must have been stopped and /fail sent", code, heartbeatStatus(t, "amd64-stopped-job"))
	}
}
