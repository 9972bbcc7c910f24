// Package otelpaykit reports what a paykit Client and WebhookHandler do to
// OpenTelemetry: a span per call with a child span per HTTP attempt, a
// server span per webhook request, and metrics for attempts, calls, unknown
// outcomes and webhook deliveries.
//
//	c, err := paykit.NewClient(baseURL, apiKey, paykit.HMACSigner(secret),
//		otelpaykit.WithTelemetry(tp, mp)) // nil, nil: the global providers
//	mux.Handle("/paykit/webhook", otelpaykit.InstrumentWebhook(h, tp, mp))
//
// It is a module of its own, github.com/paykit-dev/paykit-go/otelpaykit,
// so that the core module depends on no telemetry library: the core only
// offers the neutral hooks paykit.Observer and WebhookHandler.Observe, and
// this package turns their events into spans and points, as AWS SDK for Go
// v2 does with its middleware and its otel adapter.
//
// # Spans
//
// A call is an INTERNAL span named "paykit.<Operation>" (paykit.CreatePayment)
// under whatever span the caller's context carries. Each HTTP attempt is a
// CLIENT span under it, named "<METHOD> <route>" (POST /v1/payments) as the
// HTTP semantic conventions name client spans, so a call retried twice has
// three attempt spans, one per request the server saw. When a create or a
// state change is reconciled (a retried attempt answers "already done" and
// the SDK reads the resource back), the read-back is a call span of its own
// (paykit.GetPaymentByExtID, say) under the call that triggered it. A wait
// before a retry is an event "paykit.retry_wait" on the call span.
//
// Attempt spans carry the conventions' http.request.method, server.address,
// server.port, url.template (/v1/payments/{id}), url.full with the ids and
// ext_ids replaced by the template's names (the conventions allow such
// redaction), http.response.status_code, http.request.resend_count on
// retries, and error.type; all spans carry paykit.operation. Call spans
// add paykit.outcome and paykit.attempts.
//
// error.type is, in this order: "unknown_outcome" for a call that ended in
// paykit.ErrUnknownOutcome; the API's error code ("PAY_004"), as the core
// bounds it (a code outside the spec's table and the sandbox's few is
// "OTHER", one not shaped like a code "INVALID_CODE"); the status code of
// an error answer without a code; or a transport class
// ("connection_closed", "connection_reset", "connection_refused",
// "timeout", "canceled", "dns_error", "tls_error", "_OTHER"). A failed call
// or attempt (any 4xx or 5xx for an attempt, as the conventions ask of
// clients) has status Error, described by its error.type.
//
// # What is never recorded
//
// No span name, attribute, event or status carries an id, an ext_id, an
// amount, the API key, a signature, a notification token, a card or a phone
// number, nor an error's text (which may quote an ext_id). The query
// string is left out of url.full. What identifies a payment in a trace is
// the trace itself: log the id next to the trace id in your own code if you
// need to find one from the other.
//
// # Metrics
//
// http.client.request.duration (histogram, seconds, one point per
// attempt, with the attempt span's attributes but url.full),
// paykit.client.call.duration (histogram, seconds, one point per call, by
// paykit.operation and paykit.outcome), paykit.client.unknown_outcomes
// (counter, by paykit.operation) and paykit.webhook.deliveries (counter,
// by paykit.webhook.kind, paykit.webhook.outcome and
// http.response.status_code). Every attribute has a small, fixed set of
// values, so none of them can blow up a metric backend's series count.
//
// # Trace context
//
// The Observer hook does not see the outgoing request's headers, so the
// attempt spans are not propagated to the API in a traceparent header.
// InstrumentWebhook does extract the
// incoming trace context of a webhook request with the global propagator.
//
// The module needs Go 1.24 or newer and OpenTelemetry Go v1.41.0 or newer.
package otelpaykit
