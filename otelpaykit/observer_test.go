package otelpaykit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	paykit "github.com/paykit-dev/paykit-go"
)

// These tests drive the observer's methods directly, in the order the
// Client's pipeline calls them, so they pin the mapping from events to
// spans and points independently of the pipeline.

func testCall(op, method, route string) *paykit.CallInfo {
	return &paykit.CallInfo{Operation: op, Method: method, Route: route,
		Scheme: "http", Host: "127.0.0.1", Port: 8080, Start: time.Now()}
}

// attempt runs one attempt's events and returns its info.
func attempt(ctx context.Context, o paykit.Observer, call *paykit.CallInfo, n, status int, code string, err error) {
	a := &paykit.AttemptInfo{Call: call, Attempt: n, Start: time.Now()}
	actx := o.AttemptStart(ctx, a)
	a.Duration, a.StatusCode, a.Code, a.Err = 3*time.Millisecond, status, code, err
	o.AttemptEnd(actx, a)
}

func TestObserverRetriedCall(t *testing.T) {
	r := newRig(t)
	o := newObserver(r.tp, r.mp)
	call := testCall("CreatePayment", "POST", "/v1/payments")

	ctx := o.CallStart(context.Background(), call)
	attempt(ctx, o, call, 1, 500, "SYS_001", nil)
	o.RetryWait(ctx, &paykit.RetryInfo{Call: call, Attempt: 1, Wait: 250 * time.Millisecond})
	attempt(ctx, o, call, 2, 201, "", nil)
	o.CallEnd(ctx, &paykit.CallEndInfo{Call: call, Attempts: 2, Duration: 260 * time.Millisecond,
		Outcome: paykit.OutcomeSuccess, StatusCode: 201})

	spans := r.ended()
	require.Equal(t, []string{
		"paykit.CreatePayment (internal, Unset)",
		"  POST /v1/payments (client, Error)",
		"  POST /v1/payments (client, Unset)",
	}, tree(spans))
	attempts := byName(spans, "POST /v1/payments")
	assert.Equal(t, map[string]any{
		"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": int64(8080),
		"url.template": "/v1/payments", "url.full": "http://127.0.0.1:8080/v1/payments",
		"paykit.operation": "CreatePayment", "http.response.status_code": int64(500), "error.type": "SYS_001",
	}, attrMap(attempts[0].Attributes()))
	assert.Equal(t, "SYS_001", attempts[0].Status().Description)
	assert.Equal(t, map[string]any{
		"http.request.method": "POST", "server.address": "127.0.0.1", "server.port": int64(8080),
		"url.template": "/v1/payments", "url.full": "http://127.0.0.1:8080/v1/payments",
		"paykit.operation": "CreatePayment", "http.response.status_code": int64(201),
		"http.request.resend_count": int64(1),
	}, attrMap(attempts[1].Attributes()))
	callSpan := byName(spans, "paykit.CreatePayment")[0]
	assert.Equal(t, map[string]any{
		"paykit.operation": "CreatePayment", "url.template": "/v1/payments", "server.address": "127.0.0.1",
		"paykit.outcome": "success", "paykit.attempts": int64(2), "http.response.status_code": int64(201),
	}, attrMap(callSpan.Attributes()))
	require.Len(t, callSpan.Events(), 1)
	assert.Equal(t, "paykit.retry_wait", callSpan.Events()[0].Name)
	assert.Equal(t, map[string]any{"paykit.attempt": int64(1), "paykit.retry_wait.seconds": 0.25},
		attrMap(callSpan.Events()[0].Attributes))

	ms := r.metrics(t)
	base := map[string]any{"http.request.method": "POST", "server.address": "127.0.0.1",
		"server.port": int64(8080), "url.template": "/v1/payments", "paykit.operation": "CreatePayment"}
	assert.ElementsMatch(t, []histPoint{
		{Attrs: with(base, "http.response.status_code", int64(201)), Count: 1},
		{Attrs: with(with(base, "http.response.status_code", int64(500)), "error.type", "SYS_001"), Count: 1},
	}, hist(t, ms, MetricRequestDuration))
	assert.ElementsMatch(t, []histPoint{
		{Attrs: map[string]any{"paykit.operation": "CreatePayment", "paykit.outcome": "success"}, Count: 1},
	}, hist(t, ms, MetricCallDuration))
	assert.Empty(t, sum(t, ms, MetricUnknownOutcomes))
}

