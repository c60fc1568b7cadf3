package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	klaxon "github.com/klaxon/klaxon-go"
)

var priorities = []string{klaxon.PriorityCritical, klaxon.PriorityHigh, klaxon.PriorityMedium, klaxon.PriorityLow, klaxon.PriorityInfo}

var statuses = []string{"queued", "notifying", "acknowledged", "resolved", "exhausted", "suppressed"}

func contains(values []string, value string) bool {
	for _, v := range values {
		if v == value {
			return true
		}
	}
	return false
}

func (in *invocation) required(name string) (string, error) {
	value := in.flag(name)
	if value == "" {
		return "", usageError("--%s is required", name)
	}
	return value, nil
}

// message is the free text of the arguments, or standard input when the only argument is "-".
func (in *invocation) message() (string, error) {
	if len(in.args) == 1 && in.args[0] == "-" {
		read, err := io.ReadAll(in.console.stdin)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(read)), nil
	}
	return strings.TrimSpace(strings.Join(in.args, " ")), nil
}

// print writes the gateway's JSON with --json, else the human form.
func (in *invocation) print(raw any, human func() string) error {
	if in.json {
		return writeJSON(in.console.stdout, raw)
	}
	_, err := fmt.Fprintln(in.console.stdout, human())
	return err
}

