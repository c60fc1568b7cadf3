package main

import (
	"strconv"
	"strings"

	klaxon "github.com/klaxon/klaxon-go"
)

// policyLevel reads a --level "Line 3 on call,Sven@10": targets by name or uuid, comma-separated, then @ and the minutes before the next level.
func policyLevel(in *invocation, client *klaxon.Client, spec string) (klaxon.PolicyLevel, error) {
	level := klaxon.PolicyLevel{}
	refs := spec
	if at := strings.LastIndex(spec, "@"); at >= 0 {
		minutes, err := strconv.Atoi(spec[at+1:])
		if err != nil || minutes < 0 {
			return level, usageError("--level %q: the minutes after @ must be a whole number", spec)
		}
		level.EscalateAfterMinutes = &minutes
		refs = spec[:at]
	}
	for _, ref := range strings.Split(refs, ",") {
		if ref = strings.TrimSpace(ref); ref == "" {
			continue
		}
		uuid, err := client.TargetUUID(in.ctx, ref)
		if err != nil {
			return level, err
		}
		level.Targets = append(level.Targets, uuid)
	}
	if len(level.Targets) == 0 {
		return level, usageError("--level %q names no target", spec)
	}
	return level, nil
}

func policyText(p *klaxon.EscalationPolicy) string {
	rows := [][2]string{{"policy", p.UUID}, {"name", p.Name}, {"repeat", strconv.Itoa(p.Repeat)}}
	for i, level := range p.Levels {
		text := strings.Join(level.Targets, ", ")
		if level.EscalateAfterMinutes != nil {
			text += ", next level after " + strconv.Itoa(*level.EscalateAfterMinutes) + " min"
		}
		rows = append(rows, [2]string{"level " + strconv.Itoa(i+1), text})
	}
	return fieldsText(rows)
}

// runPoliciesCreate creates an escalation policy from its --level flags, in order (scope recipients:write).
func runPoliciesCreate(in *invocation) error {
	name, err := in.required("name")
	if err != nil {
		return err
	}
	specs := in.list("level")
	if len(specs) == 0 {
		return usageError("at least one --level is required")
	}
	repeat := 0
	if in.has("repeat") {
		if repeat, err = strconv.Atoi(in.flag("repeat")); err != nil || repeat < 0 {
			return usageError("--repeat must be a whole number, got %q", in.flag("repeat"))
		}
	}
	client, err := in.client()
	if err != nil {
		return err
	}
	policy := klaxon.NewPolicy{Name: name, Repeat: repeat}
	for _, spec := range specs {
		level, err := policyLevel(in, client, spec)
		if err != nil {
			return err
		}
		policy.Levels = append(policy.Levels, level)
	}
	created, err := client.CreateEscalationPolicy(in.ctx, policy)
	if err != nil {
		return err
	}
	return in.print(created.Raw, func() string { return policyText(created) })
}

// runPoliciesList lists the escalation policies (scope recipients:read).
func runPoliciesList(in *invocation) error {
	client, err := in.client()
	if err != nil {
		return err
	}
	var all []klaxon.EscalationPolicy
	for cursor := ""; ; {
		page, err := client.ListEscalationPolicies(in.ctx, cursor)
		if err != nil {
			return err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	return in.print(map[string]any{"items": all}, func() string {
		if len(all) == 0 {
			return "no escalation policies"
		}
		rows := make([][]string, len(all))
		for i, p := range all {
			rows[i] = []string{p.UUID, p.Name, strconv.Itoa(len(p.Levels)), strconv.Itoa(p.Repeat)}
		}
		return tableText([]string{"UUID", "NAME", "LEVELS", "REPEAT"}, rows)
	})
}
