package main

import (
	"fmt"

	klaxon "github.com/klaxon/klaxon-go"
)

// integrationFlags name a generic integration and its signing secret: a device
// holding only these can raise and resolve its own alerts, and nothing else.
var integrationFlags = []flagSpec{
	{name: "integration", value: "ID", help: "the generic integration's id (default: $KLAXON_INTEGRATION_ID)"},
	{name: "secret", value: "SECRET", help: "its whsec_ secret (default: $KLAXON_INTEGRATION_SECRET; prefer the variable, flags show in ps)"},
}

func (in *invocation) integration() (*klaxon.Integration, error) {
	conn, err := in.connection()
	if err != nil {
		return nil, err
	}
	id := in.flagOrEnv("integration", "KLAXON_INTEGRATION_ID")
	if id == "" {
		return nil, usageError("--integration is required (or set KLAXON_INTEGRATION_ID)")
	}
	secret := in.flagOrEnv("secret", "KLAXON_INTEGRATION_SECRET")
	if secret == "" {
		return nil, &cliError{message: "no integration secret: pass --secret or set KLAXON_INTEGRATION_SECRET", code: exitAuth}
	}
	integration, err := klaxon.NewIntegration(klaxon.IntegrationOptions{URLs: conn.gateways, ID: id, Secret: secret, Retries: conn.libraryRetries(), Timeout: conn.timeout, OnRetry: conn.onRetry})
	if err != nil {
		return nil, &cliError{message: "the integration secret must be whsec_ followed by base64", code: exitAuth}
	}
	return integration, nil
}

func resultText(verb string, result *klaxon.EventResult) string {
	text := fmt.Sprintf("%s %s: %s", verb, result.AlertID, result.Outcome)
	if result.NotificationUUID != nil {
		text += " (notification " + *result.NotificationUUID + ")"
	}
	return text
}

func runFire(in *invocation) error {
	alertID := in.args[0]
	in.args = in.args[1:]
	message, err := in.message()
	if err != nil {
		return err
	}
	if message == "" && in.flag("title") == "" {
		return usageError("give a message or --title")
	}
	integration, err := in.integration()
	if err != nil {
		return err
	}
	result, err := integration.Fire(in.ctx, klaxon.IntegrationAlert{
		AlertID: alertID, Title: in.flag("title"), Message: message,
		Severity: in.flag("severity"), Source: in.flag("source"), Link: in.flag("link"),
	})
	if err != nil {
		return err
	}
	return in.print(result.Raw, func() string { return resultText("fired", result) })
}

func resolveThroughIntegration(in *invocation) error {
	integration, err := in.integration()
	if err != nil {
		return err
	}
	result, err := integration.ResolveAlert(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	return in.print(result.Raw, func() string { return resultText("resolved", result) })
}
