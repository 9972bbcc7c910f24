package paykit_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
)

// Bits of the fuzzer's mode: which handler configuration and which
// header shape and encoding a delivery gets.
const (
	fuzzClient      = 1 << iota // Client set: fetch-back
	fuzzAllow                   // AllowUnverifiedPayouts
	fuzzEmptyToken              // the handler's Token is ""
	fuzzNoHeader                // no X-Notification-Token header at all
	fuzzTwoHeaders              // the token header twice
	fuzzTokens                  // Tokens holds fuzzRotated (and "")
	fuzzTokenFor                // TokenFor answers fuzzPerOrder for ext_id order-1001
	fuzzTokenForErr             // TokenFor fails
	fuzzGzip                    // the body is sent gzipped
	fuzzClaimGzip               // Content-Encoding: gzip on the body as it is
)

const (
	fuzzRotated  = "nt_rotated-0f9e"
	fuzzPerOrder = "nt_order-1001-5d2c"
)

// fuzzCodes maps each delivery outcome to the statuses it may answer.
var fuzzCodes = map[paykit.WebhookOutcome]int{
	paykit.WebhookAccepted:          http.StatusOK,
	paykit.WebhookIgnored:           http.StatusOK,
	paykit.WebhookRefusedSize:       http.StatusRequestEntityTooLarge,
	paykit.WebhookRefusedBody:       http.StatusBadRequest,
	paykit.WebhookRefusedToken:      http.StatusUnauthorized,
	paykit.WebhookRefusedUnverified: http.StatusUnauthorized,
	paykit.WebhookTokenLookupFailed: http.StatusInternalServerError,
	paykit.WebhookFetchFailed:       http.StatusInternalServerError,
	paykit.WebhookCallbackError:     http.StatusInternalServerError,
}

// fuzzMaxBody is small so that the fuzzer reaches the 413 path too.
const fuzzMaxBody = 4 << 10

// FuzzWebhookHandler delivers arbitrary bodies, plain or gzipped, with
// arbitrary token header values to handlers of every configuration and
// checks the handler's promises: no panic, a known status code, one
// Observe call that agrees with it, and never a callback that was not
// verified: a payment needs a header equal to Token, an entry of Tokens
// or TokenFor's non-empty answer, a payout needs Client or
// AllowUnverifiedPayouts, and with Client the callback gets the API's copy.
func FuzzWebhookHandler(f *testing.F) {
	api := newWhAPI(f, paykit.WithMaxRetries(0))
	forged := strings.Replace(whPaymentBody, `"amount":1500.50`, `"amount":1.00`, 1)
	for _, seed := range []struct {
		body  string
		token string
		mode  uint16
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
		{whPaymentBody, fuzzRotated, fuzzTokens | fuzzEmptyToken},
		{whPaymentBody, "", fuzzTokens | fuzzEmptyToken},
		{whPaymentBody, fuzzPerOrder, fuzzTokenFor | fuzzEmptyToken},
		{whPaymentBody, fuzzPerOrder, fuzzTokenFor | fuzzClient},
		{whPaymentBody, fuzzPerOrder, fuzzTokenForErr},
		{`{"id":"x","ext_id":"order-1001","status":"PENDING"}`, fuzzPerOrder, fuzzTokenFor | fuzzEmptyToken},
		{`{"id":"x","ext_id":"order-1002","status":"PENDING"}`, fuzzPerOrder, fuzzTokenFor},
		{whPaymentBody, whToken, fuzzGzip},
		{whPayoutBody, "", fuzzGzip | fuzzClient | fuzzNoHeader},
		{`{"id":"x","pad":"` + strings.Repeat("0", 4*fuzzMaxBody) + `"}`, whToken, fuzzGzip},
		{string(gzipped(f, []byte(whPaymentBody))), whToken, fuzzClaimGzip},
		{string(gzipped(f, []byte(whPaymentBody))[:30]), whToken, fuzzClaimGzip},
		{whPaymentBody, whToken, fuzzClaimGzip},
	} {
		f.Add([]byte(seed.body), seed.token, seed.mode)
	}

	apiAmount := map[string]decimal.Decimal{
		"payment": decimal.RequireFromString("1499.99"),
		"payout":  decimal.RequireFromString("2400.10"),
	}
	f.Fuzz(func(t *testing.T, body []byte, token string, mode uint16) {
		var payments, payouts, lookups atomic.Int32
		var got *paykit.Payment
		var gotPayout *paykit.Payout
		var perPayment string // TokenFor's last answer
		var lookupErr bool
		var seen []paykit.WebhookDelivery
		logs := &paykit.TestLog{}
		h := &paykit.WebhookHandler{
			Observe:      func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) },
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
		if mode&fuzzTokens != 0 {
			h.Tokens = []string{"", fuzzRotated}
		}
		if mode&(fuzzTokenFor|fuzzTokenForErr) != 0 {
			h.TokenFor = func(_ context.Context, _, extID string) (string, error) {
				lookups.Add(1)
				if mode&fuzzTokenForErr != 0 {
					lookupErr = true
					return "", errors.New("store down")
				}
				perPayment = map[string]string{"order-1001": fuzzPerOrder}[extID]
				return perPayment, nil
			}
		}
		sent := body
		if mode&fuzzGzip != 0 {
			sent = gzipped(t, body)
		}
		req := httptest.NewRequest(http.MethodPost, whPath, bytes.NewReader(sent))
		if mode&(fuzzGzip|fuzzClaimGzip) != 0 {
			req.Header.Set("Content-Encoding", "gzip")
		}
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
		if mode&fuzzClaimGzip == 0 && len(body) > fuzzMaxBody && (rec.Code != http.StatusRequestEntityTooLarge || np+nq != 0) {
			t.Fatalf("body of %d bytes (gzip: %v) answered %d", len(body), mode&fuzzGzip != 0, rec.Code)
		}
		if len(seen) != 1 {
			t.Fatalf("Observe ran %d times", len(seen))
		}
		if want, ok := fuzzCodes[seen[0].Outcome]; !ok || want != rec.Code || seen[0].StatusCode != rec.Code {
			t.Fatalf("observed %+v, answered %d", seen[0], rec.Code)
		}
		if (seen[0].Outcome == paykit.WebhookAccepted) != (np+nq == 1) {
			t.Fatalf("observed %s with %d callbacks", seen[0].Outcome, np+nq)
		}
		if lookups.Load() > 1 || lookups.Load() == 1 && (len(headers) != 1 || headers[0] == "") {
			t.Fatalf("TokenFor asked %d times with header %q", lookups.Load(), headers)
		}
		if lookupErr && rec.Code != http.StatusInternalServerError {
			t.Fatalf("TokenFor failed, but the answer is %d", rec.Code)
		}
		if np == 1 {
			valid := len(headers) == 1 && headers[0] != "" &&
				(h.Token != "" && headers[0] == h.Token || mode&fuzzTokens != 0 && headers[0] == fuzzRotated ||
					perPayment != "" && headers[0] == perPayment)
			if !valid {
				t.Fatalf("OnPayment ran without a valid token (handler %q, TokenFor %q, header %q)", h.Token, perPayment, headers)
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
		for _, tok := range []string{whToken, fuzzRotated, fuzzPerOrder} {
			if strings.Contains(out, tok) {
				t.Fatalf("a token was logged: %s", out)
			}
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
