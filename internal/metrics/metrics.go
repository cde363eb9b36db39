// Package metrics is what GET /metrics shows: Prometheus collectors on a registry of their own
// (never the global default, so two servers in one test binary do not collide).
//
// Labels hold only bounded, stable names — a route template, a method, a status, a problem code,
// a parse stage — never a request id, a file name or anything read from a report.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ocrdraft/ocrdraft/internal/version"
	"github.com/ocrdraft/ocrdraft/schema"
)

const namespace = "ocrdraft"

// Metrics holds the service's collectors and the registry they are on. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry
	own *counting // the service's own collectors, as registered

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelInFlight prometheus.Gauge
	extracting    prometheus.Gauge
	queueWaiting  *prometheus.GaugeVec
	queueWait     *prometheus.HistogramVec
	overloaded    *prometheus.CounterVec

	pages            *prometheus.CounterVec
	pageAttempts     prometheus.Histogram
	promptTokens     prometheus.Counter
	completionTokens prometheus.Counter
	stages           *prometheus.CounterVec
	indicators       prometheus.Counter
	dropped          prometheus.Counter
	truncated        prometheus.Counter
	sentOnce         prometheus.Counter
	bytesIn          prometheus.Counter
	bytesSent        prometheus.Counter

	verifyPages            *prometheus.CounterVec
	verifyAttempts         prometheus.Counter
	verifyPromptTokens     prometheus.Counter
	verifyCompletionTokens prometheus.Counter
}

