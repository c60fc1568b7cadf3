package main

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// flagSpec is one flag of a command, with what --help, the man page and the
// shell completions say about it.
type flagSpec struct {
	name string
	// value is the placeholder of a flag that takes a value ("UUID"); empty for a boolean flag.
	value string
	help  string
	short string
	// choices are the values the shell completions offer.
	choices []string
	// repeatable: each use adds a value (read with invocation.list) instead of replacing it.
	repeatable bool
}

// listSeparator joins the values of a repeatable flag: it cannot occur in an argument.
const listSeparator = "\x00"

// command is one command of the CLI; the table of them (commands.go) drives
// parsing, help, the man page and the completions.
type command struct {
	words   []string
	summary string
	// args is the synopsis of the positional arguments, e.g. "<id>".
	args string
	// minArgs and maxArgs bound the positional arguments; maxArgs -1 is no limit.
	minArgs, maxArgs int
	flags            []flagSpec
	// wraps: what follows "--" is a command to run, not more arguments.
	wraps  bool
	hidden bool
	run    func(*invocation) error
}

const (
	defaultURL     = klaxon.DefaultURL
	defaultRetries = 3
	defaultTimeout = 10
)

var globalFlags = []flagSpec{
	{name: "url", value: "URL", repeatable: true, help: "the gateway; repeat it (or list URLs with commas) for the two boxes of a pair (default: $KLAXON_URL, else " + defaultURL + ")"},
	{name: "api-key", value: "KEY", help: "the API key (default: $KLAXON_API_KEY)"},
	{name: "json", help: "print the API's JSON instead of the human form"},
	{name: "retries", value: "N", help: fmt.Sprintf("repeats after a server or network error (default: $KLAXON_RETRIES, else %d)", defaultRetries)},
	{name: "timeout", value: "SECONDS", help: fmt.Sprintf("per-request timeout (default %d)", defaultTimeout)},
	{name: "help", short: "h", help: "show help"},
}

// invocation is one parsed run of a command.
type invocation struct {
	ctx     context.Context
	command *command
	args    []string
	values  map[string]string
	// wrapped is the command line after "--" of a command that wraps one.
	wrapped []string
	json    bool
	console console
}

func (in *invocation) flag(name string) string { return in.values[name] }

// list is every value a repeatable flag was given, in order.
func (in *invocation) list(name string) []string {
	if !in.has(name) {
		return nil
	}
	return strings.Split(in.values[name], listSeparator)
}

func (in *invocation) has(name string) bool {
	_, ok := in.values[name]
	return ok
}

// flagOrEnv is a flag's value, else the environment variable's.
func (in *invocation) flagOrEnv(name, variable string) string {
	if value := in.flag(name); value != "" {
		return value
	}
	return in.console.env(variable)
}

// findCommand is the command named by the leading words of argv (the longest match) and the rest of argv.
func findCommand(argv []string) (*command, []string) {
	var found *command
	for _, c := range commands {
		if len(c.words) > len(argv) || (found != nil && len(found.words) >= len(c.words)) {
			continue
		}
		matches := true
		for i, word := range c.words {
			matches = matches && argv[i] == word
		}
		if matches {
			found = c
		}
	}
	if found == nil {
		return nil, nil
	}
	return found, argv[len(found.words):]
}

// flagsOf is the command's flags and the global ones, by name.
func flagsOf(c *command) map[string]flagSpec {
	all := map[string]flagSpec{}
	for _, spec := range append(append([]flagSpec{}, globalFlags...), c.flags...) {
		all[spec.name] = spec
		if spec.short != "" {
			all[spec.short] = spec
		}
	}
	return all
}

// parse reads flags anywhere on the line (--name value, --name=value, -h), as
// the TypeScript CLI does; "--" ends them.
func parse(c *command, rest []string) (args []string, values map[string]string, wrapped []string, err error) {
	specs := flagsOf(c)
	values = map[string]string{}
	for i := 0; i < len(rest); i++ {
		word := rest[i]
		if word == "--" {
			if c.wraps {
				return args, values, rest[i+1:], nil
			}
			return append(args, rest[i+1:]...), values, nil, nil
		}
		if !strings.HasPrefix(word, "-") || word == "-" {
			args = append(args, word)
			continue
		}
		name, inline, hasInline := strings.Cut(strings.TrimLeft(word, "-"), "=")
		spec, known := specs[name]
		if !known || (strings.HasPrefix(word, "--") != (spec.name == name)) {
			return nil, nil, nil, usageError("unknown option '%s'", word)
		}
		switch {
		case spec.value == "" && hasInline:
			return nil, nil, nil, usageError("option '--%s' does not take a value", spec.name)
		case spec.value == "":
			values[spec.name] = "true"
		case hasInline:
			setValue(values, spec, inline)
		case i+1 < len(rest):
			i++
			setValue(values, spec, rest[i])
		default:
			return nil, nil, nil, usageError("option '--%s <%s>' argument missing", spec.name, spec.value)
		}
	}
	return args, values, nil, nil
}

