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

// readableTime is an instant as people at the plant read it, in zone and named ("28 Nov 2026,
// 07:30:33 CET"), as the gateway's mails give it; --json keeps the ISO instants.
func readableTime(t time.Time, zone *time.Location) string {
	return t.In(zone).Format("2 Jan 2006, 15:04:05 MST")
}

// onCallText tells the shift in the schedule's zone (issue 33), not in UTC.
func onCallText(answer *klaxon.OnCall, zone *time.Location) string {
	if answer.Shift == nil {
		fallback := ""
		if answer.Fallback != nil {
			fallback = answer.Fallback.Name
		}
		return fieldsText([][2]string{
			{"on call", peopleText(answer.Recipients)},
			{"shift", "none: a gap, the fallback " + cell(fallback) + " is paged"},
			{"at", readableTime(answer.At, zone)},
		})
	}
	return fieldsText([][2]string{
		{"on call", peopleText(answer.Recipients)},
		{"paged", answer.Shift.Target.Name + " (" + answer.Shift.Target.Kind + ")"},
		{"shift", shiftReason(answer.Shift)},
		{"from", readableTime(answer.Shift.StartsAt, zone)},
		{"until", readableTime(answer.Shift.EndsAt, zone)},
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
	if in.json {
		return in.print(answer.Raw, nil)
	}
	zone, err := scheduleZone(in, client, schedule)
	if err != nil {
		return err
	}
	return in.print(answer.Raw, func() string { return onCallText(answer, zone) })
}

// scheduleZone is the zone the schedule's shifts are read in; the box's own when this machine
// does not know it (no zone database), so the shift is still told, with the zone it is told in.
func scheduleZone(in *invocation, client *klaxon.Client, schedule string) (*time.Location, error) {
	read, err := client.Schedule(in.ctx, schedule)
	if err != nil {
		return nil, err
	}
	zone, err := time.LoadLocation(read.Timezone)
	if err != nil {
		return time.Local, nil
	}
	return zone, nil
}
