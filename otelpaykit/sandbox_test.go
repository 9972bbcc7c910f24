package otelpaykit

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// These tests run real calls against the sandbox over loopback HTTP and
// check the spans and points that come out of the Client's pipeline.

const testToken = "ntok_0123456789abcdef" // the notification token; must never show

// env is a sandbox served over loopback, a Client with telemetry (c) and
// one without (raw) for setting the scene without recording it.
type env struct {
	r    *rig
	sb   *sandbox.Server
	srv  *httptest.Server
	c    *paykit.Client
	raw  *paykit.Client
	host string
	port int64
}

func newEnv(t *testing.T) *env {
	t.Helper()
	r := newRig(t)
	sb := sandbox.New(sandbox.Config{WebhookRetryWait: time.Millisecond})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port, err := strconv.ParseInt(u.Port(), 10, 64)
	require.NoError(t, err)
	mk := func(opts ...paykit.Option) *paykit.Client {
		opts = append(opts, paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond))
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret), opts...)
		require.NoError(t, err)
		return c
	}
	return &env{r: r, sb: sb, srv: srv, c: mk(WithTelemetry(r.tp, r.mp)), raw: mk(),
		host: u.Hostname(), port: port}
}

// attemptAttrs are the attributes every attempt span of the route carries.
func (e *env) attemptAttrs(op, method, route string) map[string]any {
	return map[string]any{
		"http.request.method": method, "server.address": e.host, "server.port": e.port,
		"url.template": route, "url.full": "http://" + e.host + ":" + strconv.FormatInt(e.port, 10) + route,
		"paykit.operation": op,
	}
}

// metricAttrs are the attributes of an attempt's duration point.
func (e *env) metricAttrs(op, method, route string, status int, errType string) map[string]any {
	m := map[string]any{"http.request.method": method, "server.address": e.host, "server.port": e.port,
		"url.template": route, "paykit.operation": op, "http.response.status_code": int64(status)}
	if errType != "" {
		m["error.type"] = errType
	}
	return m
}

func (e *env) callAttrs(op, route, outcome string, attempts, status int) map[string]any {
	m := map[string]any{"paykit.operation": op, "url.template": route, "server.address": e.host,
		"paykit.outcome": outcome, "paykit.attempts": int64(attempts)}
	if status > 0 {
		m["http.response.status_code"] = int64(status)
	}
	return m
}

func paymentParams(extID string) paykit.CreatePaymentParams {
	return paykit.CreatePaymentParams{ExtID: extID, Amount: decimal.RequireFromString("2345.67"),
		Method: paykit.MethodCard, NotificationToken: testToken}
}

// assertNothingSecret fails if any span name, attribute, event, status or
// metric attribute of the rig contains one of the values.
func assertNothingSecret(t *testing.T, r *rig, values ...string) {
	t.Helper()
	values = append(values, sandbox.DefaultAPIKey, sandbox.DefaultSecret, testToken)
	var seen []string
	for _, s := range r.ended() {
		seen = append(seen, s.Name(), s.Status().Description)
		for _, a := range s.Attributes() {
			seen = append(seen, a.Value.Emit())
		}
		for _, ev := range s.Events() {
			seen = append(seen, ev.Name)
			for _, a := range ev.Attributes {
				seen = append(seen, a.Value.Emit())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					for _, a := range dp.Attributes.ToSlice() {
						seen = append(seen, a.Value.Emit())
					}
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					for _, a := range dp.Attributes.ToSlice() {
						seen = append(seen, a.Value.Emit())
					}
				}
			}
		}
	}
	require.NotEmpty(t, seen)
	for _, s := range seen {
		for _, v := range values {
			if v != "" && strings.Contains(s, v) {
				t.Errorf("telemetry carries %q in %q", v, s)
			}
		}
	}
}

