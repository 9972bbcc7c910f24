package paykit_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

const (
	whToken     = "nt_7c1d9e2f-secret-token"
	whPaymentID = "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	whPayoutID  = "0b8e4a51-3c2d-4e6f-8a9b-1c2d3e4f5a6b"
	whMissingID = "11111111-2222-4333-8444-555555555555"
	whBrokenID  = "99999999-2222-4333-8444-555555555555"
	whPath      = "/paykit/webhook"
)

// whPaymentBody is a payment as GET /v1/payments/{id} returns it.
const whPaymentBody = `{"id":"` + whPaymentID + `","ext_id":"order-1001","amount":1500.50,"currency":"RUB",
 "status":"PROCESSING","method":"CARD",
 "requisites":{"type":"card","value":"2200700012345678","bank":"Sberbank","holder":"Ivan I."},
 "payment_url":"https://pay.example/p/6f1c","valid_until":"2026-11-22T03:10:00Z",
 "created_at":"2026-11-22T02:10:00.123Z","usdt_rate":92.35}`

// whPayoutBody is a payout as GET /v1/payouts/{id} returns it.
const whPayoutBody = `{"id":"` + whPayoutID + `","ext_id":"payout-77","amount":2500.00,"currency":"RUB",
 "method":"sbp","requisites":"+79001234567","holder_name":"Ivan Ivanov","bank":"sber","status":"completed",
 "provider_order_id":"prov-123","created_at":"2026-11-22T02:00:00Z","completed_at":"2026-11-22T02:05:06.5Z"}`

// The API's copies, which differ from the bodies above in amount and status,
// so that a test can tell which one a callback received.
const (
	whAPIPayment = `{"id":"` + whPaymentID + `","ext_id":"order-1001","amount":"1499.99","currency":"RUB",
 "status":"cancelled","method":"SBP",
 "requisites":{"type":"sbp","value":"+79005554433","bank":"T-Bank","holder":"Petr P."},
 "payment_url":null,"valid_until":"2026-11-22T04:00:00Z","created_at":"2026-11-22T01:00:00Z","usdt_rate":"91.10"}`
	whAPIPayout = `{"id":"` + whPayoutID + `","ext_id":"payout-77","amount":2400.10,"currency":"RUB",
 "method":"card","requisites":"2200700099998888","holder_name":"Ivan Ivanov","bank":"","status":"failed",
 "provider_order_id":12345,"created_at":"2026-11-22T02:00:00Z","completed_at":null}`
)

func whTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v.UTC()
}

// whCalls records what the callbacks received.
type whCalls struct {
	mu       sync.Mutex
	payments []*paykit.Payment
	payouts  []*paykit.Payout
	err      error // returned by both callbacks
}

func (c *whCalls) onPayment(_ context.Context, p *paykit.Payment) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.payments = append(c.payments, p)
	return c.err
}

func (c *whCalls) onPayout(_ context.Context, p *paykit.Payout) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.payouts = append(c.payouts, p)
	return c.err
}

func (c *whCalls) counts() (payments, payouts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.payments), len(c.payouts)
}

func (c *whCalls) onlyPayment(t *testing.T) *paykit.Payment {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.payments, 1, "OnPayment calls")
	require.Empty(t, c.payouts, "OnPayout calls")
	return c.payments[0]
}

func (c *whCalls) onlyPayout(t *testing.T) *paykit.Payout {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.payouts, 1, "OnPayout calls")
	require.Empty(t, c.payments, "OnPayment calls")
	return c.payouts[0]
}

func (c *whCalls) none(t *testing.T) {
	t.Helper()
	n, m := c.counts()
	assert.Zero(t, n, "OnPayment calls")
	assert.Zero(t, m, "OnPayout calls")
}

// whHandler returns a handler with both callbacks and a debug logger.
func whHandler() (*paykit.WebhookHandler, *whCalls, *paykit.TestLog) {
	calls, logs := &whCalls{}, &paykit.TestLog{}
	return &paykit.WebhookHandler{
		Token:     whToken,
		OnPayment: calls.onPayment,
		OnPayout:  calls.onPayout,
		Logger:    logs.Logger(),
	}, calls, logs
}

