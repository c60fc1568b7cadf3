package main

import (
	"strings"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

var maintenanceStatuses = []string{klaxon.MaintenanceUpcoming, klaxon.MaintenanceActive, klaxon.MaintenanceEnded}

var maintenanceStartFlags = []flagSpec{
	{name: "for", value: "DURATION", help: "how long from the start, e.g. 2h, 90m, 1h30m (this or --until)"},
	{name: "until", value: "TIME", help: "when it ends, ISO 8601 with a zone, e.g. 2026-11-26T18:00:00+01:00"},
	{name: "from", value: "TIME", help: "when it begins, ISO 8601 with a zone (default: now)"},
	{name: "reason", value: "TEXT", help: "why, for whoever reads the audit later (required)"},
	{name: "target", value: "UUID", repeatable: true, help: "hold alerts sent to this recipient, group or schedule (repeatable)"},
	{name: "source", value: "S", repeatable: true, help: "hold alerts with this source, compared exactly (repeatable)"},
	{name: "integration", value: "ID", repeatable: true, help: "hold every alert coming through this integration (repeatable)"},
	{name: "heartbeat", value: "NAME", repeatable: true, help: "page for this heartbeat only if still down at the end (repeatable)"},
}

// isoFlag is a flag holding an ISO 8601 time with a zone, the only kind the gateway takes.
func (in *invocation) isoFlag(name string) (time.Time, error) {
	parsed, err := time.Parse(time.RFC3339, in.flag(name))
	if err != nil {
		return time.Time{}, usageError("--%s must be an ISO 8601 time with a zone, e.g. 2026-11-26T06:00:00+01:00, got %q", name, in.flag(name))
	}
	return parsed, nil
}

// maintenanceSpan reads --from and one of --for or --until.
func (in *invocation) maintenanceSpan() (starts, ends time.Time, err error) {
	if in.has("from") {
		if starts, err = in.isoFlag("from"); err != nil {
			return
		}
	}
	switch {
	case in.has("for") == in.has("until"):
		err = usageError("give one of --for or --until")
	case in.has("until"):
		ends, err = in.isoFlag("until")
	default:
		length, parseErr := time.ParseDuration(in.flag("for"))
		if parseErr != nil || length <= 0 {
			return starts, ends, usageError("--for must be a duration such as 2h, 90m or 1h30m, got %q", in.flag("for"))
		}
		from := starts
		if from.IsZero() {
			from = time.Now()
		}
		ends = from.Add(length)
	}
	return
}

func maintenanceText(window *klaxon.MaintenanceWindow) string {
	var holds []string
	for _, list := range []struct {
		name   string
		values []string
	}{{"targets", window.Targets}, {"sources", window.Sources}, {"integrations", window.Integrations}, {"heartbeats", window.Heartbeats}} {
		if len(list.values) > 0 {
			holds = append(holds, list.name+": "+strings.Join(list.values, ", "))
		}
	}
	return fieldsText([][2]string{
		{"maintenance", window.UUID},
		{"status", window.Status},
		{"from", localTime(window.StartsAt)},
		{"until", localTime(window.EndsAt)},
		{"reason", window.Reason},
		{"holds", strings.Join(holds, "; ")},
	})
}

// runMaintenanceStart starts a maintenance window now, or plans one with --from (scope recipients:write).
func runMaintenanceStart(in *invocation) error {
	reason, err := in.required("reason")
	if err != nil {
		return err
	}
	starts, ends, err := in.maintenanceSpan()
	if err != nil {
		return err
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	window, err := client.StartMaintenance(in.ctx, klaxon.Maintenance{
		StartsAt: starts, EndsAt: ends, Reason: reason,
		Targets: in.list("target"), Sources: in.list("source"), Integrations: in.list("integration"), Heartbeats: in.list("heartbeat"),
	})
	if err != nil {
		return err
	}
	return in.print(window.Raw, func() string { return maintenanceText(window) })
}

// runMaintenanceEnd ends a window now; what it held and is still firing pages at once.
func runMaintenanceEnd(in *invocation) error {
	client, err := in.client()
	if err != nil {
		return err
	}
	window, err := client.EndMaintenance(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	return in.print(window.Raw, func() string { return maintenanceText(window) })
}

// runMaintenanceList lists the windows, latest start first.
func runMaintenanceList(in *invocation) error {
	status := in.flag("status")
	if status != "" && !contains(maintenanceStatuses, status) {
		return usageError("--status must be one of %s", strings.Join(maintenanceStatuses, ", "))
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	list, err := client.ListMaintenance(in.ctx, status)
	if err != nil {
		return err
	}
	return in.print(list.Raw, func() string {
		if len(list.Items) == 0 {
			return "no maintenance windows"
		}
		rows := make([][]string, len(list.Items))
		for i, window := range list.Items {
			rows[i] = []string{window.UUID, window.Status, localTime(window.StartsAt), localTime(window.EndsAt), clip(window.Reason, 60)}
		}
		return tableText([]string{"UUID", "STATUS", "FROM", "UNTIL", "REASON"}, rows)
	})
}
