package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	klaxon "github.com/klaxon/klaxon-go"
)

func pingText(answer *klaxon.PingAnswer) string {
	text := fmt.Sprintf("pinged %s: %s", answer.Name, answer.Status)
	if answer.ExpectedAt != nil {
		text += ", next ping expected by " + localTime(*answer.ExpectedAt)
	}
	return text
}

// runHeartbeatPing pings a heartbeat by name with the API key (scope notifications:send).
func runHeartbeatPing(in *invocation) error {
	client, err := in.client()
	if err != nil {
		return err
	}
	answer, err := client.PingHeartbeat(in.ctx, in.args[0])
	if err != nil {
		return err
	}
	return in.print(answer.Raw, func() string { return pingText(answer) })
}

// runHeartbeat pings a heartbeat's keyless ping URL, or runs a command between
// /start and the ping (exit code 0) or /fail (any other).
func runHeartbeat(in *invocation) error {
	conn, err := in.connection()
	if err != nil {
		return err
	}
	pinger, err := klaxon.NewPingURL(in.args[0], klaxon.PingURLOptions{Retries: conn.libraryRetries(), Timeout: conn.timeout, OnRetry: conn.onRetry})
	if err != nil {
		return usageError("the ping URL must start with http:// or https://, got %q", in.args[0])
	}
	if len(in.wrapped) == 0 {
		answer, err := pinger.Ping(in.ctx)
		if err != nil {
			return err
		}
		return in.print(answer.Raw, func() string { return pingText(answer) })
	}
	return wrap(in, pinger)
}

// wrap runs the wrapped command and exits with its code. Pings that fail are
// reported on stderr and never stop or change the job: monitoring must not
// break what it watches. Its stdout is the command's alone.
func wrap(in *invocation, pinger *klaxon.PingURL) error {
	if _, err := pinger.Start(in.ctx); err != nil {
		fmt.Fprintf(in.console.stderr, "klaxon: /start not recorded: %s\n", asFailure(err).message)
	}
	code := runWrapped(in)
	if code == 0 {
		if _, err := pinger.Ping(in.ctx); err != nil {
			fmt.Fprintf(in.console.stderr, "klaxon: the ping after success was not recorded: %s\n", asFailure(err).message)
		}
	} else if answer, err := pinger.Fail(in.ctx, code); err != nil {
		fmt.Fprintf(in.console.stderr, "klaxon: the command exited with %d and /fail was not recorded: %s\n", code, asFailure(err).message)
	} else {
		fmt.Fprintf(in.console.stderr, "klaxon: the command exited with %d: reported to heartbeat %s (%s)\n", code, answer.Name, answer.Status)
	}
	return &cliError{code: code}
}

// runWrapped runs the command with this process's standard streams and returns
// its exit code: 128+n when signal n ended it, 127 when it could not be found,
// 126 when it could not be started, as shells report them.
func runWrapped(in *invocation) int {
	cmd := exec.Command(in.wrapped[0], in.wrapped[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in.console.stdin, in.console.stdout, in.console.stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(in.console.stderr, "klaxon: cannot run %s: %v\n", in.wrapped[0], err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	// An interrupt or a stop is passed on: the command ends as it would alone,
	// and klaxon lives on to report how it ended.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(signals)
		close(signals)
	}()
	go func() {
		for sig := range signals {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	if err != nil && cmd.ProcessState.ExitCode() < 0 {
		return 126
	}
	return cmd.ProcessState.ExitCode()
}