// whDeliver sends one request through h; each token becomes one
// X-Notification-Token header value.
func whDeliver(h http.Handler, method, body string, tokens ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, whPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for _, tok := range tokens {
		req.Header.Add(paykit.WebhookTokenHeader, tok)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// whAPI is a fake of the API's two read endpoints, for the fetch-back.
type whAPI struct {
	srv      *httptest.Server
	requests atomic.Int32
	client   *paykit.Client
}

func newWhAPI(t testing.TB, opts ...paykit.Option) *whAPI {
	t.Helper()
	api := &whAPI{}
	signer := paykit.HMACSigner("secret")
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	mux.HandleFunc("GET /v1/payments/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case whPaymentID:
			answer(w, http.StatusOK, whAPIPayment)
		case whBrokenID:
			answer(w, http.StatusInternalServerError, `{"error":"PAY_001","message":"Internal error","data":{}}`)
		default:
			answer(w, http.StatusNotFound, `{"error":"PAY_006","message":"Payment not found","data":{}}`)
		}
	})
	mux.HandleFunc("GET /v1/payouts/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case whPayoutID:
			answer(w, http.StatusOK, whAPIPayout)
		case whBrokenID:
			answer(w, http.StatusInternalServerError, `{"error":"SYS_001","message":"Internal error","data":{}}`)
		default:
			answer(w, http.StatusNotFound, `{"error":"PAY_001","message":"Payout not found","data":{}}`)
		}
	})
	api.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.requests.Add(1)
		want, err := signer.Sign(r, nil)
		if err != nil || r.Header.Get("X-Identity") != "key" || r.Header.Get("X-Signature") != want {
			answer(w, http.StatusUnauthorized, `{"error":"AUTH","message":"bad signature","data":{}}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(api.srv.Close)
	c, err := paykit.NewClient(api.srv.URL, "key", paykit.HMACSigner("secret"), opts...)
	require.NoError(t, err)
	api.client = c
	return api
}

// assertBodyPayment checks every field of the payment in whPaymentBody.
func assertBodyPayment(t *testing.T, p *paykit.Payment) {
	t.Helper()
	assert.Equal(t, whPaymentID, p.ID)
	assert.Equal(t, "order-1001", p.ExtID)
	assert.Equal(t, "1500.5", p.Amount.String())
	assert.Equal(t, "RUB", p.Currency)
	assert.Equal(t, paykit.PaymentStatusProcessing, p.Status)
	assert.Equal(t, paykit.MethodCard, p.Method)
	assertRequisites(t, p.Requisites, paykit.RequisitesCard, "2200700012345678", "Sberbank", "Ivan I.")
	assert.Equal(t, "https://pay.example/p/6f1c", p.PaymentURL)
	assert.Equal(t, whTime(t, "2026-11-22T03:10:00Z"), p.ValidUntil)
	assert.Equal(t, whTime(t, "2026-11-22T02:10:00.123Z"), p.CreatedAt)
	assert.Equal(t, "92.35", p.USDTRate.String())
	assert.Empty(t, p.Message)
	assert.Nil(t, p.Dispute)
}

// assertRequisites checks the fields of domestic requisites as GET returns
// them (Requisites has an unexported field, so it is not compared whole).
func assertRequisites(t *testing.T, r paykit.Requisites, typ paykit.RequisitesType, value, bankName, holder string) {
	t.Helper()
	assert.Equal(t, typ, r.Type)
	assert.Equal(t, value, r.Value)
	assert.Empty(t, r.BankCode)
	assert.Equal(t, bankName, r.BankName)
	assert.Equal(t, holder, r.Holder)
	assert.Empty(t, r.Country)
	assert.Empty(t, r.Currency)
	assert.True(t, r.AmountLocal.IsZero())
}

// assertAPIPayment checks every field of the payment in whAPIPayment.
func assertAPIPayment(t *testing.T, p *paykit.Payment) {
	t.Helper()
	assert.Equal(t, whPaymentID, p.ID)
	assert.Equal(t, "order-1001", p.ExtID)
	assert.Equal(t, "1499.99", p.Amount.String())
	assert.Equal(t, "RUB", p.Currency)
	assert.Equal(t, paykit.PaymentStatusCancelled, p.Status)
	assert.Equal(t, paykit.MethodSBP, p.Method)
	assertRequisites(t, p.Requisites, paykit.RequisitesSBP, "+79005554433", "T-Bank", "Petr P.")
	assert.Empty(t, p.PaymentURL)
	assert.Equal(t, whTime(t, "2026-11-22T04:00:00Z"), p.ValidUntil)
	assert.Equal(t, whTime(t, "2026-11-22T01:00:00Z"), p.CreatedAt)
	assert.Equal(t, "91.1", p.USDTRate.String())
	assert.Nil(t, p.Dispute)
}

// assertBodyPayout checks every field of the payout in whPayoutBody.
func assertBodyPayout(t *testing.T, p *paykit.Payout) {
	t.Helper()
	assert.Equal(t, &paykit.Payout{ID: whPayoutID, ExtID: "payout-77", Amount: p.Amount, Currency: "RUB",
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "Ivan Ivanov", Bank: "sber",
		Status: paykit.PayoutStatusCompleted, ProviderOrderID: "prov-123",
		CreatedAt:   whTime(t, "2026-11-22T02:00:00Z"),
		CompletedAt: whTime(t, "2026-11-22T02:05:06.5Z")}, p)
	assert.Equal(t, "2500", p.Amount.String())
}

// assertAPIPayout checks every field of the payout in whAPIPayout.
func assertAPIPayout(t *testing.T, p *paykit.Payout) {
	t.Helper()
	assert.Equal(t, &paykit.Payout{ID: whPayoutID, ExtID: "payout-77", Amount: p.Amount, Currency: "RUB",
		Method: paykit.PayoutMethodCard, Requisites: "2200700099998888", HolderName: "Ivan Ivanov", Bank: "",
		Status: paykit.PayoutStatusFailed, ProviderOrderID: "12345",
		CreatedAt: whTime(t, "2026-11-22T02:00:00Z")}, p)
	assert.True(t, p.Amount.Equal(decimal.RequireFromString("2400.10")))
	assert.True(t, p.CompletedAt.IsZero())
}

func assertOK(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Zero(t, rec.Body.Len(), "a 200 answer has an empty body")
}

func TestWebhookOnlyPost(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, "PROPFIND"} {
		t.Run(method, func(t *testing.T) {
			h, calls, _ := whHandler()
			rec := whDeliver(h, method, whPaymentBody, whToken)
			assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
			assert.Equal(t, "POST", rec.Header().Get("Allow"))
			calls.none(t)
		})
	}
}

func TestWebhookPaymentFromBody(t *testing.T) {
	h, calls, _ := whHandler()
	rec := whDeliver(h, http.MethodPost, whPaymentBody, whToken)
	assertOK(t, rec)
	assertBodyPayment(t, calls.onlyPayment(t))
}

func TestWebhookPaymentToken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tokens []string
		want   int
	}{
		{"missing", nil, http.StatusUnauthorized},
		{"empty", []string{""}, http.StatusUnauthorized},
		{"wrong", []string{"nt_7c1d9e2f-secret-tokeN"}, http.StatusUnauthorized},
		{"prefix", []string{whToken[:len(whToken)-1]}, http.StatusUnauthorized},
		{"longer", []string{whToken + "x"}, http.StatusUnauthorized},
		{"repeated", []string{whToken, whToken}, http.StatusUnauthorized},
		{"wrong then right", []string{"x", whToken}, http.StatusUnauthorized},
		{"right", []string{whToken}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, logs := whHandler()
			rec := whDeliver(h, http.MethodPost, whPaymentBody, tc.tokens...)
			assert.Equal(t, tc.want, rec.Code)
			if tc.want == http.StatusOK {
				assertBodyPayment(t, calls.onlyPayment(t))
				return
			}
			calls.none(t)
			assert.Contains(t, logs.String(), "payment notification refused")
		})
	}
}

func TestWebhookEmptyTokenFailsClosed(t *testing.T) {
	h, calls, logs := whHandler()
	h.Token = ""
	for _, tokens := range [][]string{nil, {""}, {whToken}, {"anything"}} {
		rec := whDeliver(h, http.MethodPost, whPaymentBody, tokens...)
		assert.Equal(t, http.StatusUnauthorized, rec.Code)
	}
	calls.none(t)
	assert.Equal(t, 1, strings.Count(logs.String(), "no Token, Tokens or TokenFor"), "logged once: %s", logs)
	assert.Contains(t, logs.String(), `"level":"ERROR"`)

	// Payouts do not depend on the token.
	h.AllowUnverifiedPayouts = true
	assertOK(t, whDeliver(h, http.MethodPost, whPayoutBody))
	assertBodyPayout(t, calls.onlyPayout(t))
}

// TestWebhookEmptyTokenLoggedWithoutLogger: a handler that refuses every
// payment is never silent, even with no Logger set.
func TestWebhookEmptyTokenLoggedWithoutLogger(t *testing.T) {
	logs := &paykit.TestLog{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(logs.Logger())

	calls := &whCalls{}
	h := &paykit.WebhookHandler{OnPayment: calls.onPayment}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
		}()
	}
	wg.Wait()
	calls.none(t)
	assert.Equal(t, 1, strings.Count(logs.String(), "no Token, Tokens or TokenFor"), "logged once: %s", logs)
}

// TestWebhookRefusalsLoggedOnceWithoutLogger: a handler without a Logger
// that refuses deliveries is never silent: the first refusal of each cause
// goes to slog.Default() with what to check, once per cause and handler,
// and never with a token; accepted deliveries log nothing.
func TestWebhookRefusalsLoggedOnceWithoutLogger(t *testing.T) {
	logs := &paykit.TestLog{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(logs.Logger())
	const wrongToken = "nt_wrong-7e3a91"

	calls := &whCalls{}
	h := &paykit.WebhookHandler{Token: whToken, OnPayment: calls.onPayment, OnPayout: calls.onPayout}
	lines := func() []string { return slices.Collect(strings.Lines(logs.String())) }

	// A payment created without NotificationToken: notified without one.
	for range 2 {
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody).Code)
	}
	require.Len(t, lines(), 1, "two refusals of one cause log once: %s", logs)
	assert.Contains(t, lines()[0], `"level":"WARN"`)
	assert.Contains(t, lines()[0], "missing or repeated X-Notification-Token")
	assert.Contains(t, lines()[0], "created without NotificationToken")
	assert.Contains(t, lines()[0], "CreatePaymentParams.NotificationToken")

	// Another cause logs once more.
	for range 2 {
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody, wrongToken).Code)
	}
	require.Len(t, lines(), 2, "two causes log twice: %s", logs)
	assert.Contains(t, lines()[1], "wrong X-Notification-Token")
	assert.Contains(t, lines()[1], "not Token, not in Tokens")

	for range 2 {
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPayoutBody).Code)
		assert.Equal(t, http.StatusBadRequest, whDeliver(h, http.MethodPost, "nope").Code)
		assert.Equal(t, http.StatusMethodNotAllowed, whDeliver(h, http.MethodGet, "").Code)
	}
	require.Len(t, lines(), 5, "%s", logs)
	assert.Contains(t, lines()[2], "payout notification refused")
	assert.Contains(t, lines()[2], "set Client")
	assert.Contains(t, lines()[3], "not a JSON object with an id")
	assert.Contains(t, lines()[4], "method not allowed")

	// Accepted deliveries log nothing.
	assertOK(t, whDeliver(h, http.MethodPost, whPaymentBody, whToken))
	assertBodyPayment(t, calls.onlyPayment(t))
	assert.Len(t, lines(), 5)

	// Once per handler: another handler's first refusal is its own news.
	h2 := &paykit.WebhookHandler{Token: whToken, OnPayment: calls.onPayment}
	assert.Equal(t, http.StatusUnauthorized, whDeliver(h2, http.MethodPost, whPaymentBody).Code)
	assert.Len(t, lines(), 6)

	for _, secret := range []string{whToken, wrongToken, "nt_"} {
		assert.False(t, strings.Contains(logs.String(), secret), "a token is logged")
	}
}

// TestWebhookRefusalsWithLogger: with a Logger, every refusal is logged
// there, with what to check, and nothing goes to slog.Default().
func TestWebhookRefusalsWithLogger(t *testing.T) {
	def := &paykit.TestLog{}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(def.Logger())

	h, calls, logs := whHandler()
	for range 3 {
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody).Code)
	}
	calls.none(t)
	assert.Equal(t, 3, strings.Count(logs.String(), "created without NotificationToken"), "%s", logs)
	assert.Empty(t, def.String())
	assert.NotContains(t, logs.String(), whToken)
}

func TestWebhookBodyLimit(t *testing.T) {
	body := whPaymentBody
	t.Run("at the limit", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.MaxBodyBytes = int64(len(body))
		assertOK(t, whDeliver(h, http.MethodPost, body, whToken))
		assertBodyPayment(t, calls.onlyPayment(t))
	})
	t.Run("one byte over", func(t *testing.T) {
		h, calls, logs := whHandler()
		h.MaxBodyBytes = int64(len(body))
		rec := whDeliver(h, http.MethodPost, body+" ", whToken)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		calls.none(t)
		assert.Contains(t, logs.String(), "body too large")
	})
	// The default, 1 MiB, applies when MaxBodyBytes is zero (or negative).
	padded := func(n int) string {
		head := strings.TrimSuffix(whPaymentBody, "}") + `,"pad":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	for _, limit := range []int64{0, -1} {
		h, calls, _ := whHandler()
		h.MaxBodyBytes = limit
		assertOK(t, whDeliver(h, http.MethodPost, padded(paykit.DefaultWebhookMaxBodyBytes), whToken))
		assertBodyPayment(t, calls.onlyPayment(t))
		rec := whDeliver(h, http.MethodPost, padded(paykit.DefaultWebhookMaxBodyBytes+1), whToken)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		n, m := calls.counts()
		assert.Equal(t, 1, n)
		assert.Zero(t, m)
	}
}

type whFailingReader struct{}

func (whFailingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestWebhookBodyReadError(t *testing.T) {
	h, calls, _ := whHandler()
	req := httptest.NewRequest(http.MethodPost, whPath, whFailingReader{})
	req.Header.Set(paykit.WebhookTokenHeader, whToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	calls.none(t)
}

func TestWebhookBadBodies(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"empty", ""},
		{"not JSON", "id=" + whPaymentID},
		{"truncated", whPaymentBody[:40]},
		{"array", `[` + whPaymentBody + `]`},
		{"string", `"` + whPaymentID + `"`},
		{"null", `null`},
		{"no id", `{"status":"COMPLETED","payment_url":null}`},
		{"empty id", `{"id":"","status":"COMPLETED"}`},
		{"null id", `{"id":null,"status":"COMPLETED"}`},
		{"numeric id", `{"id":42,"status":"COMPLETED"}`},
		{"object id", `{"id":{"id":"x"},"status":"COMPLETED"}`},
		{"kind unknown", `{"id":"` + whPaymentID + `","status":"completed","amount":10}`},
		{"kind unknown, id only", `{"id":"` + whPayoutID + `"}`},
		{"payment that does not decode", `{"id":"` + whPaymentID + `","status":"COMPLETED","amount":"lots"}`},
		{"payment time that does not decode", `{"id":"x","valid_until":"tomorrow"}`},
		{"payout that does not decode", `{"id":"` + whPayoutID + `","holder_name":"A","amount":[1]}`},
		{"amount out of range", `{"id":"x","requisites":"1","amount":1e999999}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			h.AllowUnverifiedPayouts = true
			var tokens []string
			if strings.Contains(tc.name, "payment") {
				tokens = []string{whToken}
			}
			rec := whDeliver(h, http.MethodPost, tc.body, tokens...)
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			calls.none(t)
		})
	}
}

// TestWebhookKindRules runs the documented rules that tell a payment from
// a payout, in their order, against a handler that would accept either.
func TestWebhookKindRules(t *testing.T) {
	const id = `"id":"` + whPaymentID + `"`
	for _, tc := range []struct {
		name  string
		body  string
		token bool
		want  string // "payment", "payout" or "" for 400
	}{
		{"GET payment", whPaymentBody, true, "payment"},
		{"GET payout", whPayoutBody, false, "payout"},
		{"requisites object", `{` + id + `,"requisites":{}}`, true, "payment"},
		{"requisites object beats holder_name", `{` + id + `,"requisites":{"holder":"A"},"holder_name":"A"}`, true, "payment"},
		{"requisites string", `{` + id + `,"requisites":"4111"}`, false, "payout"},
		{"requisites string beats payment_url", `{` + id + `,"requisites":"4111","payment_url":"u"}`, true, "payout"},
		{"holder_name", `{` + id + `,"holder_name":"Ivan"}`, false, "payout"},
		{"holder_name beats valid_until", `{` + id + `,"holder_name":"Ivan","valid_until":null}`, false, "payout"},
		{"holder_name beats upper-case status", `{` + id + `,"holder_name":"Ivan","status":"COMPLETED"}`, true, "payout"},
		{"payment_url null", `{` + id + `,"payment_url":null}`, true, "payment"},
		{"valid_until", `{` + id + `,"valid_until":"2026-11-22T03:10:00Z"}`, true, "payment"},
		{"requisites null says nothing", `{` + id + `,"requisites":null,"status":"PENDING"}`, true, "payment"},
		{"upper-case status", `{` + id + `,"status":"COMPLETED"}`, true, "payment"},
		{"unknown upper-case status", `{` + id + `,"status":"REFUNDED_2"}`, true, "payment"},
		{"lower-case dispute", `{` + id + `,"status":"dispute"}`, true, "payment"},
		{"lower-case cancelled_appeal", `{` + id + `,"status":"cancelled_appeal"}`, true, "payment"},
		{"key case", `{"ID":"` + whPaymentID + `","Status":"PENDING"}`, true, "payment"},
		{"lower-case status, token header", `{` + id + `,"status":"completed"}`, true, "payment"},
		{"id only, token header", `{` + id + `}`, true, "payment"},
		{"lower-case status, no header", `{` + id + `,"status":"completed"}`, false, ""},
		{"mixed-case status, no header", `{` + id + `,"status":"Completed"}`, false, ""},
		{"digits status, no header", `{` + id + `,"status":"42"}`, false, ""},
		{"numeric status, no header", `{` + id + `,"status":3}`, false, ""},
		{"requisites number, no header", `{` + id + `,"requisites":4111}`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			h.AllowUnverifiedPayouts = true
			var tokens []string
			if tc.token {
				tokens = []string{whToken}
			}
			rec := whDeliver(h, http.MethodPost, tc.body, tokens...)
			n, m := calls.counts()
			switch tc.want {
			case "payment":
				assertOK(t, rec)
				assert.Equal(t, [2]int{1, 0}, [2]int{n, m})
			case "payout":
				assertOK(t, rec)
				assert.Equal(t, [2]int{0, 1}, [2]int{n, m})
			default:
				assert.Equal(t, http.StatusBadRequest, rec.Code)
				assert.Equal(t, [2]int{0, 0}, [2]int{n, m})
			}
		})
	}
}

func TestWebhookPayoutNeedsVerification(t *testing.T) {
	t.Run("refused without Client or AllowUnverifiedPayouts", func(t *testing.T) {
		h, calls, logs := whHandler()
		rec := whDeliver(h, http.MethodPost, whPayoutBody)
		assert.Equal(t, http.StatusUnauthorized, rec.Code)
		calls.none(t)
		assert.Contains(t, logs.String(), "payout notification refused")
	})
	t.Run("a correct token does not authenticate a payout", func(t *testing.T) {
		h, calls, _ := whHandler()
		rec := whDeliver(h, http.MethodPost, whPayoutBody, whToken)
		assert.Equal(t, http.StatusUnauthorized, rec.Code)
		calls.none(t)
	})
	t.Run("AllowUnverifiedPayouts passes the body's payout", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.AllowUnverifiedPayouts = true
		assertOK(t, whDeliver(h, http.MethodPost, whPayoutBody))
		assertBodyPayout(t, calls.onlyPayout(t))
	})
	t.Run("AllowUnverifiedPayouts ignores a wrong token", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.AllowUnverifiedPayouts = true
		assertOK(t, whDeliver(h, http.MethodPost, whPayoutBody, "wrong"))
		assertBodyPayout(t, calls.onlyPayout(t))
	})
}

// TestWebhookForgedPaymentBody: with Client set, a body with the right token
// but a forged amount and status does not reach the callback; the API's
// copy does.
func TestWebhookForgedPaymentBody(t *testing.T) {
	api := newWhAPI(t)
	h, calls, _ := whHandler()
	h.Client = api.client
	forged := strings.NewReplacer(`"amount":1500.50`, `"amount":1.00`, `"status":"PROCESSING"`, `"status":"COMPLETED"`).
		Replace(whPaymentBody)
	require.NotEqual(t, whPaymentBody, forged)
	assertOK(t, whDeliver(h, http.MethodPost, forged, whToken))
	p := calls.onlyPayment(t)
	assertAPIPayment(t, p)
	assert.True(t, p.Amount.Equal(decimal.RequireFromString("1499.99")), "amount is the API's, not the forged 1.00")
	assert.Equal(t, paykit.PaymentStatusCancelled, p.Status, "status is the API's, not the forged COMPLETED")
	assert.Equal(t, int32(1), api.requests.Load())
}

func TestWebhookFetchBackPayment(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"full body", whPaymentBody},
		{"id only", `{"id":"` + whPaymentID + `"}`},
		{"body that would not decode", `{"id":"` + whPaymentID + `","status":"COMPLETED","amount":"lots","created_at":7}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newWhAPI(t)
			h, calls, _ := whHandler()
			h.Client = api.client
			assertOK(t, whDeliver(h, http.MethodPost, tc.body, whToken))
			assertAPIPayment(t, calls.onlyPayment(t))
		})
	}
	t.Run("still needs the token", func(t *testing.T) {
		api := newWhAPI(t)
		h, calls, _ := whHandler()
		h.Client = api.client
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody, "wrong").Code)
		calls.none(t)
		assert.Zero(t, api.requests.Load(), "no API call for an unauthenticated notification")
	})
}