// New returns Metrics on a fresh registry that also carries the Go runtime and process
// collectors (process_resident_memory_bytes and the like).
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every name gets the ocrdraft_ prefix, and every collector is registered as it is made.
	own := &counting{Registerer: reg}
	f := promauto.With(prometheus.WrapRegistererWithPrefix(namespace+"_", own))
	// Request durations span a 5 ms probe and a 120 s multi-page extraction.
	httpBuckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120}
	m := &Metrics{
		reg: reg, own: own,
		httpRequests: f.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		httpDuration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time from the request's arrival to its answer, by route template and method.",
			Buckets: httpBuckets,
		}, []string{"route", "method"}),

		modelCalls: f.NewCounterVec(prometheus.CounterOpts{
			Name: "model_calls_total",
			Help: "Calls to the model endpoint (transport retries inside one call included), by outcome: ok, or the problem code.",
		}, []string{"outcome"}),
		modelDuration: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "model_call_duration_seconds",
			Help:    "Duration of one model call, retries and their waits included, by outcome.",
			Buckets: httpBuckets,
		}, []string{"outcome"}),
		modelInFlight: f.NewGauge(prometheus.GaugeOpts{
			Name: "model_calls_in_flight",
			Help: "Model calls under way now; never above OCR_MAX_INFLIGHT.",
		}),
		extracting: f.NewGauge(prometheus.GaugeOpts{
			Name: "extract_requests_in_flight",
			Help: "/v1/extract requests being worked on now; never above OCR_MAX_INFLIGHT.",
		}),
		queueWaiting: f.NewGaugeVec(prometheus.GaugeOpts{
			Name: "queue_waiting",
			Help: "Waiting for a slot now: requests for their turn (queue=request), model calls for theirs (queue=model), requests for room to read their bodies (queue=upload), /v1/parse and /v1/validate requests for theirs (queue=text).",
		}, []string{"queue"}),
		queueWait: f.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "queue_wait_seconds",
			Help:    "Time spent waiting for a slot, admitted or not, by queue.",
			Buckets: []float64{.001, .01, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"queue"}),
		overloaded: f.NewCounterVec(prometheus.CounterOpts{
			Name: "overloaded_total",
			Help: "Refused as 503 overloaded, by queue: after OCR_QUEUE_WAIT without a turn, or (queue=upload) without any upload moving on.",
		}, []string{"queue"}),

		pages: f.NewCounterVec(prometheus.CounterOpts{
			Name: "pages_total",
			Help: "Pages that reached the model, by outcome: ok, or the problem code.",
		}, []string{"outcome"}),
		pageAttempts: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "page_attempts",
			Help:    "Model calls per page, re-asks after an unusable reply included.",
			Buckets: []float64{1, 2, 3, 4, 5},
		}),
		promptTokens: f.NewCounter(prometheus.CounterOpts{
			Name: "model_prompt_tokens_total",
			Help: "Prompt tokens the model counted, images included.",
		}),
		completionTokens: f.NewCounter(prometheus.CounterOpts{
			Name: "model_completion_tokens_total",
			Help: "Completion tokens the model wrote.",
		}),
		stages: f.NewCounterVec(prometheus.CounterOpts{
			Name: "parse_stage_total",
			Help: "Pages by the stage their last reply needed: strict, fenced, extracted, repaired or failed.",
		}, []string{"stage"}),
		indicators: f.NewCounter(prometheus.CounterOpts{
			Name: "indicators_total",
			Help: "Indicators read from pages.",
		}),
		dropped: f.NewCounter(prometheus.CounterOpts{
			Name: "indicators_dropped_total",
			Help: "Items of replies left out as unusable (indicator_dropped warnings).",
		}),
		truncated: f.NewCounter(prometheus.CounterOpts{
			Name: "replies_truncated_total",
			Help: "Pages whose reply was cut off (output_truncated warnings).",
		}),
		verifyPages: f.NewCounterVec(prometheus.CounterOpts{
			Name: "verify_pages_total",
			Help: "Pages under OCR_VERIFY, by how their second read ended: agreed, disagreed, failed or skipped (flagged, and nothing on the page was).",
		}, []string{"status"}),
		verifyAttempts: f.NewCounter(prometheus.CounterOpts{
			Name: "verify_attempts_total",
			Help: "Model calls of second reads (OCR_VERIFY); also counted in model_calls_total.",
		}),
		verifyPromptTokens: f.NewCounter(prometheus.CounterOpts{
			Name: "verify_prompt_tokens_total",
			Help: "Prompt tokens of second reads, images included (not in model_prompt_tokens_total).",
		}),
		verifyCompletionTokens: f.NewCounter(prometheus.CounterOpts{
			Name: "verify_completion_tokens_total",
			Help: "Completion tokens of second reads (not in model_completion_tokens_total).",
		}),
		sentOnce: f.NewCounter(prometheus.CounterOpts{
			Name: "pages_sent_once_total",
			Help: "Pages sent to the model without a copy kept for a retry, because OCR_RETRY_MEMORY was in use.",
		}),
		bytesIn: f.NewCounter(prometheus.CounterOpts{
			Name: "image_in_bytes_total",
			Help: "Bytes of page images received.",
		}),
		bytesSent: f.NewCounter(prometheus.CounterOpts{
			Name: "image_sent_bytes_total",
			Help: "Bytes of page images sent to the model, after orientation and downscaling.",
		}),
	}
	// Every stage and queue shows from the start, at zero, so that rate() works before the first
	// of each.
	for _, st := range schema.ParseStages {
		m.stages.WithLabelValues(string(st))
	}
	for _, q := range []string{queueRequest, queueModel, queueUpload, queueText} {
		m.queueWaiting.WithLabelValues(q)
		m.overloaded.WithLabelValues(q)
	}
	// The build, as a constant 1 whose labels say which; a join on it puts the version beside
	// any other series (… * on(instance) group_left(version) ocrdraft_build_info).
	v := version.Read()
	f.NewGaugeVec(prometheus.GaugeOpts{
		Name: "build_info",
		Help: "Always 1; the labels name the running build: its version, commit and Go toolchain.",
	}, []string{"version", "revision", "goversion"}).WithLabelValues(v.Version, v.Revision, v.GoVersion).Set(1)
	return m
}

