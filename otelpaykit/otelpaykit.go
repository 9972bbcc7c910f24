package otelpaykit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	paykit "github.com/paykit-dev/paykit-go"
)

// ScopeName is the instrumentation scope of every tracer and meter the
// module creates, so that operators can filter or drop its telemetry.
const ScopeName = "github.com/paykit-dev/paykit-go/otelpaykit"

// Attribute keys of the module's own attributes. The HTTP ones are the
// OpenTelemetry semantic conventions' (semconv v1.39.0).
const (
	// OperationKey names the Client method, e.g. "CreatePayment".
	OperationKey = attribute.Key("paykit.operation")
	// OutcomeKey is the paykit.Outcome of a call.
	OutcomeKey = attribute.Key("paykit.outcome")
	// AttemptsKey is how many HTTP attempts a call made.
	AttemptsKey = attribute.Key("paykit.attempts")
	// WebhookKindKey is a delivery's kind: "payment", "payout" or "" when
	// the handler could not tell.
	WebhookKindKey = attribute.Key("paykit.webhook.kind")
	// WebhookOutcomeKey is the paykit.WebhookOutcome of a delivery.
	WebhookOutcomeKey = attribute.Key("paykit.webhook.outcome")
)

// Metric instrument names.
const (
	// MetricRequestDuration is the semantic conventions' HTTP client
	// histogram: one point per HTTP attempt, in seconds.
	MetricRequestDuration = "http.client.request.duration"
	// MetricCallDuration is one point per call, retries and read-backs
	// included, in seconds, by paykit.operation and paykit.outcome.
	MetricCallDuration = "paykit.client.call.duration"
	// MetricUnknownOutcomes counts calls that ended in
	// paykit.ErrUnknownOutcome, by paykit.operation: each one is a transfer
	// or withdrawal someone has to check by hand, worth an alert.
	MetricUnknownOutcomes = "paykit.client.unknown_outcomes"
	// MetricWebhookDeliveries counts webhook requests answered, by
	// paykit.webhook.kind, paykit.webhook.outcome and status code.
	MetricWebhookDeliveries = "paykit.webhook.deliveries"
)

// Error types that are not an API code or a transport error class.
const (
	// ErrorTypeUnknownOutcome is the error.type of a call that ended in
	// paykit.ErrUnknownOutcome; the API code or transport class behind it
	// is on the attempt span.
	ErrorTypeUnknownOutcome = "unknown_outcome"
)

// durationBuckets are the semantic conventions' advised boundaries for
// http.client.request.duration, extended to a minute for whole calls, which
// include retry waits.
var (
	attemptBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	callBuckets    = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}
)

// WithTelemetry makes the Client trace and measure every call: a span
// "paykit.<Operation>" (kind INTERNAL) per call, a CLIENT child span per
// HTTP attempt, and the metrics named by the Metric constants. A nil tp or
// mp means the global provider (otel.GetTracerProvider,
// otel.GetMeterProvider), looked up now.
//
// It is paykit.WithObserver with this module's Observer, so it composes
// with other observers as WithObserver documents; given twice (two
// providers, say) it records twice, each independently.
//
// Attributes carry no id, ext_id, amount, key, signature, token, card or
// phone number: URLs are the route templates (url.full is
// "https://host/v1/payments/{id}", never the concrete id), and failures are
// described by a class (error.type), never by the error's text, which may
// name an ext_id.
func WithTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) paykit.Option {
	return paykit.WithObserver(newObserver(tp, mp))
}

// observer turns paykit.Observer events into spans and metric points.
type observer struct {
	tracer     trace.Tracer
	attemptDur metric.Float64Histogram
	callDur    metric.Float64Histogram
	unknown    metric.Int64Counter
}

// callKey and attemptKey find this observer's spans in a context. They hold
// the observer so that two observers (or two WithTelemetry) in one Client
// never end each other's spans: trace.SpanFromContext would return
// whichever span was started last.
type (
	callKey    struct{ o *observer }
	attemptKey struct{ o *observer }
)