func TestWebhookFetchBackPayout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		tokens []string
	}{
		{"forged body", strings.Replace(whPayoutBody, `"amount":2500.00`, `"amount":1`, 1), nil},
		{"with a stray token", whPayoutBody, []string{"whatever"}},
		{"minimal body", `{"id":"` + whPayoutID + `","holder_name":null}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newWhAPI(t)
			h, calls, _ := whHandler()
			h.Client = api.client
			assertOK(t, whDeliver(h, http.MethodPost, tc.body, tc.tokens...))
			assertAPIPayout(t, calls.onlyPayout(t))
			assert.Equal(t, int32(1), api.requests.Load())
		})
	}
}

func TestWebhookFetchBackFails(t *testing.T) {
	payment := func(id string) string { return strings.Replace(whPaymentBody, whPaymentID, id, 1) }
	payout := func(id string) string { return strings.Replace(whPayoutBody, whPayoutID, id, 1) }
	for _, tc := range []struct {
		name   string
		body   string
		tokens []string
		want   int
		calls  int32
	}{
		{"payment not found", payment(whMissingID), []string{whToken}, http.StatusInternalServerError, 1},
		{"payment read fails", payment(whBrokenID), []string{whToken}, http.StatusInternalServerError, 1},
		{"payout not found", payout(whMissingID), nil, http.StatusInternalServerError, 1},
		{"payout read fails", payout(whBrokenID), nil, http.StatusInternalServerError, 1},
		{"payment id not a UUID", payment("pay-1"), []string{whToken}, http.StatusBadRequest, 0},
		{"payout id not a UUID", payout("../../v1/balance"), nil, http.StatusBadRequest, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newWhAPI(t, paykit.WithMaxRetries(0))
			h, calls, logs := whHandler()
			h.Client = api.client
			rec := whDeliver(h, http.MethodPost, tc.body, tc.tokens...)
			assert.Equal(t, tc.want, rec.Code)
			calls.none(t)
			assert.Equal(t, tc.calls, api.requests.Load())
			if tc.want == http.StatusInternalServerError {
				assert.Contains(t, logs.String(), "reading the")
			}
		})
	}
	t.Run("signed with the client's credentials", func(t *testing.T) {
		api := newWhAPI(t)
		bad, err := paykit.NewClient(api.srv.URL, "key", paykit.HMACSigner("other"), paykit.WithMaxRetries(0))
		require.NoError(t, err)
		h, calls, _ := whHandler()
		h.Client = bad
		assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
		calls.none(t)
	})
}

func TestWebhookCallbackError(t *testing.T) {
	h, calls, logs := whHandler()
	h.AllowUnverifiedPayouts = true
	calls.err = errors.New("database is down")
	assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
	assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPayoutBody).Code)
	n, m := calls.counts()
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, m)
	assert.Contains(t, logs.String(), "database is down")
	assert.Contains(t, logs.String(), "callback failed")
}

func TestWebhookCallbackPanic(t *testing.T) {
	h, _, logs := whHandler()
	h.AllowUnverifiedPayouts = true
	h.OnPayment = func(context.Context, *paykit.Payment) error { panic("boom") }
	var nilMap map[string]int
	h.OnPayout = func(context.Context, *paykit.Payout) error { nilMap["x"] = 1; return nil }

	rec := whDeliver(h, http.MethodPost, whPaymentBody, whToken)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	rec = whDeliver(h, http.MethodPost, whPayoutBody)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	out := logs.String()
	assert.Equal(t, 2, strings.Count(out, "callback panicked"))
	assert.Contains(t, out, "boom")
	assert.Contains(t, out, "assignment to entry in nil map")
	assertNoSecrets(t, out)

	t.Run("logged to slog.Default without a Logger", func(t *testing.T) {
		def := &paykit.TestLog{}
		defer slog.SetDefault(slog.Default())
		slog.SetDefault(def.Logger())
		h := &paykit.WebhookHandler{Token: whToken,
			OnPayment: func(context.Context, *paykit.Payment) error { panic(errors.New("kaput")) }}
		assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
		assert.Contains(t, def.String(), "callback panicked")
		assert.Contains(t, def.String(), "kaput")
	})
	t.Run("http.ErrAbortHandler still aborts", func(t *testing.T) {
		h := &paykit.WebhookHandler{Token: whToken,
			OnPayment: func(context.Context, *paykit.Payment) error { panic(http.ErrAbortHandler) }}
		assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
			whDeliver(h, http.MethodPost, whPaymentBody, whToken)
		})
	})
}

func TestWebhookKindWithoutCallbackDropped(t *testing.T) {
	api := newWhAPI(t)
	logs := &paykit.TestLog{}
	calls := &whCalls{}
	onlyPayouts := &paykit.WebhookHandler{OnPayout: calls.onPayout, Client: api.client, Logger: logs.Logger()}
	// A payment: acknowledged and dropped, even without Token, not read back.
	assertOK(t, whDeliver(onlyPayouts, http.MethodPost, whPaymentBody))
	assertOK(t, whDeliver(onlyPayouts, http.MethodPost, whPaymentBody, "wrong"))
	calls.none(t)
	assert.Zero(t, api.requests.Load())
	assert.Contains(t, logs.String(), `"level":"DEBUG","msg":"paykit: webhook: no OnPayment, payment notification dropped"`)
	assert.NotContains(t, logs.String(), "no Token, Tokens or TokenFor")

	onlyPayments := &paykit.WebhookHandler{Token: whToken, OnPayment: calls.onPayment, Client: api.client, Logger: logs.Logger()}
	assertOK(t, whDeliver(onlyPayments, http.MethodPost, whPayoutBody))
	calls.none(t)
	assert.Zero(t, api.requests.Load())
	assert.Contains(t, logs.String(), `"level":"DEBUG","msg":"paykit: webhook: no OnPayout, payout notification dropped"`)

	var zero paykit.WebhookHandler // the zero value acknowledges everything it understands
	assertOK(t, whDeliver(&zero, http.MethodPost, whPaymentBody, whToken))
	assertOK(t, whDeliver(&zero, http.MethodPost, whPayoutBody))
	assert.Equal(t, http.StatusBadRequest, whDeliver(&zero, http.MethodPost, "{").Code)
}

// TestWebhookConcurrentDeliveries delivers payments and payouts at once,
// with fetch-back, and repeats each; run with -race.
func TestWebhookConcurrentDeliveries(t *testing.T) {
	api := newWhAPI(t)
	h, calls, _ := whHandler()
	h.Client = api.client
	const n = 32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				assertOK(t, whDeliver(h, http.MethodPost, whPaymentBody, whToken))
			} else {
				assertOK(t, whDeliver(h, http.MethodPost, whPayoutBody))
			}
		}()
	}
	wg.Wait()
	calls.mu.Lock()
	defer calls.mu.Unlock()
	require.Len(t, calls.payments, n/2)
	require.Len(t, calls.payouts, n/2)
	for _, p := range calls.payments {
		assertAPIPayment(t, p)
	}
	for _, p := range calls.payouts {
		assertAPIPayout(t, p)
	}
	assert.Equal(t, int32(n), api.requests.Load())
}

// TestWebhookDedupeExample runs the idempotency pattern of the godoc, with
// a map in place of the database table.
func TestWebhookDedupeExample(t *testing.T) {
	var (
		mu        sync.Mutex
		seen      = map[[2]string]bool{}
		fulfilled int
	)
	h := &paykit.WebhookHandler{Token: whToken, OnPayment: func(_ context.Context, p *paykit.Payment) error {
		mu.Lock()
		defer mu.Unlock()
		key := [2]string{p.ID, string(p.Status)}
		if seen[key] {
			return nil
		}
		seen[key] = true
		if p.Status == paykit.PaymentStatusProcessing {
			fulfilled++
		}
		return nil
	}}
	for range 3 {
		assertOK(t, whDeliver(h, http.MethodPost, whPaymentBody, whToken))
	}
	assert.Equal(t, 1, fulfilled)
}

// assertNoSecrets: log output carries neither the token nor the bodies.
func assertNoSecrets(t *testing.T, out string) {
	t.Helper()
	for _, secret := range []string{whToken, "2200700012345678", "+79001234567", "Ivan Ivanov", "Ivan I.",
		"order-1001", "payout-77", "1500.5", "pay.example", "+79005554433", "2200700099998888"} {
		assert.NotContains(t, out, secret)
	}
}

func TestWebhookLogsCarryNoTokenOrBody(t *testing.T) {
	api := newWhAPI(t, paykit.WithMaxRetries(0))
	h, calls, logs := whHandler()
	unverified, _, logs2 := whHandler()
	unverified.AllowUnverifiedPayouts = true
	deliver := func(h *paykit.WebhookHandler) {
		whDeliver(h, http.MethodPost, whPaymentBody, whToken)
		whDeliver(h, http.MethodPost, whPaymentBody, whToken+"x")
		whDeliver(h, http.MethodPost, whPaymentBody)
		whDeliver(h, http.MethodPost, whPayoutBody, whToken)
		whDeliver(h, http.MethodPost, whPaymentBody[:60], whToken)
		whDeliver(h, http.MethodPost, strings.Replace(whPaymentBody, `1500.50`, `"x"`, 1), whToken)
		whDeliver(h, http.MethodPost, strings.Replace(whPayoutBody, `2500.00`, `"x"`, 1))
		whDeliver(h, http.MethodGet, whPaymentBody, whToken)
	}
	deliver(h)
	deliver(unverified)
	calls.err = errors.New("failed")
	deliver(h)
	h.Client = api.client
	deliver(h)
	h.Token = ""
	deliver(h)
	for _, out := range []string{logs.String(), logs2.String()} {
		require.NotEmpty(t, out)
		assertNoSecrets(t, out)
	}
}

// ---------------------------------------------------------- several tokens

// whTokenFor is a TokenFor that answers from a map keyed by ext_id and
// records what it was asked.
type whTokenFor struct {
	mu     sync.Mutex
	tokens map[string]string // ext_id → token
	err    error
	asked  [][2]string // (paymentID, extID) per call
	ctxs   []context.Context
}

func (f *whTokenFor) lookup(ctx context.Context, paymentID, extID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, [2]string{paymentID, extID})
	f.ctxs = append(f.ctxs, ctx)
	if f.err != nil {
		return "", f.err
	}
	return f.tokens[extID], nil
}

func (f *whTokenFor) calls() [][2]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]string(nil), f.asked...)
}

// TestWebhookTokenRules runs every rule of the Verification section: which
// header values each configuration of Token, Tokens and TokenFor accepts,
// and when TokenFor is asked.
func TestWebhookTokenRules(t *testing.T) {
	const (
		tokA, tokB, tokC = "tok-A-31f9", "tok-B-77c2", "tok-C-0a5e"
		perOrder         = "tok-order-1001"
	)
	// Every case delivers whPaymentBody, whose ext_id is order-1001.
	askedFor := [][2]string{{whPaymentID, "order-1001"}}
	for _, tc := range []struct {
		name     string
		token    string
		tokens   []string
		tokenFor map[string]string // nil: no TokenFor
		header   []string
		want     int
		asked    [][2]string
	}{
		{"Token", tokA, nil, nil, []string{tokA}, http.StatusOK, nil},
		{"Tokens only, first", "", []string{tokB, tokC}, nil, []string{tokB}, http.StatusOK, nil},
		{"Tokens only, last", "", []string{tokB, tokC}, nil, []string{tokC}, http.StatusOK, nil},
		{"Token beside Tokens", tokA, []string{tokB}, nil, []string{tokA}, http.StatusOK, nil},
		{"Tokens beside Token", tokA, []string{tokB}, nil, []string{tokB}, http.StatusOK, nil},
		{"none of Token and Tokens", tokA, []string{tokB}, nil, []string{tokC}, http.StatusUnauthorized, nil},
		{"Tokens, prefix of one", "", []string{tokB}, nil, []string{tokB[:5]}, http.StatusUnauthorized, nil},
		{"Tokens, repeated header", "", []string{tokB}, nil, []string{tokB, tokB}, http.StatusUnauthorized, nil},
		{"empty string in Tokens, empty header", tokA, []string{""}, nil, []string{""}, http.StatusUnauthorized, nil},
		{"empty string in Tokens, no header", tokA, []string{""}, nil, nil, http.StatusUnauthorized, nil},
		{"TokenFor answer", "", nil, map[string]string{"order-1001": perOrder}, []string{perOrder}, http.StatusOK, askedFor},
		{"TokenFor answer, wrong header", "", nil, map[string]string{"order-1001": perOrder}, []string{tokA}, http.StatusUnauthorized, askedFor},
		{"TokenFor answer is another order's", "", nil, map[string]string{"order-1002": tokC}, []string{tokC}, http.StatusUnauthorized, askedFor},
		{"TokenFor empty answer, empty header", "", nil, map[string]string{}, []string{""}, http.StatusUnauthorized, nil},
		{"TokenFor empty answer, no header", "", nil, map[string]string{}, nil, http.StatusUnauthorized, nil},
		{"TokenFor empty answer, a header", "", nil, map[string]string{}, []string{"x"}, http.StatusUnauthorized, askedFor},
		{"TokenFor, repeated header", "", nil, map[string]string{"order-1001": perOrder}, []string{perOrder, perOrder}, http.StatusUnauthorized, nil},
		{"Token matches, TokenFor not asked", tokA, nil, map[string]string{"order-1001": perOrder}, []string{tokA}, http.StatusOK, nil},
		{"Tokens match, TokenFor not asked", tokA, []string{tokB}, map[string]string{"order-1001": perOrder}, []string{tokB}, http.StatusOK, nil},
		{"all three, TokenFor's", tokA, []string{tokB}, map[string]string{"order-1001": perOrder}, []string{perOrder}, http.StatusOK, askedFor},
		{"all three, none", tokA, []string{tokB}, map[string]string{"order-1001": perOrder}, []string{tokC}, http.StatusUnauthorized, askedFor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, logs := whHandler()
			h.Token, h.Tokens = tc.token, tc.tokens
			lookup := &whTokenFor{tokens: tc.tokenFor}
			if tc.tokenFor != nil {
				h.TokenFor = lookup.lookup
			}
			rec := whDeliver(h, http.MethodPost, whPaymentBody, tc.header...)
			assert.Equal(t, tc.want, rec.Code)
			assert.Equal(t, tc.asked, lookup.calls(), "TokenFor calls")
			if tc.want == http.StatusOK {
				assertBodyPayment(t, calls.onlyPayment(t))
			} else {
				calls.none(t)
				assert.Contains(t, logs.String(), "payment notification refused")
			}
			assertNoSecrets(t, logs.String())
			for _, tok := range []string{tokA, tokB, tokC, perOrder} {
				assert.NotContains(t, logs.String(), tok)
			}
		})
	}
}

func TestWebhookTokenForArguments(t *testing.T) {
	type ctxKey struct{}
	for _, tc := range []struct {
		name, body, id, extID string
		want                  int
	}{
		{"full body", whPaymentBody, whPaymentID, "order-1001", http.StatusOK},
		{"no ext_id", `{"id":"` + whPaymentID + `","status":"PENDING"}`, whPaymentID, "", http.StatusOK},
		{"null ext_id", `{"id":"` + whPaymentID + `","ext_id":null,"status":"PENDING"}`, whPaymentID, "", http.StatusOK},
		// Not a string: TokenFor gets "", and the payment then does not decode.
		{"numeric ext_id", `{"id":"` + whPaymentID + `","ext_id":17,"status":"PENDING"}`, whPaymentID, "", http.StatusBadRequest},
		{"escaped ext_id", `{"id":"pay-\u0031","ext_id":"order\/7","status":"PENDING"}`, "pay-1", "order/7", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			h.Token = ""
			lookup := &whTokenFor{tokens: map[string]string{tc.extID: "tok-x"}}
			h.TokenFor = lookup.lookup
			req := httptest.NewRequest(http.MethodPost, whPath, strings.NewReader(tc.body))
			req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "request"))
			req.Header.Set(paykit.WebhookTokenHeader, "tok-x")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tc.want, rec.Code)
			assert.Equal(t, [][2]string{{tc.id, tc.extID}}, lookup.calls())
			assert.Equal(t, "request", lookup.ctxs[0].Value(ctxKey{}), "TokenFor gets the request's context")
			if tc.want == http.StatusOK {
				assert.Equal(t, tc.id, calls.onlyPayment(t).ID)
			}
		})
	}
}

func TestWebhookTokenForFails(t *testing.T) {
	t.Run("error answers 500", func(t *testing.T) {
		api := newWhAPI(t)
		h, calls, logs := whHandler()
		h.Token, h.Client = "", api.client
		lookup := &whTokenFor{err: errors.New("orders db down, card 2200700012345678")}
		h.TokenFor = lookup.lookup
		rec := whDeliver(h, http.MethodPost, whPaymentBody, "tok-x")
		assert.Equal(t, http.StatusInternalServerError, rec.Code)
		calls.none(t)
		assert.Len(t, lookup.calls(), 1)
		assert.Zero(t, api.requests.Load(), "not read back before it is verified")
		assert.Contains(t, logs.String(), "TokenFor failed")
		assert.Contains(t, logs.String(), "orders db down")
		assertNoSecrets(t, logs.String())
	})
	t.Run("a static match needs no lookup", func(t *testing.T) {
		h, calls, _ := whHandler()
		lookup := &whTokenFor{err: errors.New("down")}
		h.TokenFor = lookup.lookup
		assertOK(t, whDeliver(h, http.MethodPost, whPaymentBody, whToken))
		assertBodyPayment(t, calls.onlyPayment(t))
		assert.Empty(t, lookup.calls())
	})
	t.Run("panic answers 500", func(t *testing.T) {
		h, calls, logs := whHandler()
		h.TokenFor = func(context.Context, string, string) (string, error) { panic("lookup exploded") }
		assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPaymentBody, "tok-x").Code)
		calls.none(t)
		assert.Contains(t, logs.String(), "TokenFor panicked")
		assert.Contains(t, logs.String(), "lookup exploded")
	})
	t.Run("payouts never ask TokenFor", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.AllowUnverifiedPayouts = true
		lookup := &whTokenFor{err: errors.New("down")}
		h.TokenFor = lookup.lookup
		assertOK(t, whDeliver(h, http.MethodPost, whPayoutBody, "tok-x"))
		assertBodyPayout(t, calls.onlyPayout(t))
		assert.Empty(t, lookup.calls())
	})
}

// TestWebhookNothingConfiguredFailsClosed: Tokens holding only empty
// strings configure nothing; TokenFor alone is a configuration.
func TestWebhookNothingConfiguredFailsClosed(t *testing.T) {
	h, calls, logs := whHandler()
	h.Token, h.Tokens = "", []string{"", ""}
	for _, tokens := range [][]string{nil, {""}, {whToken}} {
		assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, whPaymentBody, tokens...).Code)
	}
	calls.none(t)
	assert.Equal(t, 1, strings.Count(logs.String(), "no Token, Tokens or TokenFor"), "logged once: %s", logs)

	h2, calls2, logs2 := whHandler()
	h2.Token = ""
	h2.TokenFor = (&whTokenFor{tokens: map[string]string{"order-1001": "t"}}).lookup
	assertOK(t, whDeliver(h2, http.MethodPost, whPaymentBody, "t"))
	assertBodyPayment(t, calls2.onlyPayment(t))
	assert.NotContains(t, logs2.String(), "no Token, Tokens or TokenFor")
}

// TestWebhookSandboxTokens: four payments created in the sandbox, three
// with their own notification tokens and one without; the sandbox sends
// each payment's own token. A handler with Token (the current token),
// Tokens (the previous one, during rotation) and TokenFor (a per-order
// token from the merchant's store) accepts the three and refuses the one
// without, and reads each accepted payment back through Client.
func TestWebhookSandboxTokens(t *testing.T) {
	ctx := context.Background()
	sb := sandbox.New(sandbox.Config{WebhookRetryWait: time.Millisecond, WebhookMaxAttempts: 2})
	api := httptest.NewServer(sb)
	t.Cleanup(func() { api.Close(); sb.Close() })
	c, err := paykit.NewClient(api.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond))
	require.NoError(t, err)

	calls, logs := &whCalls{}, &paykit.TestLog{}
	store := &whTokenFor{tokens: map[string]string{"tok-order-3": "nt-per-order-3"}}
	var (
		mu       sync.Mutex
		outcomes = map[paykit.WebhookOutcome]int{}
	)
	h := &paykit.WebhookHandler{
		Token:     "nt-current",
		Tokens:    []string{"nt-previous"},
		TokenFor:  store.lookup,
		OnPayment: calls.onPayment,
		Client:    c,
		Logger:    logs.Logger(),
		Observe: func(_ context.Context, d paykit.WebhookDelivery) {
			mu.Lock()
			defer mu.Unlock()
			outcomes[d.Outcome]++
		},
	}
	receiver := httptest.NewServer(h)
	t.Cleanup(receiver.Close)

	created := map[string]*paykit.Payment{}
	for _, tc := range []struct{ extID, token string }{
		{"tok-order-1", "nt-current"},
		{"tok-order-2", "nt-previous"},
		{"tok-order-3", "nt-per-order-3"},
		{"tok-order-4", ""},
	} {
		p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: tc.extID, Amount: decimal.RequireFromString("1500.50"),
			NotifyURL: receiver.URL + whPath, NotificationToken: tc.token})
		require.NoError(t, err)
		created[tc.extID] = p
		_, err = c.ConfirmPayment(ctx, p.ID, nil) // PENDING → PROCESSING sends a notification
		require.NoError(t, err)
	}
	flushCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, sb.FlushWebhooks(flushCtx))

	calls.mu.Lock()
	got := map[string]*paykit.Payment{}
	for _, p := range calls.payments {
		got[p.ExtID] = p
	}
	n := len(calls.payments)
	calls.mu.Unlock()
	assert.Equal(t, 3, n, "one accepted notification per payment with a token")
	for _, extID := range []string{"tok-order-1", "tok-order-2", "tok-order-3"} {
		if assert.Contains(t, got, extID) {
			assert.Equal(t, created[extID].ID, got[extID].ID)
			assert.Equal(t, paykit.PaymentStatusProcessing, got[extID].Status)
			assert.True(t, got[extID].Amount.Equal(decimal.RequireFromString("1500.50")))
		}
	}
	assert.NotContains(t, got, "tok-order-4", "a payment without a token cannot be notified")
	// TokenFor was asked only where neither Token nor Tokens matched and a
	// header was sent: for order 3 alone (order 4's notifications carry no
	// header at all).
	assert.Equal(t, [][2]string{{created["tok-order-3"].ID, "tok-order-3"}}, store.calls())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[paykit.WebhookOutcome]int{paykit.WebhookAccepted: 3, paykit.WebhookRefusedToken: 2}, outcomes,
		"order 4's notification is refused on each of its 2 attempts")
	assertNoSecrets(t, logs.String())
	for _, tok := range []string{"nt-current", "nt-previous", "nt-per-order-3"} {
		assert.NotContains(t, logs.String(), tok)
	}
}

// ------------------------------------------------------ fetch-back identity

// TestWebhookFetchBackAnotherID: an API (a faulty cache, a hostile proxy)
// that answers another resource's copy for the notified id must not reach
// the callback: 500, so the sender retries.
func TestWebhookFetchBackAnotherID(t *testing.T) {
	const otherID = "7a7a7a7a-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	anotherPayment := strings.NewReplacer(whPaymentID, otherID, `"order-1001"`, `"order-9999"`,
		`"status":"cancelled"`, `"status":"COMPLETED"`, `"1499.99"`, `"300000"`).Replace(whAPIPayment)
	anotherPayout := strings.Replace(whAPIPayout, whPayoutID, otherID, 1)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/v1/payouts/") {
			io.WriteString(w, anotherPayout)
			return
		}
		io.WriteString(w, anotherPayment)
	}))
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, "key", paykit.HMACSigner("secret"), paykit.WithMaxRetries(0))
	require.NoError(t, err)

	var seen []paykit.WebhookDelivery
	h, calls, logs := whHandler()
	h.Client = c
	h.Observe = func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) }
	assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
	assert.Equal(t, http.StatusInternalServerError, whDeliver(h, http.MethodPost, whPayoutBody).Code)
	calls.none(t)
	assert.Equal(t, int32(2), requests.Load())
	assert.Contains(t, logs.String(), "reading the payment back")
	assert.Contains(t, logs.String(), "reading the payout back")
	require.Len(t, seen, 2)
	for i, kind := range []string{"payment", "payout"} {
		assert.Equal(t, paykit.WebhookDelivery{Kind: kind, Outcome: paykit.WebhookFetchFailed,
			StatusCode: http.StatusInternalServerError, Duration: seen[i].Duration}, seen[i])
	}
}

// ------------------------------------------------------------------- gzip

func gzipped(t testing.TB, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(body)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// countingReader counts the bytes the handler read from the request body.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func whDeliverEncoded(h http.Handler, body []byte, encodings []string, tokens ...string) (*httptest.ResponseRecorder, *countingReader) {
	cr := &countingReader{r: bytes.NewReader(body)}
	req := httptest.NewRequest(http.MethodPost, whPath, cr)
	req.Header.Set("Content-Type", "application/json")
	for _, e := range encodings {
		req.Header.Add("Content-Encoding", e)
	}
	for _, tok := range tokens {
		req.Header.Add(paykit.WebhookTokenHeader, tok)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, cr
}

func TestWebhookGzip(t *testing.T) {
	zipped := gzipped(t, []byte(whPaymentBody))
	for _, tc := range []struct {
		name      string
		body      []byte
		encodings []string
	}{
		{"gzip", zipped, []string{"gzip"}},
		{"GZIP", zipped, []string{"GZIP"}},
		{"x-gzip", zipped, []string{"x-gzip"}},
		{"gzip with identity", zipped, []string{"identity, gzip"}},
		{"identity", []byte(whPaymentBody), []string{"identity"}},
		{"two gzip members", append(gzipped(t, []byte(whPaymentBody[:50])), gzipped(t, []byte(whPaymentBody[50:]))...), []string{"gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			rec, _ := whDeliverEncoded(h, tc.body, tc.encodings, whToken)
			assertOK(t, rec)
			assertBodyPayment(t, calls.onlyPayment(t))
		})
	}
	t.Run("payout with fetch-back", func(t *testing.T) {
		api := newWhAPI(t)
		h, calls, _ := whHandler()
		h.Client = api.client
		rec, _ := whDeliverEncoded(h, gzipped(t, []byte(whPayoutBody)), []string{"gzip"})
		assertOK(t, rec)
		assertAPIPayout(t, calls.onlyPayout(t))
	})
}

func TestWebhookGzipRefused(t *testing.T) {
	zipped := gzipped(t, []byte(whPaymentBody))
	for _, tc := range []struct {
		name      string
		body      []byte
		encodings []string
		want      int
	}{
		{"deflate", zipped, []string{"deflate"}, http.StatusUnsupportedMediaType},
		{"br", zipped, []string{"br"}, http.StatusUnsupportedMediaType},
		{"gzip twice in one header", zipped, []string{"gzip, gzip"}, http.StatusUnsupportedMediaType},
		{"gzip twice in two headers", zipped, []string{"gzip", "gzip"}, http.StatusUnsupportedMediaType},
		{"gzip then br", zipped, []string{"gzip", "br"}, http.StatusUnsupportedMediaType},
		{"plain body said to be gzip", []byte(whPaymentBody), []string{"gzip"}, http.StatusBadRequest},
		{"truncated gzip", zipped[:len(zipped)-9], []string{"gzip"}, http.StatusBadRequest},
		{"corrupt checksum", append(append([]byte(nil), zipped[:len(zipped)-8]...), 0, 0, 0, 0, 0, 0, 0, 0), []string{"gzip"}, http.StatusBadRequest},
		{"garbage after the stream", append(append([]byte(nil), zipped...), "junk"...), []string{"gzip"}, http.StatusBadRequest},
		{"empty gzip body", nil, []string{"gzip"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			rec, _ := whDeliverEncoded(h, tc.body, tc.encodings, whToken)
			assert.Equal(t, tc.want, rec.Code)
			calls.none(t)
		})
	}
}

// TestWebhookGzipLimit: MaxBodyBytes applies to the decompressed body; a
// gzip bomb is refused with 413 without being inflated past the limit,
// which shows in how little of the compressed body is read.
func TestWebhookGzipLimit(t *testing.T) {
	padded := func(n int) []byte {
		head := strings.TrimSuffix(whPaymentBody, "}") + `,"pad":"`
		return []byte(head + strings.Repeat("x", n-len(head)-2) + `"}`)
	}
	const limit = 64 << 10
	t.Run("decompressed size at the limit", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.MaxBodyBytes = limit
		rec, _ := whDeliverEncoded(h, gzipped(t, padded(limit)), []string{"gzip"}, whToken)
		assertOK(t, rec)
		assertBodyPayment(t, calls.onlyPayment(t))
	})
	t.Run("decompressed size one byte over", func(t *testing.T) {
		h, calls, logs := whHandler()
		h.MaxBodyBytes = limit
		body := gzipped(t, padded(limit+1))
		require.Less(t, len(body), limit/10, "compressed, it is far under the limit")
		rec, _ := whDeliverEncoded(h, body, []string{"gzip"}, whToken)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		calls.none(t)
		assert.Contains(t, logs.String(), "body too large")
	})
	t.Run("compressed size over", func(t *testing.T) {
		h, calls, _ := whHandler()
		h.MaxBodyBytes = 64
		rec, _ := whDeliverEncoded(h, gzipped(t, []byte(whPaymentBody)), []string{"gzip"}, whToken)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		calls.none(t)
	})
	t.Run("bomb", func(t *testing.T) {
		// 64 MiB of zeros after a valid payment prefix, as 64 gzip members
		// of 1 MiB each (a gzip stream may hold several), ~64 KiB in all.
		member := gzipped(t, make([]byte, 1<<20))
		first := gzipped(t, append([]byte(strings.TrimSuffix(whPaymentBody, "}")+`,"pad":"`), make([]byte, 1<<20)...))
		raw := bytes.NewBuffer(first)
		for range 63 {
			raw.Write(member)
		}
		bomb := raw.Bytes()
		require.Less(t, len(bomb), paykit.DefaultWebhookMaxBodyBytes/4)

		var seen []paykit.WebhookDelivery
		h, calls, _ := whHandler()
		h.Observe = func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) }
		rec, cr := whDeliverEncoded(h, bomb, []string{"gzip"}, whToken)
		assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		calls.none(t)
		// Inflating the whole bomb would read all of it; stopping at the
		// 1 MiB limit reads about 1/1000 of that, plus read-ahead.
		assert.Less(t, cr.n.Load(), int64(len(bomb)/8), "compressed bytes read of %d", len(bomb))
		t.Logf("bomb: %d compressed bytes inflating to 64 MiB; %d read before the 413", len(bomb), cr.n.Load())
		require.Len(t, seen, 1)
		assert.Equal(t, paykit.WebhookRefusedSize, seen[0].Outcome)
	})
}