func TestObserverReconciledReadBackNestsUnderItsCall(t *testing.T) {
	r := newRig(t)
	o := newObserver(r.tp, r.mp)
	create := testCall("CreatePayment", "POST", "/v1/payments")
	ctx := o.CallStart(context.Background(), create)
	attempt(ctx, o, create, 1, 0, "", &url.Error{Op: "Post", URL: "http://127.0.0.1:8080/v1/payments", Err: io.EOF})
	attempt(ctx, o, create, 2, 409, "PAY_003", nil)

	read := testCall("GetPaymentByExtID", "GET", "/v1/payments/by-ext-id/{extId}")
	rctx := o.CallStart(ctx, read)
	attempt(rctx, o, read, 1, 200, "", nil)
	o.CallEnd(rctx, &paykit.CallEndInfo{Call: read, Attempts: 1, Outcome: paykit.OutcomeSuccess, StatusCode: 200})
	o.CallEnd(ctx, &paykit.CallEndInfo{Call: create, Attempts: 2, Outcome: paykit.OutcomeReconciled, StatusCode: 409})

	spans := r.ended()
	require.Equal(t, []string{
		"paykit.CreatePayment (internal, Unset)",
		"  POST /v1/payments (client, Error)",
		"  POST /v1/payments (client, Error)",
		"  paykit.GetPaymentByExtID (internal, Unset)",
		"    GET /v1/payments/by-ext-id/{extId} (client, Unset)",
	}, tree(spans))
	assert.Equal(t, "connection_closed", attrMap(byName(spans, "POST /v1/payments")[0].Attributes())["error.type"])
	assert.Equal(t, "http://127.0.0.1:8080/v1/payments/by-ext-id/{extId}",
		attrMap(byName(spans, "GET /v1/payments/by-ext-id/{extId}")[0].Attributes())["url.full"])
	assert.Equal(t, "reconciled", attrMap(byName(spans, "paykit.CreatePayment")[0].Attributes())["paykit.outcome"])

	ms := r.metrics(t)
	assert.ElementsMatch(t, []histPoint{
		{Attrs: map[string]any{"paykit.operation": "CreatePayment", "paykit.outcome": "reconciled"}, Count: 1},
		{Attrs: map[string]any{"paykit.operation": "GetPaymentByExtID", "paykit.outcome": "success"}, Count: 1},
	}, hist(t, ms, MetricCallDuration))
}

func TestObserverUnknownOutcome(t *testing.T) {
	r := newRig(t)
	o := newObserver(r.tp, r.mp)
	call := testCall("CreateTransfer", "POST", "/v1/transfers")
	ctx := o.CallStart(context.Background(), call)
	attempt(ctx, o, call, 1, 0, "", &url.Error{Op: "Post", URL: "http://127.0.0.1:8080/v1/transfers", Err: io.EOF})
	err := fmt.Errorf("paykit: CreateTransfer: %w", paykit.ErrUnknownOutcome)
	o.CallEnd(ctx, &paykit.CallEndInfo{Call: call, Attempts: 1, Outcome: paykit.OutcomeUnknownOutcome, Err: err})

	callSpan := byName(r.ended(), "paykit.CreateTransfer")[0]
	assert.Equal(t, codes.Error, callSpan.Status().Code)
	assert.Equal(t, "unknown_outcome", callSpan.Status().Description)
	assert.Equal(t, map[string]any{
		"paykit.operation": "CreateTransfer", "url.template": "/v1/transfers", "server.address": "127.0.0.1",
		"paykit.outcome": "unknown_outcome", "paykit.attempts": int64(1), "error.type": "unknown_outcome",
	}, attrMap(callSpan.Attributes()))
	ms := r.metrics(t)
	assert.ElementsMatch(t, []sumPoint{{Attrs: map[string]any{"paykit.operation": "CreateTransfer"}, Value: 1}},
		sum(t, ms, MetricUnknownOutcomes))
}

