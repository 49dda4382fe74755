package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillhost/skillhost/packs"
	"github.com/skillhost/skillhost/registry"
)

// MetricsPath is where the Prometheus metrics are served.
const MetricsPath = "/metrics"

// noTenant labels what the engine does for no configured tenant (its own
// run, a reload's index sync).
const noTenant = "-"

// ops is the server's operations side: the audit log, the metrics and
// the traces. It reads every call the engine reports (observe) and the
// server's own decisions (quota refusals, reloads, compilation).
type ops struct {
	s            *Server
	audit        *auditLog
	metricsToken [32]byte // sha256 of Options.MetricsToken; zero: none
	tracer       trace.Tracer
	prop         propagation.TextMapPropagator

	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	errs      *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	instTime  *prometheus.HistogramVec
	fuel      *prometheus.CounterVec
	search    *prometheus.HistogramVec
	refusals  *prometheus.CounterVec
	compile   prometheus.Histogram
	compiled  prometheus.Gauge
	reloads   *prometheus.CounterVec
	reloadDur prometheus.Histogram
	capCalls  *prometheus.CounterVec
	capTime   *prometheus.HistogramVec
	limitRefs *prometheus.CounterVec
	sessions  *prometheus.GaugeVec
	evicted   *prometheus.CounterVec
	conns     prometheus.Gauge
	// namespaces are the engine's capability providers', fixed for its
	// life: the only namespace label values.
	namespaces map[string]bool
}

// newOps makes the operations side of s: it opens the audit log and
// registers the metrics in a registry of the server's own.
func newOps(s *Server, opts *Options) (*ops, error) {
	o := &ops{s: s, reg: prometheus.NewRegistry(), prop: propagation.TraceContext{}, namespaces: map[string]bool{}}
	for _, ns := range s.e.Services() {
		o.namespaces[ns] = true
	}
	stdout := opts.Stdout
	if stdout == nil {
		stdout = os.Stdout
	}
	var err error
	if o.audit, err = openAuditLog(s.cfg.Server.AuditLog, stdout); err != nil {
		return nil, err
	}
	if opts.MetricsToken != "" {
		o.metricsToken = sha256.Sum256([]byte(opts.MetricsToken))
	}
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	o.tracer = tp.Tracer("github.com/skillhost/skillhost/server")

	callBuckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	o.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_tool_calls_total",
		Help: "Tool calls finished, by tenant, kind of tool (wasm, native, builtin) and outcome (ok, error)."},
		[]string{"tenant", "kind", "outcome"})
	o.errs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_tool_errors_total",
		Help: "Tool calls that ended in an error, by tenant and error code."}, []string{"tenant", "code"})
	o.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skillhost_tool_call_duration_seconds",
		Help: "Time of a whole tool call, argument validation included, by tenant and kind of tool.", Buckets: callBuckets},
		[]string{"tenant", "kind"})
	o.instTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skillhost_instance_seconds",
		Help: "Time to give a Wasm call its instance (instantiation and initialisation, or a snapshot restore), by tenant.", Buckets: callBuckets},
		[]string{"tenant"})
	o.fuel = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_fuel_total",
		Help: "Instructions run by metered Wasm calls, by tenant."}, []string{"tenant"})
	o.search = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skillhost_search_duration_seconds",
		Help: "Time of a call of a discovery tool (tool_search, skill_search, skill_get, skill_list), by tenant and tool.", Buckets: callBuckets},
		[]string{"tenant", "tool"})
	o.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_quota_refusals_total",
		Help: "Tool calls refused by a tenant's quota, by tenant and quota."}, []string{"tenant", "quota"})
	o.compile = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "skillhost_module_compile_seconds",
		Help:    "Time to load one pack module into the host when warming (compilation, or reading it from the compilation cache).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})
	o.compiled = prometheus.NewGauge(prometheus.GaugeOpts{Name: "skillhost_modules_compiled",
		Help: "Pack modules compiled by the last warm-up."})
	o.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_reloads_total",
		Help: "Reloads of the packs, by result (ok, error)."}, []string{"result"})
	o.reloadDur = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "skillhost_reload_seconds",
		Help: "Time of a reload of the packs, compilation of changed modules included.", Buckets: prometheus.DefBuckets})
	o.capCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_capability_calls_total",
		Help: "Capability calls (a guest's capability_call) a provider served, by tenant, namespace and outcome (ok, error)."},
		[]string{"tenant", "namespace", "outcome"})
	o.capTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "skillhost_capability_call_duration_seconds",
		Help: "Time of a capability call, by tenant and namespace.", Buckets: callBuckets}, []string{"tenant", "namespace"})
	o.limitRefs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_limit_refusals_total",
		Help: "Requests and connections refused by a [server] limit, by tenant (\"-\" before authentication) and limit " +
			"(sessions, tenant_sessions, session_streams, client_conns, read_timeout, write_timeout, request_keys, origin, host)."},
		[]string{"tenant", "limit"})
	o.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "skillhost_sessions",
		Help: "MCP sessions open over HTTP, by tenant."}, []string{"tenant"})
	o.evicted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "skillhost_session_evictions_total",
		Help: "Idle sessions closed to open a new one of the same tenant (max_tenant_sessions), by tenant."}, []string{"tenant"})
	o.conns = prometheus.NewGauge(prometheus.GaugeOpts{Name: "skillhost_http_connections",
		Help: "HTTP connections open on the server's listener (Server.Listener)."})
	s.sessions.onChange = func(tenant string, open int) {
		o.sessions.WithLabelValues(o.tenantLabel(tenant)).Set(float64(open))
	}
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_ready",
		Help: "1 when the server is ready (modules compiled and indexed, not draining), else 0."}, func() float64 {
		if s.ready.Load() {
			return 1
		}
		return 0
	})
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_held_memory_bytes",
		Help: "Memory held between calls (idle warm instances and snapshots), as charged to the memory budget."}, func() float64 {
		return float64(s.e.MemoryStats().Held)
	})
	budget := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_memory_budget_bytes",
		Help: "The memory budget: held memory beyond it is released, least recently used first."}, func() float64 {
		return float64(s.e.MemoryStats().Budget)
	})
	evictions := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "skillhost_memory_evictions_total",
		Help: "Idle instances and snapshots released to stay within the memory budget."}, func() float64 {
		return float64(s.e.MemoryStats().Evictions)
	})
	o.reg.MustRegister(o.calls, o.errs, o.latency, o.instTime, o.fuel, o.search, o.refusals, o.compile, o.compiled,
		o.reloads, o.reloadDur, o.capCalls, o.capTime, o.limitRefs, o.sessions, o.evicted, o.conns, ready, held, budget, evictions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, id := range s.tenantIDs() {
		t := s.tenants[id]
		o.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "skillhost_calls_in_flight",
			Help: "Tool calls of a tenant running now.", ConstLabels: prometheus.Labels{"tenant": id}},
			func() float64 {
				t.quota.mu.Lock()
				defer t.quota.mu.Unlock()
				return float64(t.quota.inFlight)
			}))
	}
	return o, nil
}

