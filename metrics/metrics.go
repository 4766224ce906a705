// Package metrics exposes the service's Prometheus metrics. It is the only
// package that imports the Prometheus client: the store, the handlers, the
// scheduler and the webhook dispatcher report through plain hook funcs and
// interfaces that cmd wires to a *Metrics, and the figures that live in the
// database (delivery backlog, file sizes) are read at scrape time.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"service/store"
)

// Metrics holds every series and the registry they are served from.
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	batchSize     prometheus.Histogram
	commitLatency prometheus.Histogram
	events        prometheus.Counter
	impressions   prometheus.Counter
	deliveries    *prometheus.CounterVec
	schedRuns     *prometheus.CounterVec
	schedMoves    *prometheus.CounterVec
	rateLimited   *prometheus.CounterVec
	rateFallback  prometheus.Counter

	// series caches the labelled children per (route, method, status), so
	// a request costs two atomic adds rather than two label-hash lookups.
	series sync.Map // reqKey -> *reqSeries
}

type reqKey struct {
	route, method string
	status        int
}

type reqSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// New registers every series, the Go runtime and process collectors, and a
// collector that reads the delivery backlog and file sizes of db at each
// scrape.
func New(db *store.DB) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "service_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "service_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route pattern, method and status.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method", "status"})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "service_store_group_commit_size",
		Help:    "Operations (events, impressions, profile merges) carried by one group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.commitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "service_store_group_commit_duration_seconds",
		Help:    "Time one group commit held the writer, retries of a failed batch included.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	})
	m.events = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "service_events_written_total",
		Help: "Events committed to the database (duplicates by logId excluded).",
	})
	m.impressions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "service_impressions_written_total",
		Help: "Impressions committed to the database: first assignments of a user to a variant.",
	})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "service_webhook_deliveries_total",
		Help: "Webhook delivery attempts recorded, by outcome (success: a 2xx answer; failure: anything else).",
	}, []string{"outcome"})
	m.schedRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "service_scheduler_runs_total",
		Help: "Campaign scheduler runs, by result (ok or error).",
	}, []string{"result"})
	m.schedMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "service_scheduler_moves_total",
		Help: "Campaigns the scheduler moved, by move (started or completed).",
	}, []string{"move"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "service_rate_limited_total",
		Help: "Requests refused with 429 RATE_LIMIT_EXCEEDED, by app.",
	}, []string{"app"})
	m.rateFallback = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "service_rate_limit_fallback_total",
		Help: "Requests whose rate limit this process judged on its own because the shared count in PostgreSQL did not answer.",
	})
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.batchSize, m.commitLatency,
		m.events, m.impressions, m.deliveries, m.schedRuns, m.schedMoves, m.rateLimited, m.rateFallback} {
		f(c)
	}
	// Zero series exist from the start, so rate() and alerts see them
	// before the first occurrence.
	for _, o := range []string{"success", "failure"} {
		m.deliveries.WithLabelValues(o)
	}
	for _, r := range []string{"ok", "error"} {
		m.schedRuns.WithLabelValues(r)
	}
	for _, mv := range []string{"started", "completed"} {
		m.schedMoves.WithLabelValues(mv)
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if db != nil {
		f(&dbCollector{db: db})
		f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "service_leader",
			Help: "1 while this process leads the scheduled work (campaign scheduler, audience recount, retention), else 0.",
		}, func() float64 {
			if db.Leading() {
				return 1
			}
			return 0
		}))
	}
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is where the series live; tests gather from it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request implements handlers.Observer.
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	k := reqKey{route, method, status}
	v, ok := m.series.Load(k)
	if !ok {
		code := strconv.Itoa(status)
		v, _ = m.series.LoadOrStore(k, &reqSeries{
			count:   m.requests.WithLabelValues(route, method, code),
			latency: m.latency.WithLabelValues(route, method, code),
		})
	}
	s := v.(*reqSeries)
	s.count.Inc()
	s.latency.Observe(took.Seconds())
}

// RateLimited implements handlers.Observer.
func (m *Metrics) RateLimited(appID int64) {
	m.rateLimited.WithLabelValues(strconv.FormatInt(appID, 10)).Inc()
}

// RateLimitFallback implements handlers.Observer.
func (m *Metrics) RateLimitFallback() { m.rateFallback.Inc() }

// Store returns the hooks for store.DB.Observe.
func (m *Metrics) Store() *store.Observer {
	return &store.Observer{
		Batch: func(size int, took time.Duration) {
			m.batchSize.Observe(float64(size))
			m.commitLatency.Observe(took.Seconds())
		},
		Written: func(events, impressions int) {
			if events > 0 {
				m.events.Add(float64(events))
			}
			if impressions > 0 {
				m.impressions.Add(float64(impressions))
			}
		},
	}
}

// Delivery is the hook for webhooks.Dispatcher.Observe.
func (m *Metrics) Delivery(outcome string) { m.deliveries.WithLabelValues(outcome).Inc() }

// Schedule is the hook for scheduler.Campaigns.Observe.
func (m *Metrics) Schedule(started, completed int, err error) {
	if err != nil {
		m.schedRuns.WithLabelValues("error").Inc()
		return
	}
	m.schedRuns.WithLabelValues("ok").Inc()
	m.schedMoves.WithLabelValues("started").Add(float64(started))
	m.schedMoves.WithLabelValues("completed").Add(float64(completed))
}

// dbCollector reads what the database knows at scrape time: a counter kept
// in memory would start from zero after a restart, while a backlog of
// deliveries survives it.
type dbCollector struct{ db *store.DB }

var (
	queueDepthDesc = prometheus.NewDesc("service_webhook_queue_depth",
		"Webhook deliveries pending (first tries and retries).", nil, nil)
	oldestDesc = prometheus.NewDesc("service_webhook_oldest_pending_age_seconds",
		"Age of the oldest pending webhook delivery; 0 when none is pending.", nil, nil)
	dbSizeDesc = prometheus.NewDesc("service_db_size_bytes",
		"Size of the SQLite database file.", nil, nil)
	walSizeDesc = prometheus.NewDesc("service_db_wal_size_bytes",
		"Size of the SQLite write-ahead log (-wal file).", nil, nil)
)

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- oldestDesc
	ch <- dbSizeDesc
	ch <- walSizeDesc
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, oldest, err := c.db.DeliveryBacklog(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
	} else {
		age := 0.0
		if !oldest.IsZero() {
			age = max(0, time.Since(oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(n))
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
	}
	if main, wal, err := c.db.FileSizes(); err != nil {
		ch <- prometheus.NewInvalidMetric(dbSizeDesc, err)
	} else {
		ch <- prometheus.MustNewConstMetric(dbSizeDesc, prometheus.GaugeValue, float64(main))
		ch <- prometheus.MustNewConstMetric(walSizeDesc, prometheus.GaugeValue, float64(wal))
	}
}
