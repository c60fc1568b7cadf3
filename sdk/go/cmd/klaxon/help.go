package main

import (
	"strings"
	"unicode/utf8"
)

const (
	tagline       = "send alerts to a Klaxon gateway and keep heartbeats, from any device"
	exitCodesText = "exit codes: 0 ok, 1 refused, 2 usage or invalid input, 3 not found,\n            4 authentication or permission, 5 server or network error after retries"
)

func visibleCommands() []*command {
	var shown []*command
	for _, c := range commands {
		if !c.hidden {
			shown = append(shown, c)
		}
	}
	return shown
}

func synopsis(c *command) string {
	parts := append([]string{"klaxon"}, c.words...)
	if c.args != "" {
		parts = append(parts, c.args)
	}
	if len(c.flags) > 0 {
		parts = append(parts, "[flags]")
	}
	return strings.Join(parts, " ")
}

// flagUsage is "-h, --help" or "--to UUID".
func flagUsage(spec flagSpec) string {
	text := "--" + spec.name
	if spec.short != "" {
		text = "-" + spec.short + ", " + text
	}
	if spec.value != "" {
		text += " " + spec.value
	}
	return text
}

func flagLines(specs []flagSpec) []string {
	width := 0
	for _, spec := range specs {
		width = max(width, utf8.RuneCountInString(flagUsage(spec)))
	}
	lines := make([]string, len(specs))
	for i, spec := range specs {
		lines[i] = "  " + pad(flagUsage(spec), width) + "  " + spec.help
	}
	return lines
}

func overview() string {
	shown := visibleCommands()
	width := 0
	for _, c := range shown {
		width = max(width, len(strings.Join(c.words, " ")))
	}
	lines := []string{"klaxon: " + tagline, "", "usage: klaxon <command> [flags]", "", "commands:"}
	for _, c := range shown {
		lines = append(lines, "  "+pad(strings.Join(c.words, " "), width)+"  "+c.summary)
	}
	lines = append(lines, "", "global flags:")
	lines = append(lines, flagLines(globalFlags)...)
	lines = append(lines, "", exitCodesText, "", "`klaxon <command> --help` describes a command; `klaxon --version` prints the version and commit.")
	return strings.Join(lines, "\n")
}

func commandHelp(c *command) string {
	lines := []string{"usage: " + synopsis(c), "", c.summary}
	if len(c.flags) > 0 {
		lines = append(lines, "", "flags:")
		lines = append(lines, flagLines(c.flags)...)
	}
	lines = append(lines, "", "global flags:")
	lines = append(lines, flagLines(globalFlags)...)
	return strings.Join(lines, "\n")
}