// ----------------------------------------------------------------- Observe

// observeWriter is a ResponseWriter that fails the test if Observe runs
// after the answer was written.
type observeWriter struct {
	*httptest.ResponseRecorder
	wrote atomic.Bool
}

func (w *observeWriter) WriteHeader(code int) {
	w.wrote.Store(true)
	w.ResponseRecorder.WriteHeader(code)
}

func (w *observeWriter) Write(b []byte) (int, error) {
	w.wrote.Store(true)
	return w.ResponseRecorder.Write(b)
}

// TestWebhookObserve delivers one request per outcome and checks that
// Observe sees it exactly once, before the answer is written, with the
// request's context, the kind, the outcome and the status answered.
func TestWebhookObserve(t *testing.T) {
	type ctxKey struct{}
	api := newWhAPI(t, paykit.WithMaxRetries(0))
	brokenPayment := strings.Replace(whPaymentBody, whPaymentID, whBrokenID, 1)
	for _, tc := range []struct {
		name      string
		setup     func(h *paykit.WebhookHandler)
		method    string
		body      []byte
		encodings []string
		tokens    []string
		kind      string
		outcome   paykit.WebhookOutcome
		code      int
	}{
		{"method", nil, http.MethodGet, []byte(whPaymentBody), nil, []string{whToken}, "", paykit.WebhookRefusedMethod, http.StatusMethodNotAllowed},
		{"size", func(h *paykit.WebhookHandler) { h.MaxBodyBytes = 10 }, http.MethodPost, []byte(whPaymentBody), nil, []string{whToken}, "", paykit.WebhookRefusedSize, http.StatusRequestEntityTooLarge},
		{"body not JSON", nil, http.MethodPost, []byte("nope"), nil, []string{whToken}, "", paykit.WebhookRefusedBody, http.StatusBadRequest},
		{"body kind unknown", nil, http.MethodPost, []byte(`{"id":"x","status":"done"}`), nil, nil, "", paykit.WebhookRefusedBody, http.StatusBadRequest},
		{"body does not decode", nil, http.MethodPost, []byte(`{"id":"x","payment_url":"u","amount":"lots"}`), nil, []string{whToken}, "payment", paykit.WebhookRefusedBody, http.StatusBadRequest},
		{"body encoding", nil, http.MethodPost, []byte(whPaymentBody), []string{"br"}, []string{whToken}, "", paykit.WebhookRefusedBody, http.StatusUnsupportedMediaType},
		{"token", nil, http.MethodPost, []byte(whPaymentBody), nil, []string{"wrong"}, "payment", paykit.WebhookRefusedToken, http.StatusUnauthorized},
		{"no token configured", func(h *paykit.WebhookHandler) { h.Token = "" }, http.MethodPost, []byte(whPaymentBody), nil, []string{whToken}, "payment", paykit.WebhookRefusedToken, http.StatusUnauthorized},
		{"unverified payout", nil, http.MethodPost, []byte(whPayoutBody), nil, nil, "payout", paykit.WebhookRefusedUnverified, http.StatusUnauthorized},
		{"token lookup failed", func(h *paykit.WebhookHandler) {
			h.TokenFor = func(context.Context, string, string) (string, error) { return "", errors.New("down") }
		}, http.MethodPost, []byte(whPaymentBody), nil, []string{"per-order"}, "payment", paykit.WebhookTokenLookupFailed, http.StatusInternalServerError},
		{"fetch failed", func(h *paykit.WebhookHandler) { h.Client = api.client }, http.MethodPost, []byte(brokenPayment), nil, []string{whToken}, "payment", paykit.WebhookFetchFailed, http.StatusInternalServerError},
		{"callback error", func(h *paykit.WebhookHandler) {
			h.OnPayment = func(context.Context, *paykit.Payment) error { return errors.New("db down") }
		}, http.MethodPost, []byte(whPaymentBody), nil, []string{whToken}, "payment", paykit.WebhookCallbackError, http.StatusInternalServerError},
		{"callback panic", func(h *paykit.WebhookHandler) {
			h.OnPayout = func(context.Context, *paykit.Payout) error { panic("boom") }
			h.AllowUnverifiedPayouts = true
		}, http.MethodPost, []byte(whPayoutBody), nil, nil, "payout", paykit.WebhookCallbackError, http.StatusInternalServerError},
		{"accepted payment", nil, http.MethodPost, []byte(whPaymentBody), nil, []string{whToken}, "payment", paykit.WebhookAccepted, http.StatusOK},
		{"accepted gzipped payout", func(h *paykit.WebhookHandler) { h.Client = api.client }, http.MethodPost, gzipped(t, []byte(whPayoutBody)), []string{"gzip"}, nil, "payout", paykit.WebhookAccepted, http.StatusOK},
		{"ignored payment", func(h *paykit.WebhookHandler) { h.OnPayment = nil }, http.MethodPost, []byte(whPaymentBody), nil, nil, "payment", paykit.WebhookIgnored, http.StatusOK},
		{"ignored payout", func(h *paykit.WebhookHandler) { h.OnPayout = nil }, http.MethodPost, []byte(whPayoutBody), nil, nil, "payout", paykit.WebhookIgnored, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, _ := whHandler()
			if tc.setup != nil {
				tc.setup(h)
			}
			w := &observeWriter{ResponseRecorder: httptest.NewRecorder()}
			var seen []paykit.WebhookDelivery
			h.Observe = func(ctx context.Context, d paykit.WebhookDelivery) {
				assert.False(t, w.wrote.Load(), "Observe runs before the answer is written")
				assert.Equal(t, "request", ctx.Value(ctxKey{}), "Observe gets the request's context")
				seen = append(seen, d)
			}
			req := httptest.NewRequest(tc.method, whPath, bytes.NewReader(tc.body))
			req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "request"))
			for _, e := range tc.encodings {
				req.Header.Add("Content-Encoding", e)
			}
			for _, tok := range tc.tokens {
				req.Header.Add(paykit.WebhookTokenHeader, tok)
			}
			h.ServeHTTP(w, req)
			assert.Equal(t, tc.code, w.Code)
			require.Len(t, seen, 1, "Observe runs once per request")
			assert.Equal(t, paykit.WebhookDelivery{Kind: tc.kind, Outcome: tc.outcome, StatusCode: tc.code,
				Duration: seen[0].Duration}, seen[0])
			assert.GreaterOrEqual(t, seen[0].Duration, time.Duration(0))
		})
	}
}

