// Command klaxon is the device CLI of the Klaxon gateway: send, read,
// acknowledge and resolve alerts with an API key, ping heartbeats by their
// ping URL (around a wrapped command), and fire or resolve alerts through a
// signed integration. One static binary per platform, standard library only;
// the box's own admin commands stay in the TypeScript CLI.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
)

// Set at build time: go build -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

func versionText() string {
	return fmt.Sprintf("klaxon %s (commit %s, %s/%s)", version, commit, runtime.GOOS, runtime.GOARCH)
}

// console is where a run reads and writes, so tests run the CLI in-process.
type console struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            func(string) string
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], console{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, env: os.Getenv}))
}