func newObserver(tp trace.TracerProvider, mp metric.MeterProvider) *observer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	tracer := tp.Tracer(ScopeName, trace.WithInstrumentationVersion(paykit.Version),
		trace.WithSchemaURL(semconv.SchemaURL))
	meter := mp.Meter(ScopeName, metric.WithInstrumentationVersion(paykit.Version),
		metric.WithSchemaURL(semconv.SchemaURL))
	return &observer{
		tracer: tracer,
		attemptDur: histogram(meter, MetricRequestDuration,
			"Duration of HTTP client requests (one per attempt).", attemptBuckets),
		callDur: histogram(meter, MetricCallDuration,
			"Duration of paykit Client calls, retries and read-backs included.", callBuckets),
		unknown: counter(meter, MetricUnknownOutcomes, "{call}",
			"Calls whose operation may or may not have taken effect (paykit.ErrUnknownOutcome)."),
	}
}

// histogram makes a histogram in seconds. A meter that refuses it (it
// should not: the names are valid) is reported to otel.Handle and replaced
// by a no-op, so that telemetry never breaks the Client.
func histogram(m metric.Meter, name, desc string, buckets []float64) metric.Float64Histogram {
	h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(buckets...))
	if err != nil {
		otel.Handle(err)
	}
	if h == nil {
		return noop.Float64Histogram{}
	}
	return h
}

// counter makes a counter, like histogram.
func counter(m metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		otel.Handle(err)
	}
	if c == nil {
		return noop.Int64Counter{}
	}
	return c
}

// CallStart opens the call span, a child of whatever span ctx carries:
// the caller's, or for a reconciliation read-back, the triggering call's.
func (o *observer) CallStart(ctx context.Context, call *paykit.CallInfo) context.Context {
	ctx, span := o.tracer.Start(ctx, "paykit."+call.Operation,
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			OperationKey.String(call.Operation),
			semconv.URLTemplate(template(call)),
			semconv.ServerAddress(call.Host),
		))
	return context.WithValue(ctx, callKey{o}, span)
}

// AttemptStart opens the attempt's CLIENT span under the call span.
func (o *observer) AttemptStart(ctx context.Context, a *paykit.AttemptInfo) context.Context {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, requestAttrs(a.Call)...)
	attrs = append(attrs, semconv.URLFull(redactedURL(a.Call)))
	if a.Attempt > 1 {
		// The conventions record it only on resends.
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.Attempt-1))
	}
	ctx, span := o.tracer.Start(ctx, a.Call.Method+" "+template(a.Call),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	return context.WithValue(ctx, attemptKey{o}, span)
}

// AttemptEnd ends the attempt span and records its duration.
func (o *observer) AttemptEnd(ctx context.Context, a *paykit.AttemptInfo) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, requestAttrs(a.Call)...)
	if a.StatusCode > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(a.StatusCode))
	}
	errType := attemptErrorType(a)
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	o.attemptDur.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(attrs...))

	span, _ := ctx.Value(attemptKey{o}).(trace.Span)
	if span == nil {
		return
	}
	if a.StatusCode > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(a.StatusCode))
	}
	if errType != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		// The description is the class, not the error's text: a transport
		// error names the host and port, which is harmless, but keeping to
		// one rule keeps every span free of what an error might quote.
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}

// RetryWait notes the wait on the call span as an event, so a trace shows
// why there is a gap between two attempt spans.
func (o *observer) RetryWait(ctx context.Context, w *paykit.RetryInfo) {
	span, _ := ctx.Value(callKey{o}).(trace.Span)
	if span == nil {
		return
	}
	span.AddEvent("paykit.retry_wait", trace.WithAttributes(
		attribute.Int("paykit.attempt", w.Attempt),
		attribute.Float64("paykit.retry_wait.seconds", w.Wait.Seconds()),
	))
}

