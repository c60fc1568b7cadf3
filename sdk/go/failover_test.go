package klaxon_test

import (
	"context"
	"errors"
	"testing"

	klaxon "github.com/klaxon/klaxon-go"
	"github.com/klaxon/klaxon-go/internal/testgateway"
)

// The two boxes of a pair: standbyURL answers every route 503 standby with Link: <gatewayURL>; rel="active".

func pairClient(t *testing.T, urls ...string) *klaxon.Client {
	t.Helper()
	c, err := klaxon.NewWithOptions(klaxon.Options{URLs: urls, APIKey: adminKey, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestASendToTheStandbyLandsOnceOnTheActiveWhichLaterCallsStartAt(t *testing.T) {
	ctx := context.Background()
	standby := startFlakyProxyTo(t, standbyURL)
	c := pairClient(t, standby.URL, gatewayURL)
	n, err := c.Send(ctx, klaxon.Alert{RecipientUUID: alice, Message: "pair: standby first", Priority: klaxon.PriorityHigh})
	if err != nil {
		t.Fatal(err)
	}
	if n.Replayed || gateway.Landed("pair: standby first") != 1 {
		t.Fatalf("landed %d times, replayed %v", gateway.Landed("pair: standby first"), n.Replayed)
	}
	if _, err := c.Get(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if seen := standby.requests(""); len(seen) != 1 {
		t.Fatalf("the standby was asked %d times; the second call should start at the active", len(seen))
	}
}

func TestABoxThatIsDownIsPassed(t *testing.T) {
	c := pairClient(t, testgateway.DeadURL(t), gatewayURL)
	if _, err := c.Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "pair: first box down", Priority: klaxon.PriorityHigh}); err != nil {
		t.Fatal(err)
	}
	if got := gateway.Landed("pair: first box down"); got != 1 {
		t.Fatalf("landed %d times", got)
	}
}

func TestARetryOnTheOtherBoxGetsTheFirstAnswer(t *testing.T) {
	// The first box stores the send and the answer is lost; the client moves on to the other box
	// (in a pair, the standby that took over the journal) with the same Idempotency-Key.
	lossy := startFlakyProxy(t)
	lossy.script(reply{lose: true})
	c := pairClient(t, lossy.URL, gatewayURL)
	n, err := c.Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "pair: answer lost", Priority: klaxon.PriorityHigh})
	if err != nil {
		t.Fatal(err)
	}
	if !n.Replayed || gateway.Landed("pair: answer lost") != 1 {
		t.Fatalf("replayed %v, landed %d times", n.Replayed, gateway.Landed("pair: answer lost"))
	}
}

func TestTheBoxTheStandbyNamesIsTriedNext(t *testing.T) {
	standby, unreachable := startFlakyProxyTo(t, standbyURL), startFlakyProxy(t)
	unreachable.script(reply{drop: true})
	c := pairClient(t, standby.URL, unreachable.URL, gatewayURL)
	if _, err := c.Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "pair: follow the link", Priority: klaxon.PriorityHigh}); err != nil {
		t.Fatal(err)
	}
	if seen := unreachable.requests(""); len(seen) != 0 {
		t.Fatalf("the box between was asked %d times before the one the Link names", len(seen))
	}
}

func TestALinkToABoxNotConfiguredIsNotFollowed(t *testing.T) {
	// The standby names gatewayURL, which this client was not given: the API key is not sent there.
	c := pairClient(t, standbyURL, testgateway.DeadURL(t))
	_, err := c.Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "pair: unknown active", Priority: klaxon.PriorityHigh})
	if !errors.Is(err, klaxon.ErrUnreachable) {
		t.Fatalf("want the last box's failure, got %v", err)
	}
	c = pairClient(t, standbyURL)
	_, err = c.Send(context.Background(), klaxon.Alert{RecipientUUID: alice, Message: "pair: unknown active", Priority: klaxon.PriorityHigh})
	var problem *klaxon.Error
	if !errors.As(err, &problem) || problem.Status != 503 || problem.Code != "standby" || problem.RetryAfter == 0 {
		t.Fatalf("want the standby's problem, got %v", err)
	}
	if got := gateway.Landed("pair: unknown active"); got != 0 {
		t.Fatalf("landed %d times on a box the client was not given", got)
	}
}