func runSend(in *invocation) error {
	priority, err := in.required("priority")
	if err != nil {
		return err
	}
	if !contains(priorities, priority) {
		return usageError("--priority must be one of %s", strings.Join(priorities, ", "))
	}
	message, err := in.message()
	if err != nil {
		return err
	}
	if message == "" {
		return usageError("the message is empty")
	}
	to, err := in.required("to")
	if err != nil {
		return err
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	if to, err = client.TargetUUID(in.ctx, to); err != nil {
		return err
	}
	// One Idempotency-Key for this logical send, reused by every retry (the
	// library's default): the gateway replays instead of paging twice.
	receipt, err := client.Submit(in.ctx, klaxon.Alert{
		RecipientUUID: to, Message: message, Priority: priority,
		Source: in.flag("source"), DedupKey: in.flag("dedup-key"), Link: in.flag("link"),
		Service: in.flag("service"), Environment: in.flag("environment"),
		IdempotencyKey: in.flag("idempotency-key"),
	})
	if err != nil {
		return err
	}
	return in.print(receipt.Raw, func() string {
		status := receipt.Status
		if receipt.Replayed {
			status += " (replayed: this send was already accepted)"
		}
		return fieldsText([][2]string{
			{"notification", receipt.NotificationUUID},
			{"status", status},
			{"channels planned", listText(receipt.ChannelsPlanned)},
			{"escalation chain", receipt.EscalationChainID},
		})
	})
}

func notificationText(n *klaxon.Notification) string {
	acknowledged := ""
	if n.AcknowledgedAt != nil {
		acknowledged = fmt.Sprintf("%s by %s via %s", localTime(*n.AcknowledgedAt), orUnknown(n.AcknowledgedBy), orUnknown(n.AcknowledgedVia))
	}
	escalation := "no steps"
	if n.Escalation.StepsTotal > 0 {
		escalation = fmt.Sprintf("step %d of %d", n.Escalation.Step, n.Escalation.StepsTotal)
		if n.Escalation.NextStepAt != nil {
			escalation += ", next at " + localTime(*n.Escalation.NextStepAt)
		}
	}
	// Why nobody is being paged, in the gateway's words: the person reading this at 3 a.m. needs it more than the step count.
	for _, waiting := range n.Escalation.WaitingFor {
		escalation += "; waiting: " + waiting.Reason
	}
	fields := fieldsText([][2]string{
		{"id", n.ID},
		{"status", n.Status},
		{"priority", n.Priority},
		{"to", n.RecipientUUID},
		{"message", n.Message},
		{"source", optional(n.Source)},
		{"service", optional(n.Service)},
		{"environment", optional(n.Environment)},
		{"link", optional(n.Link)},
		{"dedup key", optional(n.DedupKey)},
		{"occurrences", strconv.Itoa(n.Occurrences)},
		{"channels planned", listText(n.ChannelsPlanned)},
		{"escalation", escalation},
		{"created", localTime(n.CreatedAt)},
		{"acknowledged", acknowledged},
		{"note", optional(n.AcknowledgedNote)},
		{"resolved", optionalTime(n.ResolvedAt)},
	})
	if len(n.Attempts) == 0 {
		return fields + "\n\nattempts: none yet"
	}
	rows := make([][]string, len(n.Attempts))
	for i, a := range n.Attempts {
		rows[i] = []string{strconv.Itoa(a.Step), a.Channel, a.Target, a.Outcome, localTime(a.StartedAt), clip(optional(a.Detail), 60)}
	}
	return fields + "\n\nattempts:\n" + tableText([]string{"STEP", "CHANNEL", "TARGET", "OUTCOME", "STARTED", "DETAIL"}, rows)
}

func orUnknown(value *string) string {
	if value == nil {
		return "?"
	}
	return *value
}

func runGet(in *invocation) error {
	client, err := in.client()
	if err != nil {
		return err
	}
	n, err := client.Get(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	return in.print(n.Raw, func() string { return notificationText(n) })
}

// listPage is the --json form of a listing; with --all every page joined, next_cursor null.
type listPage struct {
	Items      []any   `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

func runList(in *invocation) error {
	limit, err := wholeNumber(in.flag("limit"), "--limit", 0)
	if err == nil && in.has("limit") && (limit < 1 || limit > 200) {
		err = usageError("--limit must be from 1 to 200")
	}
	if err != nil {
		return err
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	filter := klaxon.NotificationFilter{Status: in.flag("status"), Priority: in.flag("priority"), Limit: limit, Cursor: in.flag("cursor")}
	if in.has("to") {
		if filter.RecipientUUID, err = client.TargetUUID(in.ctx, in.flag("to")); err != nil {
			return err
		}
	}
	var items []klaxon.Notification
	for {
		page, err := client.ListNotifications(in.ctx, filter)
		if err != nil {
			return err
		}
		items = append(items, page.Items...)
		filter.Cursor = page.NextCursor
		if !in.has("all") || page.NextCursor == "" {
			break
		}
	}
	shown := listPage{Items: []any{}}
	if filter.Cursor != "" {
		shown.NextCursor = &filter.Cursor
	}
	rows := make([][]string, len(items))
	for i := range items {
		shown.Items = append(shown.Items, items[i].Raw)
		rows[i] = []string{items[i].ID, items[i].Status, items[i].Priority, localTime(items[i].CreatedAt), clip(items[i].Message, 48)}
	}
	return in.print(shown, func() string {
		if len(items) == 0 {
			return "no notifications"
		}
		table := tableText([]string{"ID", "STATUS", "PRIORITY", "CREATED", "MESSAGE"}, rows)
		if shown.NextCursor != nil {
			table += "\nmore: klaxon list --cursor " + *shown.NextCursor
		}
		return table
	})
}

func runAck(in *invocation) error {
	client, err := in.client()
	if err != nil {
		return err
	}
	n, err := client.Ack(in.ctx, in.args[0], klaxon.AckOptions{By: in.flag("by"), Note: in.flag("note")})
	if err != nil {
		return err
	}
	return in.print(n.Raw, func() string {
		return fmt.Sprintf("acknowledged %s at %s by %s", n.ID, optionalTime(n.AcknowledgedAt), optional(n.AcknowledgedBy))
	})
}

// runResolve resolves a notification by id with the API key or, when an
// integration is named, the integration's alert by its alert id.
func runResolve(in *invocation) error {
	if in.flagOrEnv("integration", "KLAXON_INTEGRATION_ID") != "" {
		return resolveThroughIntegration(in)
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	n, err := client.Resolve(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	return in.print(n.Raw, func() string { return fmt.Sprintf("resolved %s at %s", n.ID, optionalTime(n.ResolvedAt)) })
}