func setValue(values map[string]string, spec flagSpec, value string) {
	if previous, seen := values[spec.name]; seen && spec.repeatable {
		value = previous + listSeparator + value
	}
	values[spec.name] = value
}

func wholeNumber(raw, name string, fallback int) (int, error) {
	if raw == "" {
		return fallback, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || strings.HasPrefix(raw, "+") {
		return 0, usageError("%s must be a whole number, got %q", name, raw)
	}
	return n, nil
}

// connection is how every request of this run reaches the gateway.
type connection struct {
	// gateways are the boxes to try, in order (docs/clients.md, "Two boxes").
	gateways []string
	retries  int
	timeout  time.Duration
	onRetry  func(attempt int, wait time.Duration, err error)
}

func (in *invocation) connection() (connection, error) {
	gateways := klaxon.SplitURLs(strings.Join(in.list("url"), ","))
	if len(gateways) == 0 {
		gateways = klaxon.SplitURLs(in.console.env("KLAXON_URL"))
	}
	if len(gateways) == 0 {
		gateways = []string{defaultURL}
	}
	for _, gateway := range gateways {
		if parsed, err := url.Parse(gateway); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return connection{}, usageError("the gateway URL must start with http:// or https://, got %q", gateway)
		}
	}
	retries, err := wholeNumber(in.flagOrEnv("retries", "KLAXON_RETRIES"), "--retries", defaultRetries)
	if err != nil {
		return connection{}, err
	}
	timeout, err := wholeNumber(in.flag("timeout"), "--timeout", defaultTimeout)
	if err != nil {
		return connection{}, err
	}
	attempts := retries + 1
	onRetry := func(attempt int, wait time.Duration, err error) {
		fmt.Fprintf(in.console.stderr, "retrying in %.1f s (attempt %d of %d): %s\n", wait.Seconds(), attempt, attempts, strings.SplitN(asFailure(err).message, "\n", 2)[0])
	}
	return connection{gateways: gateways, retries: retries, timeout: time.Duration(timeout) * time.Second, onRetry: onRetry}, nil
}

// libraryRetries is the library's form of a retry count: its 0 means the default, a negative none.
func (c connection) libraryRetries() int {
	if c.retries == 0 {
		return -1
	}
	return c.retries
}

// client is the API client of this run; no key is exit code 4.
func (in *invocation) client() (*klaxon.Client, error) {
	conn, err := in.connection()
	if err != nil {
		return nil, err
	}
	key := in.flagOrEnv("api-key", "KLAXON_API_KEY")
	if key == "" {
		return nil, &cliError{message: "no API key: pass --api-key or set KLAXON_API_KEY", code: exitAuth}
	}
	return klaxon.NewWithOptions(klaxon.Options{URLs: conn.gateways, APIKey: key, Retries: conn.libraryRetries(), Timeout: conn.timeout, OnRetry: conn.onRetry})
}

// secrets are the credentials this run was given, in any of their forms, so no message can echo them.
func secrets(argv []string, env func(string) string) []string {
	var found []string
	for _, variable := range []string{"KLAXON_API_KEY", "KLAXON_INTEGRATION_SECRET"} {
		found = append(found, env(variable))
	}
	for i, word := range argv {
		for _, flag := range []string{"--api-key", "--secret"} {
			if word == flag && i+1 < len(argv) {
				found = append(found, argv[i+1])
			} else if value, ok := strings.CutPrefix(word, flag+"="); ok {
				found = append(found, value)
			}
		}
	}
	// Longest first, so a secret containing a shorter one is removed whole.
	sort.Slice(found, func(i, j int) bool { return len(found[i]) > len(found[j]) })
	var nonEmpty []string
	for _, secret := range found {
		if secret != "" {
			nonEmpty = append(nonEmpty, secret)
		}
	}
	return nonEmpty
}

func scrub(text string, secrets []string) string {
	for _, secret := range secrets {
		text = strings.ReplaceAll(text, secret, "[redacted]")
	}
	return text
}
