package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"service/handlers"
	"service/store"
)

// Config is everything serve reads from flags and the environment.
type Config struct {
	DB                string
	Addr              string
	SchedulerInterval time.Duration
	AudienceInterval  time.Duration
	WebhookRetryBase  time.Duration
	WebhookTimeout    time.Duration
	Retention         time.Duration
	ShutdownTimeout   time.Duration
	LogLevel          string
	PprofAddr         string
}

func newServeCmd() *cobra.Command {
	var c Config
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and run the schedulers and the webhook dispatcher",
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&c.DB, "db", "data.db", "path of the SQLite database file")
	f.StringVar(&c.Addr, "addr", ":8080", "address to listen on")
	f.DurationVar(&c.SchedulerInterval, "scheduler-interval", time.Minute, "how often the campaign scheduler starts and completes campaigns")
	f.DurationVar(&c.AudienceInterval, "audience-interval", 5*time.Minute, "how often audience counts are recomputed")
	f.DurationVar(&c.WebhookRetryBase, "webhook-retry-base", 2*time.Minute, "first webhook retry delay; retry k waits base*2^(k-1)")
	f.DurationVar(&c.WebhookTimeout, "webhook-timeout", 30*time.Second, "default delivery timeout of new webhooks")
	f.DurationVar(&c.Retention, "retention", 2160*time.Hour, "how long logged events are kept")
	f.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may take to finish on shutdown")
	f.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&c.PprofAddr, "pprof-addr", "", "if set, serve Go's /debug/pprof profiles on this separate address (keep it private)")
	envFlags(f) // every serve flag is configuration
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return Serve(cmd.Context(), c, cmd.ErrOrStderr(), nil)
	}
	return cmd
}

// Serve runs the service until ctx ends: it opens and migrates the
// database, serves HTTP and runs the background workers under one context.
// ready, when set, receives the bound address once requests are accepted.
func Serve(ctx context.Context, c Config, logOut interface{ Write([]byte) (int, error) }, ready func(addr string)) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if logOut == nil {
		logOut = os.Stderr
	}
	logs := newLogBuffer(logOut)
	defer logs.Close()
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))
	if err := c.validate(); err != nil {
		return err
	}
	// The live heap is small (caches and in-flight requests) while the hot
	// paths allocate per request, so the default GOGC=100 collects very
	// often; 400 trades a few MiB for fewer collections and a lower p99.
	// An explicit GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}

	if err := checkDBDir(c.DB); err != nil {
		return err
	}
	db, err := store.Open(ctx, c.DB)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()

	srv := handlers.New(db, log)
	srv.WebhookTimeout = c.WebhookTimeout
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	// Workers stop on their own context, cancelled only after the HTTP
	// server has drained, so an in-flight request never finds them gone.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g, gctx := errgroup.WithContext(workCtx)
	for _, w := range workers(c, db, log) {
		g.Go(func() error { return w(gctx) })
	}

	if c.PprofAddr != "" {
		// A separate listener, so profiles are never reachable through the
		// API's address.
		pl, err := net.Listen("tcp", c.PprofAddr)
		if err != nil {
			return fmt.Errorf("--pprof-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		ps := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go ps.Serve(pl)
		defer ps.Close()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "db", c.DB, "version", Version)
	logs.Flush() // whoever waits for this line should not wait for the ticker
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case <-gctx.Done():
		err = context.Cause(gctx)
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	if e := hs.Shutdown(sctx); e != nil {
		log.Warn("http shutdown", "err", e)
	}
	stopWork()
	if e := g.Wait(); e != nil && !errors.Is(e, context.Canceled) {
		err = errors.Join(err, e)
	}
	// The database closes last (deferred), after every user of it stopped.
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("stopped")
	return err
}

func (c Config) validate() error {
	for name, d := range map[string]time.Duration{
		"--scheduler-interval": c.SchedulerInterval, "--audience-interval": c.AudienceInterval,
		"--webhook-retry-base": c.WebhookRetryBase, "--webhook-timeout": c.WebhookTimeout,
		"--retention": c.Retention, "--shutdown-timeout": c.ShutdownTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	return nil
}