// Two observers in one Client each end their own spans: the composition
// runs CallEnd last observer first, and each finds its span by its own key.
func TestObserversComposeWithoutEndingEachOthersSpans(t *testing.T) {
	r1, r2 := newRig(t), newRig(t)
	o1, o2 := newObserver(r1.tp, r1.mp), newObserver(r2.tp, r2.mp)
	call := testCall("GetBalance", "GET", "/v1/balance")

	ctx := o2.CallStart(o1.CallStart(context.Background(), call), call)
	a := &paykit.AttemptInfo{Call: call, Attempt: 1, Start: time.Now()}
	actx := o2.AttemptStart(o1.AttemptStart(ctx, a), a)
	a.StatusCode = 200
	o2.AttemptEnd(actx, a)
	o1.AttemptEnd(actx, a)
	end := &paykit.CallEndInfo{Call: call, Attempts: 1, Outcome: paykit.OutcomeSuccess, StatusCode: 200}
	o2.CallEnd(ctx, end)
	o1.CallEnd(ctx, end)

	for _, r := range []*rig{r1, r2} {
		spans := r.ended()
		require.Len(t, spans, 2)
		assert.Equal(t, "success", attrMap(byName(spans, "paykit.GetBalance")[0].Attributes())["paykit.outcome"])
		assert.Equal(t, int64(200), attrMap(byName(spans, "GET /v1/balance")[0].Attributes())["http.response.status_code"])
	}
	// The second observer's spans nest under the first's, as middleware would.
	s1 := byName(r1.ended(), "paykit.GetBalance")[0]
	s2 := byName(r2.ended(), "paykit.GetBalance")[0]
	assert.Equal(t, s1.SpanContext().SpanID(), s2.Parent().SpanID())
}

// A call span is a child of the caller's span.
func TestObserverCallSpanUnderCallersSpan(t *testing.T) {
	r := newRig(t)
	o := newObserver(r.tp, r.mp)
	ctx, parent := r.tp.Tracer("test").Start(context.Background(), "checkout")
	call := testCall("ListBanks", "GET", "/v1/banks")
	cctx := o.CallStart(ctx, call)
	assert.Equal(t, parent.SpanContext().TraceID(), trace.SpanContextFromContext(cctx).TraceID())
	o.CallEnd(cctx, &paykit.CallEndInfo{Call: call, Outcome: paykit.OutcomeTransportError,
		Err: fmt.Errorf("paykit: ListBanks: %w", context.Canceled)})
	parent.End()
	require.Equal(t, []string{"checkout (internal, Unset)", "  paykit.ListBanks (internal, Error)"}, tree(r.ended()))
	assert.Equal(t, "canceled", attrMap(byName(r.ended(), "paykit.ListBanks")[0].Attributes())["error.type"])
}

func TestRedactedURL(t *testing.T) {
	for _, tc := range []struct {
		call paykit.CallInfo
		want string
	}{
		{paykit.CallInfo{Scheme: "https", Host: "api.example.com", Port: 443, Route: "/v1/payments/{id}"},
			"https://api.example.com/v1/payments/{id}"},
		{paykit.CallInfo{Scheme: "https", Host: "api.example.com", Port: 8443, BasePath: "/merchant", Route: "/v1/payouts/by-ext-id/{extId}"},
			"https://api.example.com:8443/merchant/v1/payouts/by-ext-id/{extId}"},
		{paykit.CallInfo{Scheme: "http", Host: "::1", Port: 8080, Route: "/v1/banks"}, "http://[::1]:8080/v1/banks"},
		{paykit.CallInfo{Scheme: "http", Host: "[::1]", Port: 80, Route: "/v1/banks"}, "http://[::1]/v1/banks"},
	} {
		assert.Equal(t, tc.want, redactedURL(&tc.call))
	}
}

func TestTransportClass(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://h/v1/transfers", Err: err} }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{wrap(io.EOF), "connection_closed"},
		{wrap(io.ErrUnexpectedEOF), "connection_closed"},
		{wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), "connection_refused"},
		{wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), "connection_reset"},
		{wrap(&net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}), "dns_error"},
		{wrap(context.DeadlineExceeded), "timeout"},
		{fmt.Errorf("x: %w", context.Canceled), "canceled"},
		{wrap(errors.New("something else")), "_OTHER"},
		{&paykit.ValidationError{Field: "amount", Reason: "too small"}, "invalid_parameters"},
	} {
		assert.Equal(t, tc.want, transportClass(tc.err), "%v", tc.err)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[k] = v
	return out
}
