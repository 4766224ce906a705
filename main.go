// Command service is a self-hosted backend for A/B-test campaigns, content
// blocks, audiences, event logging, form submissions and signed webhooks.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // campaign timezones must resolve on hosts without zoneinfo

	"service/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.Execute(ctx)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
