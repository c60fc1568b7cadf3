package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
		"klaxon list --status ":             "queued notifying acknowledged resolved exhausted suppressed",
		"klaxon maintenance ":               "start end list",
		"klaxon maintenance list --status ": "upcoming active ended",
		"klaxon fire tank --se":             "--severity --secret",
		"klaxon heartbeat ping nightly --j": "--json",
		"klaxon completion ":                "--url --api-key --json --retries --timeout --help bash zsh",
	} {
		if got := strings.Join(complete(t, bash, line), " "); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
	if got := complete(t, bash, "klaxon "); strings.Join(got, " ") != "send get list ack resolve fire heartbeat oncall maintenance policies completion" {
		t.Errorf("commands: %q (man is hidden)", got)
	}
}

// zshDriver types each line and a Tab into an interactive zsh on a pseudo-terminal (zsh/zpty),
// then a command whose output marks the end of what the completion printed.
const zshDriver = `zmodload zsh/zpty
zpty z zsh -f -i
settle() {
  zpty -w z "echo SETTLED-\$((${1}+1))"
  REPLY=""
  while [[ $REPLY != *SETTLED-$((${1}+1))[^\)]* && $REPLY != *SETTLED-$((${1}+1)) ]]; do zpty -r z chunk; REPLY+=$chunk; done
}
zpty -w z "PS1=''; autoload -U compinit; compinit -u -D; source ${1}; zstyle ':completion:*' list-prompt ''"
settle 0
# Waits until the terminal has been quiet for 0.3 s, keeping what it printed in QUIET: zsh
# skips listing completions while more input is waiting, so nothing is typed before then.
quiet() {
  QUIET=""; local idle=0
  while (( idle < 6 )); do
    if zpty -rt z chunk; then QUIET+=$chunk; idle=0; else sleep 0.05; idle=$((idle+1)); fi
  done
}
i=1
for line in "${@[2,-1]}"; do
  zpty -w -n z "$line"$'\t'
  quiet
  zpty -w -n z $'\x15'
  settle $((i*10)); i=$((i+1))
  print -r -- "=== $line"
  print -r -- "$QUIET$REPLY" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tr -d '\r'
done
zpty -d z
`

func TestZshCompletionCompletesInZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed: the zsh completion was only generated, not run")
	}
	dir := t.TempDir()
	script, driver := filepath.Join(dir, "_klaxon"), filepath.Join(dir, "driver.zsh")
	if os.WriteFile(script, []byte(zshCompletion()), 0o644) != nil || os.WriteFile(driver, []byte(zshDriver), 0o644) != nil {
		t.Fatal("cannot write the scripts")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, zsh, "-f", driver, script, "klaxon send --priority ", "klaxon ", "klaxon list --st", "klaxon maintenance ").CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v %s", err, out)
	}
	sections := strings.Split(string(out), "=== ")
	if len(sections) != 5 {
		t.Fatalf("zsh printed %q", out)
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`critical\s+high\s+info\s+low\s+medium`),
		regexp.MustCompile(`heartbeat\s+-- ping a heartbeat's ping URL`),
		regexp.MustCompile(`klaxon list --status `),
		regexp.MustCompile(`end\s+list\s+start`),
	} {
		if !want.MatchString(sections[i+1]) {
			t.Errorf("%q: %q", strings.SplitN(sections[i+1], "\n", 2)[0], sections[i+1])
		}
	}
}