// Handler serves the registry in the Prometheus text format (or OpenMetrics, if asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Registry is the registry the collectors are on, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Request records one answered HTTP request. route is the route template ("/v1/extract"), or
// "unmatched" for a path no route knows, so that scanners cannot grow the label set.
func (m *Metrics) Request(route, method string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
	default:
		method = "other"
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// CallStarted records a model call getting its slot; the returned func records its end.
func (m *Metrics) CallStarted() (done func(outcome string, d time.Duration)) {
	m.modelInFlight.Inc()
	return func(outcome string, d time.Duration) {
		m.modelInFlight.Dec()
		m.modelCalls.WithLabelValues(outcome).Inc()
		m.modelDuration.WithLabelValues(outcome).Observe(d.Seconds())
	}
}

// The queues: /v1/extract requests waiting for their turn, model calls waiting for a slot, and
// requests waiting for room to read their bodies (OCR_UPLOAD_MEMORY).
const (
	queueRequest = "request"
	queueModel   = "model"
	queueUpload  = "upload"
	queueText    = "text" // /v1/parse and /v1/validate requests waiting for their turn
)

// Queued records a model call starting to wait for a slot; the returned func records the end of
// the wait: admitted, refused as overloaded (rejected), or given up by the caller.
func (m *Metrics) Queued() (done func(wait time.Duration, rejected bool)) {
	return m.queued(queueModel)
}

// RequestQueued records a /v1/extract request starting to wait for its turn, as Queued does for
// model calls.
func (m *Metrics) RequestQueued() (done func(wait time.Duration, rejected bool)) {
	return m.queued(queueRequest)
}

func (m *Metrics) queued(queue string) func(time.Duration, bool) {
	m.queueWaiting.WithLabelValues(queue).Inc()
	return func(wait time.Duration, rejected bool) {
		m.queueWaiting.WithLabelValues(queue).Dec()
		m.queueWait.WithLabelValues(queue).Observe(wait.Seconds())
		if rejected {
			m.overloaded.WithLabelValues(queue).Inc()
		}
	}
}

// UploadQueued records a /v1/extract request starting to wait for room to read its body, as
// Queued does for model calls. That wait has no bound but the request's deadline.
func (m *Metrics) UploadQueued() (done func(wait time.Duration, rejected bool)) {
	return m.queued(queueUpload)
}

// TextQueued records a /v1/parse or /v1/validate request starting to wait for its turn.
func (m *Metrics) TextQueued() (done func(wait time.Duration, rejected bool)) {
	return m.queued(queueText)
}

// Extracting records a /v1/extract request getting its turn; the returned func records its end.
func (m *Metrics) Extracting() (done func()) {
	m.extracting.Inc()
	return m.extracting.Dec
}

// Page records one page that reached the model; it is extract's Observer.
func (m *Metrics) Page(p schema.PageMeta) {
	outcome := "ok"
	if p.Error != "" {
		outcome = string(p.Error)
	}
	m.pages.WithLabelValues(outcome).Inc()
	m.pageAttempts.Observe(float64(p.Attempts))
	m.promptTokens.Add(count(p.Usage.PromptTokens))
	m.completionTokens.Add(count(p.Usage.CompletionTokens))
	if p.FinishReason != nil { // a reply came, so the parse stage means something
		m.stages.WithLabelValues(string(p.Stage)).Inc()
	}
	m.indicators.Add(count(p.Indicators))
	m.dropped.Add(count(p.Dropped))
	if p.Truncated {
		m.truncated.Inc()
	}
	if p.SentOnce {
		m.sentOnce.Inc()
	}
	m.bytesIn.Add(count(p.BytesIn))
	m.bytesSent.Add(count(p.BytesSent))
	if v := p.Verify; v != nil {
		m.verifyPages.WithLabelValues(string(v.Status)).Inc()
		m.verifyAttempts.Add(count(v.Attempts))
		m.verifyPromptTokens.Add(count(v.Usage.PromptTokens))
		m.verifyCompletionTokens.Add(count(v.Usage.CompletionTokens))
	}
}

// count is n for a counter, which panics on a negative Add: the token counts come from the
// upstream, and a page's metrics must never be what ends the process.
func count(n int) float64 { return float64(max(n, 0)) }

// counting is a Registerer that counts what is registered through it, so that a test can tell
// that the generated table in docs/operations.md lists every one of the service's own metrics.
type counting struct {
	prometheus.Registerer
	n int
}

func (c *counting) Register(col prometheus.Collector) error {
	c.n++
	return c.Registerer.Register(col)
}

func (c *counting) MustRegister(cs ...prometheus.Collector) {
	for _, col := range cs {
		if err := c.Register(col); err != nil {
			panic(err)
		}
	}
}
