package klaxon_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	klaxon "github.com/klaxon/klaxon-go"
)

// The examples read KLAXON_URL, KLAXON_API_KEY, KLAXON_RECIPIENT and the
// integration's KLAXON_INTEGRATION_ID and KLAXON_INTEGRATION_SECRET, as a
// program on the factory LAN would; the tests run them against a real gateway.

func ExampleClient_Send() {
	client, err := klaxon.New("", "") // KLAXON_URL and KLAXON_API_KEY
	if err != nil {
		log.Fatal(err)
	}
	n, err := client.Send(context.Background(), klaxon.Alert{
		RecipientUUID: os.Getenv("KLAXON_RECIPIENT"),
		Message:       "Press 7 hydraulic oil over 80 °C",
		Priority:      klaxon.PriorityCritical,
		Source:        "plc-7",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.Status)
	// Output: queued
}

func ExampleClient_Ack() {
	client, _ := klaxon.New("", "")
	ctx := context.Background()
	n, err := client.Send(ctx, klaxon.Alert{RecipientUUID: os.Getenv("KLAXON_RECIPIENT"), Message: "compressor 2 tripped", Priority: klaxon.PriorityHigh})
	if err != nil {
		log.Fatal(err)
	}
	acked, err := client.Ack(ctx, n.ID, klaxon.AckOptions{By: "maria", Note: "valve closed"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(acked.Status, *acked.AcknowledgedBy)
	// Output: acknowledged maria
}

func ExampleError() {
	client, _ := klaxon.New("", "")
	_, err := client.Get(context.Background(), "notif_00000000000000000000000000")
	var problem *klaxon.Error
	if errors.As(err, &problem) {
		fmt.Println(problem.Status, problem.Code, errors.Is(err, klaxon.ErrNotFound))
	}
	// Output: 404 not_found true
}

func ExampleIntegration_Fire() {
	device, err := klaxon.NewIntegration(klaxon.IntegrationOptions{
		ID:     os.Getenv("KLAXON_INTEGRATION_ID"),
		Secret: os.Getenv("KLAXON_INTEGRATION_SECRET"),
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	fired, err := device.Fire(ctx, klaxon.IntegrationAlert{AlertID: "tank-3-level", Title: "Tank 3", Message: "level below 10 %", Severity: "warning"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fired.Outcome)
	if _, err := device.ResolveAlert(ctx, "tank-3-level"); err != nil {
		log.Fatal(err)
	}
	// Output: created
}

func ExampleIntegration_Heartbeat() {
	device, err := klaxon.NewIntegration(klaxon.IntegrationOptions{ID: os.Getenv("KLAXON_INTEGRATION_ID"), Secret: os.Getenv("KLAXON_INTEGRATION_SECRET")})
	if err != nil {
		log.Fatal(err)
	}
	// In a service: ping every minute until shutdown; Heartbeat returns at once.
	ctx, stop := context.WithCancel(context.Background())
	beat := device.Heartbeat(ctx, "line-3-plc", time.Minute, klaxon.HeartbeatOptions{
		OnError: func(err error) { log.Printf("heartbeat: %v", err) },
	})
	// ... the service runs ...
	stop()
	<-beat.Done()
}
