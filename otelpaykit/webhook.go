package otelpaykit

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
	"go.opentelemetry.io/otel/trace"

	paykit "github.com/paykit-dev/paykit-go"
)

// WebhookSpanName is the name of the SERVER span InstrumentWebhook opens
// per request. The conventions' "{method} {route}" is not available: the
// route is wherever the merchant mounted the handler.
const WebhookSpanName = "paykit.Webhook"

// webhookKindUnknown stands for WebhookDelivery.Kind "" (a request refused
// before its kind could be told) in attributes, where an empty value would
// read as a missing one.
const webhookKindUnknown = "unknown"

// InstrumentWebhook traces and counts the deliveries h answers, and returns
// the handler to mount in h's place:
//
//	mux.Handle("/paykit/webhook", otelpaykit.InstrumentWebhook(h, nil, nil))
//
// Each request gets a SERVER span named WebhookSpanName, a child of the
// trace context its headers carry (per otel.GetTextMapPropagator) or of a
// span already in its context (an otelhttp middleware's, say), with
// http.request.method, http.response.status_code, paykit.webhook.kind and
// paykit.webhook.outcome. Status is Error for a 5xx answer only: a 4xx is
// the handler refusing a bad or forged request, which the conventions do
// not count as a server error (the outcome attribute and the metric tell
// them apart). When h.Client also has WithTelemetry, its read-back call
// nests under this span. Each answer adds one to the paykit.webhook.deliveries
// counter by kind ("payment", "payout", or "unknown" when it could not be
// told), outcome and status code. Nothing from the body, the token or the
// notified id is recorded.
//
// It works through h.Observe, which it sets: an Observe already there is
// kept and called after this one. So call InstrumentWebhook once per
// handler, after configuring h and before serving; requests served by h
// directly, not through the returned handler, are neither traced nor
// counted. A nil tp or mp means the global provider.
func InstrumentWebhook(h *paykit.WebhookHandler, tp trace.TracerProvider, mp metric.MeterProvider) http.Handler {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	w := &webhookTelemetry{
		h: h,
		tracer: tp.Tracer(ScopeName, trace.WithInstrumentationVersion(paykit.Version),
			trace.WithSchemaURL(semconv.SchemaURL)),
		deliveries: counter(mp.Meter(ScopeName, metric.WithInstrumentationVersion(paykit.Version),
			metric.WithSchemaURL(semconv.SchemaURL)),
			MetricWebhookDeliveries, "{delivery}", "Webhook requests answered, by kind and outcome."),
	}
	if prev := h.Observe; prev != nil {
		h.Observe = func(ctx context.Context, d paykit.WebhookDelivery) {
			w.observe(ctx, d)
			prev(ctx, d)
		}
	} else {
		h.Observe = w.observe
	}
	return w
}

// webhookTelemetry is the handler InstrumentWebhook returns.
type webhookTelemetry struct {
	h          *paykit.WebhookHandler
	tracer     trace.Tracer
	deliveries metric.Int64Counter
}

// webhookKey finds this instrumentation's span in a request's context, so
// that a request served by h directly, or through another
// InstrumentWebhook of the same handler, is not counted by this one.
type webhookKey struct{ w *webhookTelemetry }

// ServeHTTP implements http.Handler.
func (w *webhookTelemetry) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := w.tracer.Start(ctx, WebhookSpanName,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(knownMethod(r.Method))))
	// Deferred so that the span also ends when a callback aborts the
	// response by panicking with http.ErrAbortHandler.
	defer span.End()
	ctx = context.WithValue(ctx, webhookKey{w}, span)
	w.h.ServeHTTP(rw, r.WithContext(ctx))
}

// observe is h.Observe: it runs once per request, before the answer.
func (w *webhookTelemetry) observe(ctx context.Context, d paykit.WebhookDelivery) {
	span, _ := ctx.Value(webhookKey{w}).(trace.Span)
	if span == nil {
		return
	}
	kind := d.Kind
	if kind == "" {
		kind = webhookKindUnknown
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, WebhookKindKey.String(kind), WebhookOutcomeKey.String(string(d.Outcome)))
	if d.StatusCode > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(d.StatusCode))
	}
	w.deliveries.Add(ctx, 1, metric.WithAttributes(attrs...))
	span.SetAttributes(attrs...)
	if d.StatusCode >= 500 || d.StatusCode == 0 {
		// StatusCode 0: the callback aborted the response. The outcome
		// (callback_error, fetch_failed, token_lookup_failed) says more
		// than the status code the conventions fall back to.
		span.SetAttributes(semconv.ErrorTypeKey.String(string(d.Outcome)))
		span.SetStatus(codes.Error, string(d.Outcome))
	}
}

// knownMethod keeps a request's method, which the sender controls, from
// becoming an unbounded attribute value, as the conventions ask.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}
