package main

import (
	"context"
	"fmt"
	"strings"
)

// commands is the CLI: parsing, --help, the man page and the shell
// completions are all read from this one table. It is filled in init because
// the completion and man commands read it themselves.
var commands []*command

var pageFlags = []flagSpec{
	{name: "limit", value: "N", help: "items per page, 1-200 (the gateway's default is 50)"},
	{name: "cursor", value: "CURSOR", help: "continue from a previous page's next cursor"},
	{name: "all", help: "follow every page to the end"},
}

func init() {
	commands = []*command{
		{words: []string{"send"}, summary: "send an alert to a recipient, group or schedule", args: "<message...>", minArgs: 1, maxArgs: -1, run: runSend, flags: []flagSpec{
			{name: "to", value: "TARGET", help: "recipient, group or schedule: its name or uuid (required)"},
			{name: "priority", value: "P", help: strings.Join(priorities, ", ") + " (required)", choices: priorities},
			{name: "source", value: "S", help: "free label of the origin, e.g. the host"},
			{name: "dedup-key", value: "K", help: "while an alert with this key is open, sends merge into it"},
			{name: "link", value: "URL", help: "http(s) link to the source system"},
			{name: "service", value: "S", help: "service name"},
			{name: "environment", value: "E", help: "environment, e.g. production"},
			{name: "idempotency-key", value: "K", help: "your own Idempotency-Key (default: a new one per send, reused on retries)"},
		}},
		{words: []string{"get"}, summary: "show a notification: status, escalation, delivery attempts, acknowledgement", args: "<id>", minArgs: 1, maxArgs: 1, run: runGet},
		{words: []string{"list"}, summary: "list notifications, newest first", run: runList, flags: append([]flagSpec{
			{name: "status", value: "S", help: strings.Join(statuses, ", "), choices: statuses},
			{name: "to", value: "TARGET", help: "only those sent to this recipient, group or schedule (name or uuid)"},
			{name: "priority", value: "P", help: "only this priority", choices: priorities},
		}, pageFlags...)},
		{words: []string{"ack"}, summary: "acknowledge a notification: stops its escalation", args: "<id>", minArgs: 1, maxArgs: 1, run: runAck, flags: []flagSpec{
			{name: "by", value: "WHO", help: "who acknowledges (default: the API key's name)"},
			{name: "note", value: "N", help: "a note kept with the acknowledgement"},
		}},
		{words: []string{"resolve"}, summary: "resolve a notification by id, or with --integration the integration's alert by its alert id", args: "<id>", minArgs: 1, maxArgs: 1, run: runResolve, flags: integrationFlags},
		{words: []string{"fire"}, summary: "raise an alert through a signed generic integration, no key (firing again while open merges)", args: "<alert-id> [message...]", minArgs: 1, maxArgs: -1, run: runFire, flags: append([]flagSpec{
			{name: "title", value: "T", help: "the alert's title (a title or a message is required)"},
			{name: "severity", value: "S", help: "e.g. critical, error, warning, info (default: the integration's priority)"},
			{name: "source", value: "S", help: "free label of the origin (default: the integration's name)"},
			{name: "link", value: "URL", help: "http(s) link to the source system"},
		}, integrationFlags...)},
		{words: []string{"heartbeat"}, summary: "ping a heartbeat's ping URL, no key; around a command: /start, run it, ping or /fail, exit with its code", args: "<ping-url> [-- <command> [args...]]", minArgs: 1, maxArgs: 1, wraps: true, run: runHeartbeat},
		{words: []string{"heartbeat", "ping"}, summary: "ping a heartbeat by name with the API key (scope notifications:send)", args: "<name>", minArgs: 1, maxArgs: 1, run: runHeartbeatPing},
		{words: []string{"oncall"}, summary: "who a schedule pages now (or at --at), and the shift that puts them on call", args: "<schedule>", minArgs: 1, maxArgs: 1, run: runOnCall, flags: []flagSpec{
			{name: "at", value: "TIME", help: "an ISO 8601 time with a zone instead of now, e.g. 2026-11-26T06:00:00+01:00"},
		}},
		{words: []string{"maintenance", "start"}, summary: "start a maintenance window (or plan one with --from): the alerts it covers page nobody until it ends", run: runMaintenanceStart, flags: maintenanceStartFlags},
		{words: []string{"maintenance", "end"}, summary: "end a maintenance window now: what it held and is still firing pages at once", args: "<uuid>", minArgs: 1, maxArgs: 1, run: runMaintenanceEnd},
		{words: []string{"maintenance", "list"}, summary: "list maintenance windows, latest start first", run: runMaintenanceList, flags: []flagSpec{
			{name: "status", value: "S", help: strings.Join(maintenanceStatuses, ", "), choices: maintenanceStatuses},
		}},
		{words: []string{"policies", "list"}, summary: "list escalation policies", run: runPoliciesList},
		{words: []string{"policies", "create"}, summary: "create an escalation policy: one --level per level, in order", run: runPoliciesCreate, flags: []flagSpec{
			{name: "name", value: "NAME", help: "the policy's name"},
			{name: "level", value: "TARGETS[@MIN]", repeatable: true, help: `a level: recipients, groups or schedules by name or uuid, comma-separated, then @ the minutes before the next level (e.g. "Line 3 on call@10"); repeat per level`},
			{name: "repeat", value: "N", help: "how many more times the whole policy runs while nobody acknowledges (default 0)"},
		}},
		{words: []string{"completion"}, summary: "print the shell completion script: bash or zsh", args: "bash|zsh", minArgs: 1, maxArgs: 1, run: runCompletion},
		{words: []string{"man"}, summary: "print the man page (roff)", hidden: true, run: runMan},
	}
}

