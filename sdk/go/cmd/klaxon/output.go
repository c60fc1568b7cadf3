package main

import (
	"encoding/json"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// writeJSON prints a value (or the gateway's raw JSON) pretty-printed with two
// spaces, as the TypeScript CLI's --json does, without escaping <, > and &.
func writeJSON(w io.Writer, value any) error {
	encoder := json.NewEncoder(w)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	return encoder.Encode(value)
}

// cell is one value of a human-readable field or table cell; empty shows as "-".
func cell(value string) string {
	if value == "" {
		return "-"
	}
	return value
}

func optional(value *string) string {
	if value == nil {
		return ""
	}
	return *value
}

// localTime writes a time for people (issue 33): in this machine's zone, named, never bare UTC;
// --json keeps the gateway's ISO instants.
func localTime(t time.Time) string {
	return readableTime(t, time.Local)
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return localTime(*t)
}

func pad(text string, width int) string {
	return text + strings.Repeat(" ", width-utf8.RuneCountInString(text))
}

// fieldsText is label/value lines with the values aligned: the human form of one resource.
func fieldsText(rows [][2]string) string {
	width := 0
	for _, row := range rows {
		width = max(width, utf8.RuneCountInString(row[0]))
	}
	lines := make([]string, len(rows))
	for i, row := range rows {
		lines[i] = pad(row[0], width) + "  " + cell(row[1])
	}
	return strings.Join(lines, "\n")
}

// tableText is a table with a header row and aligned columns; the last column is not padded.
func tableText(headers []string, rows [][]string) string {
	cells := [][]string{headers}
	for _, row := range rows {
		shown := make([]string, len(row))
		for i, value := range row {
			shown[i] = cell(value)
		}
		cells = append(cells, shown)
	}
	widths := make([]int, len(headers))
	for _, row := range cells {
		for column, value := range row {
			widths[column] = max(widths[column], utf8.RuneCountInString(value))
		}
	}
	lines := make([]string, len(cells))
	for i, row := range cells {
		parts := make([]string, len(row))
		for column, value := range row {
			if column < len(row)-1 {
				value = pad(value, widths[column])
			}
			parts[column] = value
		}
		lines[i] = strings.Join(parts, "  ")
	}
	return strings.Join(lines, "\n")
}

// clip shortens free text for one table cell, on one line.
func clip(text string, limit int) string {
	line := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(line) <= limit {
		return line
	}
	return string([]rune(line)[:limit-1]) + "…"
}

func listText(values []string) string {
	if len(values) == 0 {
		return "-"
	}
	return strings.Join(values, ", ")
}