// tenantLabel is the tenant label of a run's tenant: only a configured
// tenant's id is ever a label value.
func (o *ops) tenantLabel(id string) string {
	if _, ok := o.s.tenants[id]; ok {
		return id
	}
	return noTenant
}

// call accounts one finished call: metrics, audit log, and the spans of
// its phases under the span of the call (see startCall).
func (o *ops) call(ctx context.Context, e registry.Event) {
	c := e.Call
	tenant := o.tenantLabel(e.Run.Tenant)
	o.calls.WithLabelValues(tenant, string(c.Kind), c.Outcome).Inc()
	if c.Outcome != "ok" {
		code := string(c.Code)
		if code == "" {
			code = "unknown"
		}
		o.errs.WithLabelValues(tenant, code).Inc()
	}
	o.latency.WithLabelValues(tenant, string(c.Kind)).Observe(c.Duration.Seconds())
	if c.Kind == registry.KindWasm {
		o.instTime.WithLabelValues(tenant).Observe(c.Instantiate.Seconds())
		if c.Fuel > 0 {
			o.fuel.WithLabelValues(tenant).Add(float64(c.Fuel))
		}
	}
	if registry.UsesIndex(c.Tool) {
		o.search.WithLabelValues(tenant, c.Tool).Observe(c.Duration.Seconds())
	}
	o.phaseSpans(ctx, e)
	if o.audit != nil {
		t, _ := o.s.e.Tool(c.Tool)
		var narrow *packs.PackGrant
		if tn := o.s.tenants[e.Run.Tenant]; tn != nil && t != nil {
			if pg, ok := tn.Grants[t.Pack]; ok {
				narrow = &pg
			}
		}
		if err := o.audit.write(o.audit.record(e, t, narrow)); err != nil {
			o.s.log.Error("audit log", "err", err)
		}
	}
}

// capability accounts a capability_call the engine's providers answered
// (an EventCapabilityCall). Only the namespace of a provider the engine
// has becomes a label value, never one a guest made up.
func (o *ops) capability(e registry.Event) {
	id, _ := e.Fields["capability"].(string)
	ns, _, _ := strings.Cut(id, ".")
	if !o.namespaces[ns] {
		return
	}
	outcome, _ := e.Fields["outcome"].(string)
	if outcome != "ok" {
		outcome = "error"
	}
	ms, _ := e.Fields["duration_ms"].(float64)
	tenant := o.tenantLabel(e.Run.Tenant)
	o.capCalls.WithLabelValues(tenant, ns, outcome).Inc()
	o.capTime.WithLabelValues(tenant, ns).Observe(ms / 1000)
}