func runCompletion(in *invocation) error {
	switch in.args[0] {
	case "bash":
		_, err := fmt.Fprint(in.console.stdout, bashCompletion())
		return err
	case "zsh":
		_, err := fmt.Fprint(in.console.stdout, zshCompletion())
		return err
	}
	return usageError("completion: bash or zsh, got %q", in.args[0])
}

func runMan(in *invocation) error {
	_, err := fmt.Fprint(in.console.stdout, manPage())
	return err
}

// run runs one command line and returns the exit code; it never panics on bad input.
func run(ctx context.Context, argv []string, con console) int {
	json := contains(argv, "--json")
	err := dispatch(ctx, argv, con, &json)
	if err == nil {
		return exitOK
	}
	failure := asFailure(err)
	if failure.message == "" {
		return failure.code
	}
	hidden := secrets(argv, con.env)
	if json && failure.problem != nil {
		var problem any = failure.problem
		if len(failure.problem.Raw) > 0 {
			problem = failure.problem.Raw
		}
		_ = writeJSON(con.stdout, problem)
	}
	fmt.Fprintln(con.stderr, "error: "+scrub(failure.message, hidden))
	if failure.usage {
		fmt.Fprintln(con.stderr, "`klaxon --help` lists the commands; `klaxon <command> --help` their flags.")
	}
	return failure.code
}

func dispatch(ctx context.Context, argv []string, con console, json *bool) error {
	if len(argv) > 0 && (argv[0] == "--version" || argv[0] == "version") {
		fmt.Fprintln(con.stdout, versionText())
		return nil
	}
	c, rest := findCommand(argv)
	if c == nil {
		if len(argv) == 0 || argv[0] == "help" || contains(argv, "--help") || contains(argv, "-h") {
			fmt.Fprintln(con.stdout, overview())
			return nil
		}
		fmt.Fprintln(con.stderr, overview())
		return usageError("unknown command %q", argv[0])
	}
	args, values, wrapped, err := parse(c, rest)
	if err != nil {
		return err
	}
	*json = values["json"] == "true"
	if values["help"] == "true" {
		fmt.Fprintln(con.stdout, commandHelp(c))
		return nil
	}
	if len(args) < c.minArgs {
		return usageError("missing argument: %s", synopsis(c))
	}
	if c.maxArgs >= 0 && len(args) > c.maxArgs {
		return usageError("unexpected argument %q: %s", args[c.maxArgs], synopsis(c))
	}
	return c.run(&invocation{ctx: ctx, command: c, args: args, values: values, wrapped: wrapped, json: *json, console: con})
}
