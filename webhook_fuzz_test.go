package paykit_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
)

// Bits of the fuzzer's mode byte: which handler configuration and which
// header shape a delivery gets.
const (
	fuzzClient     = 1 << iota // Client set: fetch-back
	fuzzAllow                  // AllowUnverifiedPayouts
	fuzzEmptyToken             // the handler's Token is ""
	fuzzNoHeader               // no X-Notification-Token header at all
	fuzzTwoHeaders             // the token header twice
)

// fuzzMaxBody is small so that the fuzzer reaches the 413 path too.
const fuzzMaxBody = 4 << 10

// FuzzWebhookHandler delivers arbitrary bodies with arbitrary token header
// values to handlers of every configuration and checks the handler's
// promises: no panic, a known status code, and never a callback that was
// not verified: a payment needs the right token, a payout needs Client or
// AllowUnverifiedPayouts, and with Client the callback gets the API's copy.
func FuzzWebhookHandler(f *testing.F) {
	api := newWhAPI(f, paykit.WithMaxRetries(0))
	forged := strings.Replace(whPaymentBody, `"amount":1500.50`, `"amount":1.00`, 1)
	for _, seed := range []struct {
		body  string
		token string
		mode  uint8
	}{
		{whPaymentBody, whToken, 0},
		{whPaymentBody, whToken, fuzzClient},
		{forged, whToken, fuzzClient},
		{whPaymentBody, whToken + " ", 0},
		{whPaymentBody, "", 0},
		{whPaymentBody, whToken, fuzzEmptyToken},
		{whPaymentBody, whToken, fuzzTwoHeaders},
		{whPaymentBody, whToken, fuzzNoHeader},
		{whPayoutBody, "", fuzzNoHeader},
		{whPayoutBody, "", fuzzNoHeader | fuzzAllow},
		{whPayoutBody, whToken, 0},
		{whPayoutBody, "", fuzzNoHeader | fuzzClient},
		{`{"id":"` + whPaymentID + `"}`, whToken, fuzzClient},
		{`{"id":"` + whPayoutID + `","holder_name":null}`, "", fuzzNoHeader | fuzzClient},
		{`{"id":"` + whBrokenID + `","status":"COMPLETED"}`, whToken, fuzzClient},
		{`{"id":"` + whMissingID + `","requisites":"x"}`, "", fuzzClient | fuzzNoHeader},
		{`{"id":"x","requisites":{"type":1}}`, whToken, 0},
		{`{"id":"x","amount":"1e99999999","payment_url":""}`, whToken, 0},
		{`{"id":"x","status":"dispute","created_at":"not a time"}`, whToken, 0},
		{`{"id":"x","status":"pending"}`, "", fuzzAllow | fuzzNoHeader},
		{`{"id":"x","ID":"y","Requisites":"z"}`, "", fuzzAllow},
		{`{"id":"\u0000\ud800","holder_name":1}`, "", fuzzAllow},
		{`[{"id":"x"}]`, whToken, 0},
		{`{"id":"x"`, whToken, 0},
		{"", "", 0},
		{`{"id":"x","pad":"` + strings.Repeat("a", fuzzMaxBody) + `"}`, whToken, 0},
	} {
		f.Add([]byte(seed.body), seed.token, seed.mode)
	}

	apiAmount := map[string]decimal.Decimal{
		"payment": decimal.RequireFromString("1499.99"),
		"payout":  decimal.RequireFromString("2400.10"),
	}
	f.Fuzz(func(t *testing.T, body []byte, token string, mode uint8) {
		var payments, payouts atomic.Int32
		var got *paykit.Payment
		var gotPayout *paykit.Payout
		logs := &paykit.TestLog{}
		h := &paykit.WebhookHandler{
			Token:        whToken,
			MaxBodyBytes: fuzzMaxBody,
			Logger:       logs.Logger(),
			OnPayment: func(_ context.Context, p *paykit.Payment) error {
				payments.Add(1)
				got = p
				return nil
			},
			OnPayout: func(_ context.Context, p *paykit.Payout) error {
				payouts.Add(1)
				gotPayout = p
				return nil
			},
			AllowUnverifiedPayouts: mode&fuzzAllow != 0,
		}
		if mode&fuzzClient != 0 {
			h.Client = api.client
		}
		if mode&fuzzEmptyToken != 0 {
			h.Token = ""
		}
		req := httptest.NewRequest(http.MethodPost, whPath, bytes.NewReader(body))
		var headers []string
		if mode&fuzzNoHeader == 0 {
			headers = []string{token}
			if mode&fuzzTwoHeaders != 0 {
				headers = append(headers, token)
			}
		}
		req.Header[paykit.WebhookTokenHeader] = headers
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized,
			http.StatusRequestEntityTooLarge, http.StatusInternalServerError:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		np, nq := payments.Load(), payouts.Load()
		if np+nq > 1 {
			t.Fatalf("%d payment and %d payout callbacks for one delivery", np, nq)
		}
		if np+nq == 1 && rec.Code != http.StatusOK {
			t.Fatalf("callback ran and succeeded, but the answer is %d", rec.Code)
		}
		if rec.Code == http.StatusOK && rec.Body.Len() != 0 {
			t.Fatalf("200 with a body: %q", rec.Body.String())
		}
		if len(body) > fuzzMaxBody && (rec.Code != http.StatusRequestEntityTooLarge || np+nq != 0) {
			t.Fatalf("body of %d bytes answered %d", len(body), rec.Code)
		}
		if np == 1 {
			if h.Token == "" || len(headers) != 1 || headers[0] != whToken {
				t.Fatalf("OnPayment ran without a valid token (handler %q, header %q)", h.Token, headers)
			}
			if h.Client != nil && (got.ID != whPaymentID || !got.Amount.Equal(apiAmount["payment"]) ||
				got.Status != paykit.PaymentStatusCancelled) {
				t.Fatalf("with Client, OnPayment got %s %s %s, not the API's copy", got.ID, got.Amount, got.Status)
			}
		}
		if nq == 1 {
			if h.Client == nil && !h.AllowUnverifiedPayouts {
				t.Fatal("OnPayout ran without fetch-back or AllowUnverifiedPayouts")
			}
			if h.Client != nil && (gotPayout.ID != whPayoutID || !gotPayout.Amount.Equal(apiAmount["payout"]) ||
				gotPayout.Status != paykit.PayoutStatusFailed) {
				t.Fatalf("with Client, OnPayout got %s %s %s, not the API's copy", gotPayout.ID, gotPayout.Amount, gotPayout.Status)
			}
		}
		out := logs.String()
		if strings.Contains(out, whToken) {
			t.Fatalf("the token was logged: %s", out)
		}
		if len(body) >= 8 && body[0] == '{' && strings.Contains(out, string(body)) {
			t.Fatalf("the body was logged: %s", out)
		}
	})
}

// benchBody lets the benchmark reuse one request body without allocating.
type benchBody struct{ *bytes.Reader }

func (benchBody) Close() error { return nil }

// benchWriter is a ResponseWriter that keeps only the status, so the
// benchmark measures the handler rather than httptest.ResponseRecorder.
type benchWriter struct {
	header http.Header
	code   int
}

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkWebhookHandler: one verified payment delivery, decoded from the
// body (no fetch-back), through to a callback that does nothing.
func BenchmarkWebhookHandler(b *testing.B) {
	h := &paykit.WebhookHandler{Token: whToken,
		OnPayment: func(context.Context, *paykit.Payment) error { return nil }}
	body := []byte(whPaymentBody)
	rd := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, whPath, nil)
	req.Header.Set(paykit.WebhookTokenHeader, whToken)
	req.Body = benchBody{rd}
	w := &benchWriter{header: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		rd.Reset(body)
		w.code = 0
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}
