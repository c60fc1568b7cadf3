package klaxon

import (
	"context"
	"math/rand"
	"sync"
	"time"
)

// HeartbeatOptions tune a heartbeat loop.
type HeartbeatOptions struct {
	// Jitter spreads pings of many devices: each wait is the period shortened by
	// up to this fraction (default 0.1), so a ping is never later than its period.
	Jitter float64
	// OnError is called (from the heartbeat's goroutine) when a ping fails after
	// its retries. The loop carries on: the next ping may succeed.
	OnError func(error)
}

// Heartbeat is a running heartbeat loop.
type Heartbeat struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	pings    int
	failures int
	lastErr  error
}

// Stop ends the loop and waits for its goroutine to finish.
func (h *Heartbeat) Stop() {
	h.cancel()
	<-h.done
}

// Done is closed when the loop has ended (its context ended or Stop was called).
func (h *Heartbeat) Done() <-chan struct{} { return h.done }

// Stats returns how many pings succeeded and failed so far, and the last failure.
func (h *Heartbeat) Stats() (pings, failures int, lastErr error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pings, h.failures, h.lastErr
}

// Heartbeat pings the heartbeat name every period (with the API key) in its own
// goroutine until ctx ends, and returns at once: a slow or unreachable gateway
// never blocks the caller.
func (c *Client) Heartbeat(ctx context.Context, name string, period time.Duration, opts HeartbeatOptions) *Heartbeat {
	return startHeartbeat(ctx, period, opts, func(ctx context.Context) error {
		_, err := c.PingHeartbeat(ctx, name)
		return err
	})
}

// Heartbeat pings the heartbeat name through the integration every period in
// its own goroutine until ctx ends, creating the heartbeat with that period on
// first use; it returns at once.
func (i *Integration) Heartbeat(ctx context.Context, name string, period time.Duration, opts HeartbeatOptions) *Heartbeat {
	return startHeartbeat(ctx, period, opts, func(ctx context.Context) error {
		_, err := i.PingHeartbeat(ctx, name, period)
		return err
	})
}

func startHeartbeat(parent context.Context, period time.Duration, opts HeartbeatOptions, ping func(context.Context) error) *Heartbeat {
	ctx, cancel := context.WithCancel(parent)
	h := &Heartbeat{cancel: cancel, done: make(chan struct{})}
	jitter := opts.Jitter
	if jitter <= 0 || jitter >= 1 {
		jitter = 0.1
	}
	go func() {
		defer close(h.done)
		for {
			// A ping may take at most one period, so slow answers never pile pings up.
			pingCtx, done := context.WithTimeout(ctx, period)
			err := ping(pingCtx)
			done()
			if ctx.Err() != nil {
				return
			}
			h.record(err)
			if err != nil && opts.OnError != nil {
				opts.OnError(err)
			}
			wait := time.Duration(float64(period) * (1 - rand.Float64()*jitter))
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}()
	return h
}

func (h *Heartbeat) record(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.failures++
		h.lastErr = err
	} else {
		h.pings++
	}
}
