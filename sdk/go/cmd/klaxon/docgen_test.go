package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// manPath is the man page kept in the repository; UPDATE_MAN_PAGE=1 go test rewrites it.
var manPath = filepath.Join("..", "..", "..", "..", "docs", "klaxon.1")

func TestTheManPageInTheRepositoryIsCurrent(t *testing.T) {
	page := manPage()
	if os.Getenv("UPDATE_MAN_PAGE") == "1" {
		if err := os.WriteFile(manPath, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := os.ReadFile(manPath)
	if err != nil || string(kept) != page {
		t.Fatalf("docs/klaxon.1 differs from `klaxon man`: run UPDATE_MAN_PAGE=1 go test ./cmd/klaxon (%v)", err)
	}
	for _, c := range visibleCommands() {
		if !strings.Contains(page, ".SS "+roff(synopsis(c))) {
			t.Errorf("the man page lacks %q", synopsis(c))
		}
	}
}

func TestTheManPageRendersWithoutWarnings(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the man page was not rendered")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(manPage())
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("groff: %v %s", err, out)
	}
}

// complete runs the bash completion for a command line ending in the word being typed.
func complete(t *testing.T, bash, line string) []string {
	t.Helper()
	words := strings.Split(line, " ")
	script := bashCompletion() + "\nCOMP_WORDS=(" + line + ")\n"
	if strings.HasSuffix(line, " ") {
		script += "COMP_WORDS+=('')\n"
	}
	script += "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_klaxon\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command(bash, "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v %s", words, err, out)
	}
	return strings.Fields(string(out))
}

func TestBashCompletionOffersCommandsFlagsAndValues(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for line, want := range map[string]string{
		"klaxon h":                          "heartbeat",
		"klaxon heartbeat ":                 "--url --api-key --json --retries --timeout --help ping",
		"klaxon send --pri":                 "--priority",
		"klaxon send --priority c":          "critical",
		"klaxon list --status ":             "queued notifying acknowledged resolved exhausted",
		"klaxon fire tank --se":             "--severity --secret",
		"klaxon heartbeat ping nightly --j": "--json",
		"klaxon completion ":                "--url --api-key --json --retries --timeout --help bash zsh",
	} {
		if got := strings.Join(complete(t, bash, line), " "); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
	if got := complete(t, bash, "klaxon "); strings.Join(got, " ") != "send get list ack resolve fire heartbeat completion" {
		t.Errorf("commands: %q (man is hidden)", got)
	}
}

func TestZshCompletionIsValidZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed: the zsh completion was only generated, not parsed")
	}
	cmd := exec.Command(zsh, "-n")
	cmd.Stdin = strings.NewReader(zshCompletion())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v %s", err, out)
	}
	for _, spec := range []string{"'--priority[critical, high, medium, low, info (required)]:P:(critical high medium low info)'", "\"heartbeat ping\")"} {
		if !strings.Contains(zshCompletion(), spec) {
			t.Errorf("the zsh completion lacks %s", spec)
		}
	}
}