// TestWebhookObserveDuration: Duration spans the handling, callback
// included. The callback waits for the clock to move rather than sleeping.
func TestWebhookObserveDuration(t *testing.T) {
	h, _, _ := whHandler()
	var inCallback time.Duration
	h.OnPayment = func(context.Context, *paykit.Payment) error {
		start := time.Now()
		for time.Since(start) <= 0 {
		}
		inCallback = time.Since(start)
		return nil
	}
	var seen []paykit.WebhookDelivery
	h.Observe = func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) }
	assertOK(t, whDeliver(h, http.MethodPost, whPaymentBody, whToken))
	require.Len(t, seen, 1)
	assert.Greater(t, inCallback, time.Duration(0))
	assert.GreaterOrEqual(t, seen[0].Duration, inCallback)
}

// TestWebhookObserveAbort: a callback that aborts the response with
// http.ErrAbortHandler is still observed, once, with no status answered.
func TestWebhookObserveAbort(t *testing.T) {
	h, _, _ := whHandler()
	h.OnPayment = func(context.Context, *paykit.Payment) error { panic(http.ErrAbortHandler) }
	var seen []paykit.WebhookDelivery
	h.Observe = func(_ context.Context, d paykit.WebhookDelivery) { seen = append(seen, d) }
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { whDeliver(h, http.MethodPost, whPaymentBody, whToken) })
	require.Len(t, seen, 1)
	assert.Equal(t, paykit.WebhookDelivery{Kind: "payment", Outcome: paykit.WebhookCallbackError, Duration: seen[0].Duration}, seen[0])
}

