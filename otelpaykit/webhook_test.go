package otelpaykit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
)

// These tests deliver webhooks over loopback, from the sandbox or forged,
// to an instrumented WebhookHandler.

// webhookEnv adds an instrumented WebhookHandler, served over loopback,
// whose Client (with telemetry) reads every notified payment back.
func webhookEnv(t *testing.T) (*env, *httptest.Server, chan *paykit.Payment) {
	t.Helper()
	e := newEnv(t)
	got := make(chan *paykit.Payment, 4)
	h := &paykit.WebhookHandler{
		Token:  testToken,
		Client: e.c,
		OnPayment: func(_ context.Context, p *paykit.Payment) error {
			got <- p
			return nil
		},
	}
	hook := httptest.NewServer(InstrumentWebhook(h, e.r.tp, e.r.mp))
	t.Cleanup(hook.Close)
	return e, hook, got
}

func TestAcceptedWebhook(t *testing.T) {
	e, hook, got := webhookEnv(t)
	ctx := context.Background()
	params := paymentParams("order-hook-1")
	params.NotifyURL = hook.URL
	p, err := e.raw.CreatePayment(ctx, params)
	require.NoError(t, err)
	_, err = e.raw.CancelPayment(ctx, p.ID)
	require.NoError(t, err)
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, e.sb.FlushWebhooks(fctx))
	select {
	case hp := <-got:
		require.Equal(t, p.ID, hp.ID)
		require.Equal(t, paykit.PaymentStatusCancelled, hp.Status)
	default:
		t.Fatal("the webhook was not handled")
	}

	e.r.waitEnded(t, WebhookSpanName)
	spans := e.r.ended()
	require.Equal(t, []string{
		"paykit.Webhook (server, Unset)",
		"  paykit.GetPayment (internal, Unset)",
		"    GET /v1/payments/{id} (client, Unset)",
	}, tree(spans), "the read-back nests under the delivery")
	assert.Equal(t, map[string]any{"http.request.method": "POST", "http.response.status_code": int64(200),
		"paykit.webhook.kind": "payment", "paykit.webhook.outcome": "accepted"},
		attrMap(byName(spans, WebhookSpanName)[0].Attributes()))

	ms := e.r.metrics(t)
	assert.Equal(t, []sumPoint{{Attrs: map[string]any{"paykit.webhook.kind": "payment", "paykit.webhook.outcome": "accepted",
		"http.response.status_code": int64(200)}, Value: 1}}, sum(t, ms, MetricWebhookDeliveries))
	assert.Equal(t, []histPoint{{Attrs: map[string]any{"paykit.operation": "GetPayment", "paykit.outcome": "success"}, Count: 1}},
		hist(t, ms, MetricCallDuration))
	assertNothingSecret(t, e.r, p.ID, p.ExtID, "2345", p.Requisites.Value)
}

func TestForgedWebhook(t *testing.T) {
	e, hook, got := webhookEnv(t)
	const id = "0b6f2f9e-5a3c-4c1e-9d7a-6f1c2b3a4d5e"
	body := `{"id":"` + id + `","ext_id":"order-forged-1","amount":99999,"status":"COMPLETED",` +
		`"requisites":{"type":"card","value":"2200123456789012","bank":"sber","holder":"Ivan P."}}`
	req, err := http.NewRequest(http.MethodPost, hook.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(paykit.WebhookTokenHeader, "ntok_forged")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	select {
	case <-got:
		t.Fatal("a forged notification reached the callback")
	default:
	}

	e.r.waitEnded(t, WebhookSpanName)
	spans := e.r.ended()
	require.Equal(t, []string{"paykit.Webhook (server, Unset)"}, tree(spans), "refused without a read-back")
	assert.Equal(t, map[string]any{"http.request.method": "POST", "http.response.status_code": int64(401),
		"paykit.webhook.kind": "payment", "paykit.webhook.outcome": "refused_token"},
		attrMap(spans[0].Attributes()))

	ms := e.r.metrics(t)
	assert.Equal(t, []sumPoint{{Attrs: map[string]any{"paykit.webhook.kind": "payment", "paykit.webhook.outcome": "refused_token",
		"http.response.status_code": int64(401)}, Value: 1}}, sum(t, ms, MetricWebhookDeliveries))
	assertNothingSecret(t, e.r, id, "order-forged-1", "99999", "2200123456789012", "ntok_forged")
}

// A callback error is a server error: the span says so, with the outcome.
func TestWebhookCallbackErrorIsAnError(t *testing.T) {
	r := newRig(t)
	h := &paykit.WebhookHandler{AllowUnverifiedPayouts: true,
		OnPayout: func(context.Context, *paykit.Payout) error { return errors.New("db down") }}
	hook := httptest.NewServer(InstrumentWebhook(h, r.tp, r.mp))
	defer hook.Close()
	resp, err := http.Post(hook.URL, "application/json", strings.NewReader(`{"id":"x1","requisites":"4000","holder_name":"A B","status":"failed"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	r.waitEnded(t, WebhookSpanName)
	spans := r.ended()
	require.Equal(t, []string{"paykit.Webhook (server, Error)"}, tree(spans))
	assert.Equal(t, map[string]any{"http.request.method": "POST", "http.response.status_code": int64(500),
		"paykit.webhook.kind": "payout", "paykit.webhook.outcome": "callback_error", "error.type": "callback_error"},
		attrMap(spans[0].Attributes()))
}

// An Observe set before InstrumentWebhook still runs, after this one; a
// request served by h directly is neither traced nor counted.
func TestInstrumentWebhookKeepsObserve(t *testing.T) {
	r := newRig(t)
	var seen []paykit.WebhookDelivery
	h := &paykit.WebhookHandler{Observe: func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) }}
	hook := httptest.NewServer(InstrumentWebhook(h, r.tp, r.mp))
	defer hook.Close()
	direct := httptest.NewServer(h)
	defer direct.Close()

	resp, err := http.Get(hook.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	r.waitEnded(t, WebhookSpanName)
	resp, err = http.Get(direct.URL)
	require.NoError(t, err)
	resp.Body.Close()

	require.Len(t, seen, 2, "the earlier Observe sees both requests")
	assert.Equal(t, paykit.WebhookRefusedMethod, seen[0].Outcome)
	spans := r.ended()
	require.Equal(t, []string{"paykit.Webhook (server, Unset)"}, tree(spans))
	assert.Equal(t, map[string]any{"http.request.method": "GET", "http.response.status_code": int64(405),
		"paykit.webhook.kind": "unknown", "paykit.webhook.outcome": "refused_method"}, attrMap(spans[0].Attributes()))
	assert.Equal(t, []sumPoint{{Attrs: map[string]any{"paykit.webhook.kind": "unknown", "paykit.webhook.outcome": "refused_method",
		"http.response.status_code": int64(405)}, Value: 1}}, sum(t, r.metrics(t), MetricWebhookDeliveries))
}