// refused counts a call a tenant's quota refused.
func (o *ops) refused(t *tenant, q *QuotaError) {
	o.refusals.WithLabelValues(t.ID, q.Quota).Inc()
}

// limitRefused counts a request or connection a [server] limit refused.
func (o *ops) limitRefused(tenant, limit string) {
	o.limitRefs.WithLabelValues(o.tenantLabel(tenant), limit).Inc()
}

// sessionEvicted counts an idle session closed to make room.
func (o *ops) sessionEvicted(tenant string) {
	o.evicted.WithLabelValues(o.tenantLabel(tenant)).Inc()
}

// traceRequest starts the span of an HTTP request (continuing the
// client's trace when it sends a traceparent) and writes that span's
// context back into the request's headers: the MCP SDK hands a call the
// request's headers, not its context, and startCall reads them there.
func (o *ops) traceRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := o.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := o.tracer.Start(ctx, "mcp.request "+r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		defer span.End()
		r = r.Clone(ctx)
		o.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets the MCP handler stream through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// startCall starts the span of one tool call of a session's run: a child
// of the HTTP request's span when the call came over HTTP (traceRequest
// put it in the headers), of ctx's span otherwise.
func (o *ops) startCall(ctx context.Context, ss *session, name string, h http.Header) (context.Context, trace.Span) {
	if h.Get("Traceparent") != "" {
		// The request's own span, even when ctx carries another: a
		// session's context may be that of the request that opened it.
		ctx = o.prop.Extract(ctx, propagation.HeaderCarrier(h))
	}
	return o.tracer.Start(ctx, "tool_call "+name, trace.WithAttributes(
		attribute.String("skillhost.tenant", ss.t.ID), attribute.String("skillhost.session", ss.id),
		attribute.String("skillhost.tool", name)))
}

// endCall ends a call's span with how it ended.
func endCall(span trace.Span, isError bool, err error) {
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case isError:
		span.SetStatus(codes.Error, "tool error")
	}
	span.End()
}

// phaseSpans adds the phases of a finished call under the span in ctx:
// validation, instance and guest, laid end to end from the call's
// timings. The registry does not trace inside a call; it reports how long
// each phase took, and the spans are drawn from that (RATIONALE.md). A
// nested call (a guest's tool_call) gets a span of its own around its
// phases, under the client's call whatever its depth: it ends, and is
// reported, before the call that made it.
func (o *ops) phaseSpans(ctx context.Context, e registry.Event) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() || !parent.IsRecording() {
		return
	}
	c := e.Call
	end := e.Time
	start := end.Add(-c.Duration)
	if c.Depth > 0 {
		var span trace.Span
		ctx, span = o.tracer.Start(ctx, "tool_call "+c.Tool, trace.WithTimestamp(start), trace.WithAttributes(
			attribute.String("skillhost.tool", c.Tool), attribute.Int("skillhost.depth", c.Depth)))
		defer span.End(trace.WithTimestamp(end))
	} else {
		parent.SetAttributes(attribute.String("skillhost.kind", string(c.Kind)), attribute.String("skillhost.outcome", c.Outcome))
		if c.FuelCounted {
			parent.SetAttributes(attribute.Int64("skillhost.fuel", c.Fuel))
		}
		if c.Code != "" {
			parent.SetAttributes(attribute.String("skillhost.code", string(c.Code)))
		}
	}
	validation := max(0, c.Duration-c.Instantiate-c.Execute)
	at := start
	phase := func(name string, d time.Duration) {
		_, s := o.tracer.Start(ctx, name, trace.WithTimestamp(at))
		at = at.Add(d)
		s.End(trace.WithTimestamp(at))
	}
	phase("validation", validation)
	if c.Kind == registry.KindWasm {
		phase("instance", c.Instantiate)
		phase("guest", c.Execute)
	} else {
		phase("execute", c.Execute)
	}
}

// serveMetrics serves the metrics to the operator. A server without
// authentication (local, on loopback) serves them to anyone who reaches
// it; a server with tenants or OAuth only to a request bearing the
// metrics token, never to a tenant's API key or an access token, and not
// at all without a metrics token.
func (o *ops) serveMetrics() http.Handler {
	h := promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.s.open() {
			if o.metricsToken == ([32]byte{}) {
				http.Error(w, "Not Found: metrics are off on a server with authentication until the operator sets a metrics token (SKILLHOST_METRICS_TOKEN)", http.StatusNotFound)
				return
			}
			key, _ := bearer(r)
			sum := sha256.Sum256([]byte(key))
			if subtle.ConstantTimeCompare(sum[:], o.metricsToken[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="skillhost-metrics"`)
				http.Error(w, "Unauthorized: the metrics need the operator's metrics token as Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Close closes the audit log. Call it after Shutdown, once no call can end
// any more. The engine's capability provider commands stop with the
// engine (skillhost.Engine.Close).
func (s *Server) Close() error {
	if s.ops == nil {
		return nil
	}
	return s.ops.audit.close()
}