// TestWebhookObserveNilCostsNothing: the hook allocates nothing, set or
// not, so a handler without Observe pays no allocation for it (nor a clock
// read, which the code shows: time.Now runs only when Observe is set).
func TestWebhookObserveNilCostsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	h := &paykit.WebhookHandler{Token: whToken, OnPayment: func(context.Context, *paykit.Payment) error { return nil }}
	body := []byte(whPaymentBody)
	rd := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, whPath, nil)
	req.Header.Set(paykit.WebhookTokenHeader, whToken)
	req.Body = benchBody{rd}
	w := &benchWriter{header: http.Header{}}
	withoutHook := testing.AllocsPerRun(200, func() {
		rd.Reset(body)
		h.ServeHTTP(w, req)
	})
	h.Observe = func(context.Context, paykit.WebhookDelivery) {}
	withHook := testing.AllocsPerRun(200, func() {
		rd.Reset(body)
		h.ServeHTTP(w, req)
	})
	assert.Equal(t, http.StatusOK, w.code)
	assert.Equal(t, withoutHook, withHook)
	t.Logf("allocations per delivery: %v without Observe, %v with a no-op Observe", withoutHook, withHook)
}

// TestWebhookHugeNumberRefused: a body carrying a number of 1.5 million
// digits is refused with 400. Refusing it before any big-number parsing,
// so that it costs milliseconds, is the decoders' part (encoding.go).
func TestWebhookHugeNumberRefused(t *testing.T) {
	digits := strings.Repeat("9", 1_500_000)
	for _, tc := range []struct{ name, body string }{
		{"payment amount", strings.Replace(whPaymentBody, "1500.50", digits, 1)},
		{"payout amount", strings.Replace(whPayoutBody, "2500.00", digits, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, calls, _ := whHandler()
			h.AllowUnverifiedPayouts = true
			h.MaxBodyBytes = 4 << 20
			rec := whDeliver(h, http.MethodPost, tc.body, whToken)
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			calls.none(t)
		})
	}
}

