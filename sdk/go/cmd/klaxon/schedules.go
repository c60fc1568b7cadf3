package main

import (
	"strings"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

func peopleText(people []klaxon.Person) string {
	names := make([]string, len(people))
	for i, person := range people {
		names[i] = person.Name
	}
	return listText(names)
}

// shiftReason is why the shift pages its target, as the dashboard says it: "night, crew D, Line 3" or "override".
func shiftReason(shift *klaxon.Shift) string {
	if shift.Source == "override" {
		return "override"
	}
	var parts []string
	add := func(prefix string, value *string) {
		if value != nil && *value != "" {
			parts = append(parts, prefix+*value)
		}
	}
	add("", shift.ShiftName)
	add("crew ", shift.Crew)
	add("", shift.LayerName)
	if len(parts) == 0 {
		return shift.Source
	}
	return strings.Join(parts, ", ")
}

func onCallText(answer *klaxon.OnCall) string {
	if answer.Shift == nil {
		fallback := ""
		if answer.Fallback != nil {
			fallback = answer.Fallback.Name
		}
		return fieldsText([][2]string{
			{"on call", peopleText(answer.Recipients)},
			{"shift", "none: a gap, the fallback " + cell(fallback) + " is paged"},
			{"at", isoTime(answer.At)},
		})
	}
	return fieldsText([][2]string{
		{"on call", peopleText(answer.Recipients)},
		{"paged", answer.Shift.Target.Name + " (" + answer.Shift.Target.Kind + ")"},
		{"shift", shiftReason(answer.Shift)},
		{"from", isoTime(answer.Shift.StartsAt)},
		{"until", isoTime(answer.Shift.EndsAt)},
	})
}

// runOnCall says who a schedule, given by name or uuid, pages now or at --at (scope recipients:read; a name also notifications:send).
func runOnCall(in *invocation) error {
	var at *time.Time
	if in.has("at") {
		parsed, err := time.Parse(time.RFC3339, in.flag("at"))
		if err != nil {
			return usageError("--at must be an ISO 8601 time with a zone, e.g. 2026-11-26T06:00:00+01:00, got %q", in.flag("at"))
		}
		at = &parsed
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	schedule, err := client.TargetUUID(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	var answer *klaxon.OnCall
	if at == nil {
		answer, err = client.OnCall(in.ctx, schedule)
	} else {
		answer, err = client.OnCallAt(in.ctx, schedule, *at)
	}
	if err != nil {
		return err
	}
	return in.print(answer.Raw, func() string { return onCallText(answer) })
}
