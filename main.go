// Command service is a self-hosted backend for A/B-test campaigns, content
// blocks, audiences, event logging, form submissions and signed webhooks.
package main

import (
	"context"
	_ "embed"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // campaign timezones must resolve on hosts without zoneinfo

	"service/cmd"
)

// schema is the complete current schema, which `service migrate schema`
// prints. It lives at the top of the tree so that it is the first thing a
// reader finds; store's TestSchema keeps it equal to the migrations.
//
//go:embed schema.sql
var schema string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.Execute(ctx, schema)
	stop()
	if err != nil {
		os.Exit(cmd.ExitCode(err))
	}
}