// A per-payment token vouches for one payment only: a body with payment
// B's id, payment A's ext_id and A's token is refused, and B never reaches
// the callback (the third review's hole 6).
func TestWebhookTokenForVouchesForOnePayment(t *testing.T) {
	t.Parallel()
	const idB = "7a7a7a7a-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	paymentB := strings.NewReplacer(whPaymentID, idB, `"order-1001"`, `"order-B"`).Replace(whAPIPayment)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/payments/" + idB:
			io.WriteString(w, paymentB)
		case "/v1/payments/" + whPaymentID:
			io.WriteString(w, whAPIPayment)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := paykit.NewClient(srv.URL, "key", paykit.HMACSigner("secret"), paykit.WithMaxRetries(0))
	require.NoError(t, err)
	tf := &whTokenFor{tokens: map[string]string{"order-1001": "tok-A", "order-B": "tok-B"}}
	h, calls, _ := whHandler()
	h.Token, h.TokenFor, h.Client = "", tf.lookup, c

	forged := strings.Replace(whPaymentBody, `"id":"`+whPaymentID+`"`, `"id":"`+idB+`"`, 1) // B's id, A's ext_id
	assert.Equal(t, http.StatusUnauthorized, whDeliver(h, http.MethodPost, forged, "tok-A").Code)
	calls.none(t)

	// The genuine notification of A is accepted, with the API's copy of A.
	require.Equal(t, http.StatusOK, whDeliver(h, http.MethodPost, whPaymentBody, "tok-A").Code)
	require.Len(t, calls.payments, 1)
	assert.Equal(t, whPaymentID, calls.payments[0].ID)
	assert.Equal(t, "order-1001", calls.payments[0].ExtID)
}

// An Observe that panics neither drops the answer (the sender would deliver
// again what the callback already handled) nor panics the server: the
// delivery is answered and the panic logged once.
func TestWebhookObservePanicKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	h, calls, logs := whHandler()
	h.Observe = func(context.Context, paykit.WebhookDelivery) { panic("observe") }
	for range 2 {
		assert.Equal(t, http.StatusOK, whDeliver(h, http.MethodPost, whPaymentBody, whToken).Code)
	}
	assert.Len(t, calls.payments, 2)
	assert.Equal(t, 1, strings.Count(logs.String(), "Observe panicked"))
}