func TestPlainCall(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.c.CreatePayment(ctx, paymentParams("order-plain-1"))
	require.NoError(t, err)

	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.CreatePayment (internal, Unset)",
		"  POST /v1/payments (client, Unset)",
	}, tree(spans))
	assert.Equal(t, with(e.attemptAttrs("CreatePayment", "POST", "/v1/payments"), "http.response.status_code", int64(200)),
		attrMap(byName(spans, "POST /v1/payments")[0].Attributes()))
	assert.Equal(t, e.callAttrs("CreatePayment", "/v1/payments", "success", 1, 200),
		attrMap(byName(spans, "paykit.CreatePayment")[0].Attributes()))
	assert.Equal(t, 1, e.sb.RequestCount("POST", "/v1/payments"), "one attempt span per request the server saw")

	ms := e.r.metrics(t)
	assert.Equal(t, []histPoint{{Attrs: e.metricAttrs("CreatePayment", "POST", "/v1/payments", 200, ""), Count: 1}},
		hist(t, ms, MetricRequestDuration))
	assert.Equal(t, []histPoint{{Attrs: map[string]any{"paykit.operation": "CreatePayment", "paykit.outcome": "success"}, Count: 1}},
		hist(t, ms, MetricCallDuration))
	assert.Empty(t, sum(t, ms, MetricUnknownOutcomes))
	assertNothingSecret(t, e.r, p.ID, p.ExtID, "2345", p.Requisites.Value)
}

func TestRetriedAfterErrorBefore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.raw.CreatePayment(ctx, paymentParams("order-retry-1"))
	require.NoError(t, err)
	require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/payments/{id}", Mode: sandbox.FaultErrorBefore, Status: 502}))

	_, err = e.c.GetPayment(ctx, p.ID)
	require.NoError(t, err)

	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.GetPayment (internal, Unset)",
		"  GET /v1/payments/{id} (client, Error)",
		"  GET /v1/payments/{id} (client, Unset)",
	}, tree(spans))
	attempts := byName(spans, "GET /v1/payments/{id}")
	base := e.attemptAttrs("GetPayment", "GET", "/v1/payments/{id}")
	assert.Equal(t, with(with(base, "http.response.status_code", int64(502)), "error.type", "SYS_001"), attrMap(attempts[0].Attributes()))
	assert.Equal(t, with(with(base, "http.response.status_code", int64(200)), "http.request.resend_count", int64(1)), attrMap(attempts[1].Attributes()))
	call := byName(spans, "paykit.GetPayment")[0]
	assert.Equal(t, e.callAttrs("GetPayment", "/v1/payments/{id}", "success", 2, 200), attrMap(call.Attributes()))
	require.Len(t, call.Events(), 1)
	assert.Equal(t, "paykit.retry_wait", call.Events()[0].Name)
	assert.Equal(t, 2, e.sb.RequestCount("GET", "/v1/payments/{id}"))

	ms := e.r.metrics(t)
	assert.ElementsMatch(t, []histPoint{
		{Attrs: e.metricAttrs("GetPayment", "GET", "/v1/payments/{id}", 502, "SYS_001"), Count: 1},
		{Attrs: e.metricAttrs("GetPayment", "GET", "/v1/payments/{id}", 200, ""), Count: 1},
	}, hist(t, ms, MetricRequestDuration))
	assert.Equal(t, []histPoint{{Attrs: map[string]any{"paykit.operation": "GetPayment", "paykit.outcome": "success"}, Count: 1}},
		hist(t, ms, MetricCallDuration))
	assertNothingSecret(t, e.r, p.ID, p.ExtID)
}

func TestCreateReconciledAfterDropAfter(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultDropAfter}))

	p, err := e.c.CreatePayment(ctx, paymentParams("order-drop-1"))
	require.NoError(t, err)

	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.CreatePayment (internal, Unset)",
		"  POST /v1/payments (client, Error)",
		"  POST /v1/payments (client, Error)",
		"  paykit.GetPaymentByExtID (internal, Unset)",
		"    GET /v1/payments/by-ext-id/{extId} (client, Unset)",
	}, tree(spans))
	attempts := byName(spans, "POST /v1/payments")
	base := e.attemptAttrs("CreatePayment", "POST", "/v1/payments")
	assert.Equal(t, with(base, "error.type", "connection_closed"), attrMap(attempts[0].Attributes()))
	assert.Equal(t, with(with(with(base, "http.response.status_code", int64(409)), "error.type", "PAY_003"), "http.request.resend_count", int64(1)),
		attrMap(attempts[1].Attributes()))
	assert.Equal(t, with(e.attemptAttrs("GetPaymentByExtID", "GET", "/v1/payments/by-ext-id/{extId}"), "http.response.status_code", int64(200)),
		attrMap(byName(spans, "GET /v1/payments/by-ext-id/{extId}")[0].Attributes()))
	assert.Equal(t, e.callAttrs("CreatePayment", "/v1/payments", "reconciled", 2, 409),
		attrMap(byName(spans, "paykit.CreatePayment")[0].Attributes()))
	assert.Equal(t, 2, e.sb.RequestCount("POST", "/v1/payments"))
	assert.Equal(t, 1, e.sb.RequestCount("GET", "/v1/payments/by-ext-id/{extId}"))

	ms := e.r.metrics(t)
	assert.ElementsMatch(t, []histPoint{
		{Attrs: map[string]any{"paykit.operation": "CreatePayment", "paykit.outcome": "reconciled"}, Count: 1},
		{Attrs: map[string]any{"paykit.operation": "GetPaymentByExtID", "paykit.outcome": "success"}, Count: 1},
	}, hist(t, ms, MetricCallDuration))
	assert.Len(t, hist(t, ms, MetricRequestDuration), 3)
	assertNothingSecret(t, e.r, p.ID, p.ExtID, "2345", p.Requisites.Value)
}

