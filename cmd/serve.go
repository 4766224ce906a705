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
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"service/dashboard"
	"service/handlers"
	"service/metrics"
	"service/netpolicy"
	"service/store"
)

// defaultMemoryLimit is the Go heap's soft limit when GOMEMLIMIT is unset.
const defaultMemoryLimit = 40 << 20

// Config is everything serve reads from flags and the environment.
type Config struct {
	DB                string
	Addr              string
	SchedulerInterval time.Duration
	AudienceInterval  time.Duration
	WebhookRetryBase  time.Duration
	WebhookTimeout    time.Duration
	Retention         time.Duration
	AuditRetention    time.Duration
	ShutdownTimeout   time.Duration
	// DrainDelay is how long a shutdown keeps serving, with /healthz
	// answering 503, before it stops taking connections: the time a load
	// balancer needs to notice. It is part of ShutdownTimeout.
	DrainDelay time.Duration
	// StreamHeartbeat is how often an idle ruleset stream carries a
	// comment line.
	StreamHeartbeat time.Duration
	// DBTimeout bounds a request's database work; 0 takes the store's
	// default.
	DBTimeout time.Duration
	LogLevel  string
	PprofAddr string

	// WebhookBlockPrivate also refuses loopback and private addresses as
	// webhook destinations.
	WebhookBlockPrivate bool
	// SecretKeyFile or SecretKey (SERVICE_SECRET_KEY) hold the key that
	// encrypts webhook secrets at rest; neither means plaintext.
	SecretKeyFile string
	SecretKey     string

	Metrics     bool
	MetricsAddr string

	// DefaultPlan is the plan of apps created without one, by any way in
	// (the API, the dashboard, apps create); it is kept in the database.
	DefaultPlan string

	// Command is how the binary was invoked ("./service", "go run ."),
	// for the hints serve logs; empty means "service".
	Command string

	// CheckpointProcess runs the database's checkpoints in a child process
	// of this binary (its hidden checkpointer command) instead of a
	// goroutine. serve sets it; a test binary that calls Serve cannot.
	CheckpointProcess bool
}