// CallEnd ends the call span and records the call's metrics.
func (o *observer) CallEnd(ctx context.Context, end *paykit.CallEndInfo) {
	op := OperationKey.String(end.Call.Operation)
	outcome := OutcomeKey.String(string(end.Outcome))
	o.callDur.Record(ctx, end.Duration.Seconds(), metric.WithAttributes(op, outcome))
	if end.Outcome == paykit.OutcomeUnknownOutcome {
		o.unknown.Add(ctx, 1, metric.WithAttributes(op))
	}

	span, _ := ctx.Value(callKey{o}).(trace.Span)
	if span == nil {
		return
	}
	span.SetAttributes(outcome, AttemptsKey.Int(end.Attempts))
	if end.StatusCode > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(end.StatusCode))
	}
	if end.Err != nil || end.Outcome == paykit.OutcomeUnknownOutcome {
		errType := callErrorType(end)
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, errType)
	}
	span.End()
}

// requestAttrs are the conventions' attributes known before an attempt,
// shared by the attempt span and the duration metric.
func requestAttrs(c *paykit.CallInfo) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(c.Method),
		semconv.ServerAddress(c.Host),
		semconv.ServerPort(c.Port),
		semconv.URLTemplate(template(c)),
		OperationKey.String(c.Operation),
	}
}

// template is the path template below the host, base path included.
func template(c *paykit.CallInfo) string {
	return c.BasePath + c.Route
}

// redactedURL is the attempt's URL with its ids and ext_ids replaced by the
// template's names, which the conventions allow for url.full; the query
// (ListPayouts' filters) is left out for the same reason.
func redactedURL(c *paykit.CallInfo) string {
	var b strings.Builder
	b.WriteString(c.Scheme)
	b.WriteString("://")
	host := strings.Trim(c.Host, "[]")
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	b.WriteString(host)
	if c.Port != 0 && c.Port != defaultPort(c.Scheme) {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(c.Port))
	}
	b.WriteString(template(c))
	return b.String()
}

func defaultPort(scheme string) int {
	switch scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

// attemptErrorType is the conventions' error.type of one attempt: the API
// code of an error answer, else its status code, else the transport class;
// "" for a success.
func attemptErrorType(a *paykit.AttemptInfo) string {
	switch {
	case a.Err != nil:
		return transportClass(a.Err)
	case a.StatusCode >= 400:
		if a.Code != "" {
			return a.Code
		}
		return strconv.Itoa(a.StatusCode)
	}
	return ""
}

// callErrorType is the error.type of a failed call: unknown_outcome first,
// since that is what the merchant must act on, then the API code, the
// status, or the transport class.
func callErrorType(end *paykit.CallEndInfo) string {
	switch {
	case end.Outcome == paykit.OutcomeUnknownOutcome || errors.Is(end.Err, paykit.ErrUnknownOutcome):
		return ErrorTypeUnknownOutcome
	case end.Code != "":
		return end.Code
	case end.Outcome == paykit.OutcomeBusinessError && end.StatusCode >= 400:
		return strconv.Itoa(end.StatusCode)
	case end.Err != nil:
		return transportClass(end.Err)
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// transportClass names the kind of an error that left no answer, from a
// small fixed set so that it can be a metric attribute; "_OTHER" (the
// conventions' fallback) for anything else.
func transportClass(err error) string {
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
		authErr x509.UnknownAuthorityError
		hostErr x509.HostnameError
		ciErr   x509.CertificateInvalidError
		valErr  *paykit.ValidationError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dns_error"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection_reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection_closed"
	case errors.As(err, &recErr), errors.As(err, &certErr), errors.As(err, &authErr),
		errors.As(err, &hostErr), errors.As(err, &ciErr):
		return "tls_error"
	case errors.As(err, &valErr):
		return "invalid_parameters"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