func TestTransferUnknownOutcome(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter}))

	_, err := e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
		ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: decimal.RequireFromString("12.34")})
	require.ErrorIs(t, err, paykit.ErrUnknownOutcome)

	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.CreateTransfer (internal, Error)",
		"  POST /v1/transfers (client, Error)",
	}, tree(spans), "a money move is never re-sent once it may have arrived")
	assert.Equal(t, with(e.attemptAttrs("CreateTransfer", "POST", "/v1/transfers"), "error.type", "connection_closed"),
		attrMap(byName(spans, "POST /v1/transfers")[0].Attributes()))
	call := byName(spans, "paykit.CreateTransfer")[0]
	assert.Equal(t, with(e.callAttrs("CreateTransfer", "/v1/transfers", "unknown_outcome", 1, 0), "error.type", "unknown_outcome"),
		attrMap(call.Attributes()))
	assert.Equal(t, codes.Error, call.Status().Code)
	assert.Equal(t, 1, e.sb.RequestCount("POST", "/v1/transfers"))

	ms := e.r.metrics(t)
	assert.Equal(t, []sumPoint{{Attrs: map[string]any{"paykit.operation": "CreateTransfer"}, Value: 1}},
		sum(t, ms, MetricUnknownOutcomes))
	assert.Equal(t, []histPoint{{Attrs: map[string]any{"paykit.operation": "CreateTransfer", "paykit.outcome": "unknown_outcome"}, Count: 1}},
		hist(t, ms, MetricCallDuration))
	assertNothingSecret(t, e.r, sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID, "12.34")
}

func TestBusinessError(t *testing.T) {
	e := newEnv(t)
	params := paymentParams("order-biz-1")
	params.Bank = "nosuchbank"
	_, err := e.c.CreatePayment(context.Background(), params)
	require.ErrorIs(t, err, paykit.ErrNoRequisites)

	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.CreatePayment (internal, Error)",
		"  POST /v1/payments (client, Error)",
	}, tree(spans), "a business error is not retried")
	assert.Equal(t, with(with(e.attemptAttrs("CreatePayment", "POST", "/v1/payments"), "http.response.status_code", int64(503)), "error.type", "PAY_004"),
		attrMap(byName(spans, "POST /v1/payments")[0].Attributes()))
	call := byName(spans, "paykit.CreatePayment")[0]
	assert.Equal(t, with(e.callAttrs("CreatePayment", "/v1/payments", "business_error", 1, 503), "error.type", "PAY_004"),
		attrMap(call.Attributes()))
	assert.Equal(t, "PAY_004", call.Status().Description)

	ms := e.r.metrics(t)
	assert.Equal(t, []histPoint{{Attrs: e.metricAttrs("CreatePayment", "POST", "/v1/payments", 503, "PAY_004"), Count: 1}},
		hist(t, ms, MetricRequestDuration))
	assert.Equal(t, []histPoint{{Attrs: map[string]any{"paykit.operation": "CreatePayment", "paykit.outcome": "business_error"}, Count: 1}},
		hist(t, ms, MetricCallDuration))
	assert.Empty(t, sum(t, ms, MetricUnknownOutcomes))
	assertNothingSecret(t, e.r, "order-biz-1", "2345", "nosuchbank")
}