func newServeCmd() *cobra.Command {
	var c Config
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and run the schedulers and the webhook dispatcher",
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&c.DB, "db", "data.db", "path of the SQLite database file, or a postgres:// URL")
	f.StringVar(&c.Addr, "addr", ":8080", "address to listen on")
	f.DurationVar(&c.SchedulerInterval, "scheduler-interval", time.Minute, "how often the campaign scheduler starts and completes campaigns")
	f.DurationVar(&c.AudienceInterval, "audience-interval", 5*time.Minute, "how often audience counts are recomputed")
	f.DurationVar(&c.WebhookRetryBase, "webhook-retry-base", 2*time.Minute, "first webhook retry delay; retry k waits base*2^(k-1)")
	f.DurationVar(&c.WebhookTimeout, "webhook-timeout", 30*time.Second, "default delivery timeout of new webhooks")
	f.DurationVar(&c.Retention, "retention", 2160*time.Hour, "how long logged events are kept")
	f.DurationVar(&c.AuditRetention, "audit-retention", 8760*time.Hour, "how long audit log entries are kept (default 365 days)")
	f.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long in-flight requests may take to finish on shutdown")
	f.DurationVar(&c.DrainDelay, "drain-delay", 0, "on shutdown, how long to go on serving with /healthz answering 503, so a load balancer stops sending requests before the listener closes (part of --shutdown-timeout)")
	f.DurationVar(&c.StreamHeartbeat, "stream-heartbeat", handlers.DefaultStreamHeartbeat, "how often an idle ruleset stream (Server-Sent Events) carries a comment line, so that proxies do not close it")
	f.DurationVar(&c.DBTimeout, "db-timeout", store.DefaultTimeout, "how long a request's database work may take, waits for a connection included, before it answers 503 with Retry-After (on PostgreSQL also the sessions' lock_timeout and the writer's statement_timeout)")
	f.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&c.PprofAddr, "pprof-addr", "", "if set, serve Go's /debug/pprof profiles on this separate address (keep it private)")
	f.BoolVar(&c.WebhookBlockPrivate, "webhook-block-private", false, "refuse webhook deliveries to loopback and private addresses (switch on when apps are not all trusted with the host's network)")
	f.StringVar(&c.SecretKeyFile, "secret-key-file", "", "file holding the base64 key that encrypts webhook secrets at rest (or set "+envSecretKey+")")
	f.BoolVar(&c.Metrics, "metrics", false, "serve Prometheus metrics at GET /metrics on the API address (no key needed: keep the address private or use --metrics-addr)")
	f.StringVar(&c.MetricsAddr, "metrics-addr", "", "if set, serve Prometheus metrics at GET /metrics on this separate address instead")
	f.StringVar(&c.DefaultPlan, "default-plan", store.DefaultPlan, "plan of apps created without one, from the dashboard, the API or apps create: free, starter, pro or enterprise")
	envFlags(f) // every serve flag is configuration
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.SecretKey = os.Getenv(envSecretKey)
		c.CheckpointProcess = true
		c.Command = commandName()
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
	// Memory is bounded by a soft limit rather than bought with a high
	// GOGC: the live heap is small (bounded caches, in-flight requests), so
	// the default GOGC=100 collects cheaply, and the limit makes the
	// collector work harder before the process outgrows it. An explicit
	// GOMEMLIMIT still wins. SQLite's page caches live outside the Go heap
	// and outside this limit (see store.DSN).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}

	if err := checkDB(c.DB, true); err != nil {
		return err
	}
	opts := store.Options{Log: log, Timeout: c.DBTimeout}
	if c.CheckpointProcess {
		opts.CheckpointCommand = checkpointerCommand()
	}
	db, err := store.OpenWith(ctx, c.DB, opts)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	db.WebhookPolicy = netpolicy.Policy{BlockPrivate: c.WebhookBlockPrivate}
	// Kept in the database rather than in this process, so that the
	// command line's apps create, another process, follows it too.
	if err := db.SetDefaultPlan(ctx, c.DefaultPlan); err != nil {
		return fmt.Errorf("record the default plan: %w", err)
	}
	if err := setupSecrets(ctx, c, db, log); err != nil {
		return err
	}

	srv := handlers.New(db, log)
	srv.WebhookTimeout = c.WebhookTimeout
	srv.StreamHeartbeat = c.StreamHeartbeat
	srv.AccessLog = logs // the writer behind log's handler
	// The dashboard answers at / and its own paths; everything else,
	// /v1, /api/v1 and /healthz included, reaches the API unchanged.
	dash := dashboard.New(db, log)
	dash.WebhookTimeout = c.WebhookTimeout
	var handler http.Handler = dashboard.Mount(srv, dash)
	var mx *metrics.Metrics
	if c.Metrics || c.MetricsAddr != "" {
		mx = metrics.New(db)
		// Set before the database and server are shared with any goroutine.
		db.Observe = mx.Store()
		srv.Observe = mx
		if c.MetricsAddr != "" {
			stop, err := serveMetrics(c.MetricsAddr, mx, log)
			if err != nil {
				return err
			}
			defer stop()
		} else {
			handler = withMetrics(handler, mx)
		}
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for every answer to end, and a ruleset stream does not
	// end on its own: the streams end as the shutdown begins, and their
	// clients reconnect, to another replica behind a load balancer.
	hs.RegisterOnShutdown(srv.EndStreams)

	// Workers stop on their own context, cancelled only after the HTTP
	// server has drained, so an in-flight request never finds them gone.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	g, gctx := errgroup.WithContext(workCtx)
	leader, everywhere := workers(c, db, log, mx)
	for _, w := range everywhere {
		g.Go(func() error { return w(gctx) })
	}
	// The scheduled jobs stop, and the leadership is given back, as soon as
	// shutdown begins rather than after the drain: they serve no request,
	// and another process can take over meanwhile.
	leadCtx, stopLeading := context.WithCancel(gctx)
	defer stopLeading()
	g.Go(func() error { return leader.Run(leadCtx) })

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
	log.Info("serving", "addr", ln.Addr().String(), "db", store.Redacted(c.DB), "version", Version)
	command := c.Command
	if command == "" {
		command = "service"
	}
	if err := announceSetup(ctx, db, log, command, c.DB, ln.Addr().String()); err != nil {
		log.Error("dashboard setup link", "err", err)
	}
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
	// The drain: /healthz turns 503 at once, and connections are no longer
	// kept alive, so clients come back on new connections, which a load
	// balancer that follows /healthz sends elsewhere. Requests are still
	// answered for DrainDelay; then the listener closes and the requests
	// in flight finish, all within ShutdownTimeout.
	stopLeading()
	srv.Drain()
	hs.SetKeepAlivesEnabled(false)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	if c.DrainDelay > 0 && err == nil {
		log.Info("draining", "delay", c.DrainDelay.String())
		select {
		case <-time.After(c.DrainDelay):
		case err = <-serveErr:
		}
	}
	if e := hs.Shutdown(sctx); e != nil {
		log.Warn("http shutdown", "err", e)
	}
	// No request is served any more: the rate-limit requests this process
	// claimed and did not use go back to the other replicas.
	srv.Close()
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
		"--retention": c.Retention, "--audit-retention": c.AuditRetention, "--shutdown-timeout": c.ShutdownTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	if c.DBTimeout < 0 {
		return fmt.Errorf("--db-timeout must be positive")
	}
	if c.StreamHeartbeat < 0 {
		return fmt.Errorf("--stream-heartbeat must be positive")
	}
	if store.CheckPlan(c.DefaultPlan) != nil {
		return usagef("--default-plan (or %s) %q: must be one of %s", envName("default-plan"), c.DefaultPlan, strings.Join(store.Plans, ", "))
	}
	if c.DrainDelay < 0 || c.DrainDelay >= c.ShutdownTimeout {
		return fmt.Errorf("--drain-delay must be at least 0 and less than --shutdown-timeout (%s)", c.ShutdownTimeout)
	}
	return nil
}
