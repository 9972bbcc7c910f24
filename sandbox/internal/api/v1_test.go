package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// fakeBackend answers the API as the test sets it up and records what the
// API asked of it, so the tests see what package api decides on its own:
// authentication, body caps, field rules, views and error mapping.
type fakeBackend struct {
	calls     []string
	storeErr  error
	payment   ledger.Payment
	refusal   *ledger.Error
	created   NewPayment
	served    []Served
	payoutsIn PayoutQuery
	fault     *Fault
	// failing is the store's failure that a later section causes while
	// this one runs (StoreFailed answers it once the call is made).
	failing error
}

const (
	testKey       = "key_test"
	testSecret    = "secret_test"
	unsignedKey   = "key_unsigned"
	testHost      = "sandbox.test"
	testPaymentID = "pay-1"
)

func (b *fakeBackend) Credential(key string) (paykit.Signer, bool, bool) {
	switch key {
	case testKey:
		return paykit.HMACSigner(testSecret), false, true
	case unsignedKey:
		return paykit.HMACSigner("other"), true, true
	}
	return nil, false, false
}
func (b *fakeBackend) StoreFailed() error          { return b.storeErr }
func (b *fakeBackend) Ready(context.Context) error { return b.storeErr }
func (b *fakeBackend) CatchUp()                    { b.calls = append(b.calls, "catch up") }
func (b *fakeBackend) Arrived(method, pattern, path string) (Fault, bool) {
	b.calls = append(b.calls, "arrived "+method+" "+pattern+" "+path)
	if b.fault == nil {
		return Fault{}, false
	}
	return *b.fault, true
}
func (b *fakeBackend) Served(s Served) { b.served = append(b.served, s) }

func (b *fakeBackend) answer(call string) (ledger.Payment, *ledger.Error) {
	b.calls = append(b.calls, call)
	if b.failing != nil {
		b.storeErr = b.failing
	}
	if b.refusal != nil {
		return ledger.Payment{}, b.refusal
	}
	return b.payment, nil
}

func (b *fakeBackend) CreatePayment(key string, in NewPayment) (ledger.Payment, *ledger.Error) {
	b.created = in
	return b.answer("create payment " + key)
}
func (b *fakeBackend) Payment(key, id string) (ledger.Payment, *ledger.Error) {
	return b.answer("payment " + key + " " + id)
}
func (b *fakeBackend) PaymentByExtID(key, extID string) (ledger.Payment, *ledger.Error) {
	return b.answer("payment by ext_id " + key + " " + extID)
}
func (b *fakeBackend) ConfirmPayment(key, id string, _ int) (ledger.Payment, *ledger.Error) {
	return b.answer("confirm " + id)
}
func (b *fakeBackend) CancelPayment(key, id string) (ledger.Payment, *ledger.Error) {
	return b.answer("cancel " + id)
}
func (b *fakeBackend) OpenDispute(key, id string, _ ledger.Dispute) (ledger.Payment, *ledger.Error) {
	return b.answer("open dispute " + id)
}
func (b *fakeBackend) CancelDispute(key, id string) (ledger.Payment, *ledger.Error) {
	return b.answer("cancel dispute " + id)
}
func (b *fakeBackend) CreatePayout(string, NewPayout) (ledger.Payout, *ledger.Error) {
	return ledger.Payout{}, nil
}
func (b *fakeBackend) Payout(string, string) (ledger.Payout, *ledger.Error) {
	return ledger.Payout{}, nil
}
func (b *fakeBackend) PayoutByExtID(string, string) (ledger.Payout, *ledger.Error) {
	return ledger.Payout{}, nil
}
func (b *fakeBackend) Payouts(_ string, q PayoutQuery) ([]ledger.Payout, int) {
	b.payoutsIn = q
	return nil, 0
}
func (b *fakeBackend) Terminals(string) []ledger.Terminal { return nil }
func (b *fakeBackend) Transfer(string, string, string, decimal.Decimal) *ledger.Error {
	return nil
}
func (b *fakeBackend) CreateWithdrawal(string, NewWithdrawal) (ledger.Withdrawal, *ledger.Error) {
	return ledger.Withdrawal{}, nil
}
func (b *fakeBackend) Withdrawal(string, string) (ledger.Withdrawal, *ledger.Error) {
	return ledger.Withdrawal{}, nil
}
func (b *fakeBackend) Banks() []ledger.Bank { return nil }

var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testPayment is a PENDING CARD payment with every field the views show.
func testPayment() ledger.Payment {
	return ledger.Payment{ID: testPaymentID, ExtID: "order-1", Amount: decimal.RequireFromString("1500.50"),
		Method: "CARD", Bank: ledger.Bank{Code: "sber", Name: "Sberbank", IsActive: true, Country: "RU"},
		ReqType: "card", ReqValue: "2200000000000004", Holder: "Ivan P.", Status: ledger.PaymentPending,
		CreatedAt: created, ValidUntil: created.Add(30 * time.Minute), USDTRate: decimal.RequireFromString("95.5"),
		PaymentURL: "http://" + testHost + "/pay/" + testPaymentID}
}

// serve runs one request through the API's pipeline, signed for key with
// testSecret unless sig is given ("-" sends none).
func serve(t *testing.T, b Backend, method, path, key, sig string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	return serveWith(t, b, Config{}, method, path, key, sig, body)
}

// serveWith is serve with the API's Config.
func serveWith(t *testing.T, b Backend, cfg Config, method, path, key, sig string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	a := New(b, cfg)
	mux := http.NewServeMux()
	a.Routes(mux)
	r := httptest.NewRequest(method, "http://"+testHost+path, bytes.NewReader(body))
	if key != "" {
		r.Header.Set("X-Identity", key)
	}
	switch sig {
	case "":
		s, err := paykit.HMACSigner(testSecret).Sign(r, body)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("X-Signature", s)
	case "-":
	default:
		r.Header.Set("X-Signature", sig)
	}
	w := httptest.NewRecorder()
	a.Pipeline(mux).ServeHTTP(w, r)
	return w
}

// Every refusal of authentication is 401 AUTH_001 before the backend is
// asked anything; a merchant that accepts unsigned requests is served
// with a bad signature, and the backend is told so for its log.
func TestV1AuthenticationRefusals(t *testing.T) {
	body := []byte(`{"ext_id":"order-1","amount":1500.50}`)
	for _, tc := range []struct {
		name, key, sig, want string
	}{
		{"no key", "", "", `{"error":"AUTH_001","message":"missing X-Identity or X-Signature header","data":{}}`},
		{"no signature", testKey, "-", `{"error":"AUTH_001","message":"missing X-Identity or X-Signature header","data":{}}`},
		{"unknown key", "key_nobody", "", `{"error":"AUTH_001","message":"unknown API key or invalid signature","data":{}}`},
		{"bad signature", testKey, "bad", `{"error":"AUTH_001","message":"invalid signature: the sandbox signed method POST, ` +
			`request URI /v1/payments and a body of 37 bytes with SHA-256 ` +
			`4a20ac3d9f2d5d99769f2a145320899eba053bebb9824172b7ad54a22245d1c3","data":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{payment: testPayment()}
			w := serve(t, b, "POST", "/v1/payments", tc.key, tc.sig, body)
			wantAnswer(t, w, 401, tc.want)
			if len(b.calls) != 2 || b.calls[0] != "catch up" || b.calls[1] != "arrived POST POST /v1/payments /v1/payments" {
				t.Fatalf("the backend was asked %q", b.calls)
			}
			if len(b.served) != 1 || b.served[0].Status != 401 || b.served[0].Code != "AUTH_001" ||
				b.served[0].Pattern != "POST /v1/payments" {
				t.Fatalf("served %+v", b.served)
			}
		})
	}

	b := &fakeBackend{payment: testPayment()}
	w := serve(t, b, "POST", "/v1/payments", unsignedKey, "bad", body)
	if w.Code != 200 {
		t.Fatalf("unsigned merchant: %d %s", w.Code, w.Body.String())
	}
	w = serve(t, b, "POST", "/v1/payments", unsignedKey, "-", body)
	if w.Code != 200 {
		t.Fatalf("unsigned merchant without X-Signature: %d %s", w.Code, w.Body.String())
	}
}

// A request served without a valid signature (its merchant accepts
// unsigned requests) is one warning in the operator's log, written here:
// the key shown by its start, the path masked as the request log masks it
// (an escaped card number too), and neither the key nor the number whole.
func TestV1AcceptedUnsignedIsLoggedMasked(t *testing.T) {
	var logs syncBuffer
	cfg := Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	b := &fakeBackend{payment: testPayment()}
	for _, sig := range []string{"bad", "-"} {
		w := serveWith(t, b, cfg, "GET", "/v1/payments/by-ext-id/4111%201111%201111%201111", unsignedKey, sig, nil)
		if w.Code != 200 {
			t.Fatalf("unsigned merchant: %d %s", w.Code, w.Body.String())
		}
	}
	w := serveWith(t, b, cfg, "GET", "/v1/payments/"+testPaymentID, testKey, "", nil)
	if w.Code != 200 {
		t.Fatalf("signed request: %d %s", w.Code, w.Body.String())
	}
	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want one per unsigned request:\n%s", len(lines), logs.String())
	}
	for _, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		delete(got, "time")
		want := map[string]any{"level": "WARN", "msg": "request accepted without a valid signature (the merchant accepts unsigned requests)",
			"api_key": "key_…", "method": "GET", "path": "/v1/payments/by-ext-id/****%20****%20****%201111"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("log line %v, want %v", got, want)
		}
	}
	if strings.Contains(logs.String(), unsignedKey) {
		t.Fatalf("the log shows the key:\n%s", logs.String())
	}
}

// MaskedPath masks before it cuts: a number across the cut is masked, not
// left as a run too short to be recognised.
func TestMaskedPathMasksThenCuts(t *testing.T) {
	p := "/v1/payments/by-ext-id/" + strings.Repeat("a", MaxLoggedPath-30) + "-4111111111111111"
	got := MaskedPath(p)
	want := "/v1/payments/by-ext-id/" + strings.Repeat("a", MaxLoggedPath-30) + "-******..."
	if got != want {
		t.Fatalf("MaskedPath = %q, want %q", got, want)
	}
	if got := MaskedPath("/v1/payments/123e4567-e89b-12d3-a456-426614174000"); got != "/v1/payments/123e4567-e89b-12d3-a456-426614174000" {
		t.Fatalf("a payment id was masked: %q", got)
	}
}

// A body over its route's cap is refused with the route's invalid code
// naming the body, before the backend is asked (and before the
// signature: the body is never buffered).
func TestV1BodyOverItsCap(t *testing.T) {
	for _, tc := range []struct {
		path string
		cap  int
		code string
	}{{"/v1/payments", JSONBodyCap, "PAY_002"}, {"/v1/transfers", JSONBodyCap, "TRF_001"},
		{"/v1/withdrawals", JSONBodyCap, "WDR_001"}, {"/v1/payments/x/cancel", NoBodyCap, "PAY_002"}} {
		b := &fakeBackend{}
		w := serve(t, b, "POST", tc.path, testKey, "unchecked", bytes.Repeat([]byte(" "), tc.cap+1))
		wantAnswer(t, w, 400, `{"error":"`+tc.code+`","message":"request body is larger than this route's limit of `+
			itoa(tc.cap)+` bytes","data":{"field":"body"}}`)
		if len(b.calls) != 2 {
			t.Fatalf("%s: the backend was asked %q", tc.path, b.calls)
		}
	}
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }

// Each Kind of a rule's refusal has its status; the body carries the
// rule's code and message, and the field when the rule named one.
func TestV1LedgerErrorOfEachKind(t *testing.T) {
	for _, tc := range []struct {
		err    ledger.Error
		status int
		body   string
	}{
		{ledger.Error{Kind: ledger.Invalid, Code: "WDR_001", Field: "terminal_id", Message: "terminal not found or not active"}, 400,
			`{"error":"WDR_001","message":"terminal not found or not active","data":{"field":"terminal_id"}}`},
		{ledger.Error{Kind: ledger.Invalid, Code: "PAY_002", Message: "bad"}, 400, `{"error":"PAY_002","message":"bad","data":{}}`},
		{ledger.Error{Kind: ledger.NotFound, Code: "PAY_006", Message: "payment not found"}, 404,
			`{"error":"PAY_006","message":"payment not found","data":{}}`},
		{ledger.Error{Kind: ledger.WrongState, Code: "PAY_007", Message: "payment cannot be cancelled: status is COMPLETED"}, 400,
			`{"error":"PAY_007","message":"payment cannot be cancelled: status is COMPLETED","data":{}}`},
		{ledger.Error{Kind: ledger.Refused, Code: "TRF_003", Message: "insufficient funds"}, 400,
			`{"error":"TRF_003","message":"insufficient funds","data":{}}`},
		{ledger.Error{Kind: ledger.Conflict, Code: "DIS_002", Message: "a dispute already exists"}, 409,
			`{"error":"DIS_002","message":"a dispute already exists","data":{}}`},
		{ledger.Error{Kind: ledger.Unavailable, Code: "PAY_004", Message: "no requisites available: no active bank"}, 503,
			`{"error":"PAY_004","message":"no requisites available: no active bank","data":{}}`},
		{ledger.Error{Kind: ledger.TooMany, Code: "PAY_005", Message: "too many pending payments with the same amount"}, 429,
			`{"error":"PAY_005","message":"too many pending payments with the same amount","data":{}}`},
	} {
		lerr := tc.err
		b := &fakeBackend{refusal: &lerr}
		w := serve(t, b, "POST", "/v1/payments/"+testPaymentID+"/cancel", testKey, "", nil)
		wantAnswer(t, w, tc.status, tc.body)
		if len(b.served) != 1 || b.served[0].Code != tc.err.Code {
			t.Fatalf("served %+v", b.served)
		}
	}
}

// A create is checked field by field, handed to the backend in domain
// terms (with the base URL of payment_url), and answered with the full
// requisites; a repeated ext_id names it in data.
func TestV1CreatePayment(t *testing.T) {
	b := &fakeBackend{payment: testPayment()}
	w := serve(t, b, "POST", "/v1/payments", testKey, "",
		[]byte(`{"ext_id":"order-1","amount":1500.50,"client_id":"c-7","notify_url":"https://shop.test/hook","notification_token":"tok"}`))
	wantAnswer(t, w, 200, `{"id":"pay-1","ext_id":"order-1","amount":1500.50,"currency":"RUB","status":"PENDING","method":"CARD",`+
		`"requisites":{"type":"card","value":"2200000000000004","bank":"Sberbank","bank_code":"sber","holder":"Ivan P."},`+
		`"payment_url":"http://sandbox.test/pay/pay-1","valid_until":"2026-01-02T03:34:05Z","created_at":"2026-01-02T03:04:05Z","usdt_rate":95.5}`)
	in := b.created
	if in.ExtID != "order-1" || !in.Amount.Equal(decimal.RequireFromString("1500.5")) || in.Amount.Exponent() != -2 ||
		in.Method != "CARD" || in.Bank != "" || in.Country != "" || in.ClientID != "c-7" ||
		in.NotifyURL != "https://shop.test/hook" || in.Token != "tok" || in.BaseURL != "http://sandbox.test" {
		t.Fatalf("backend got %+v", in)
	}

	b = &fakeBackend{refusal: &ledger.Error{Kind: ledger.Conflict, Code: "PAY_003", Field: "ext_id", Message: "a payment with this ext_id already exists"}}
	w = serve(t, b, "POST", "/v1/payments", testKey, "", []byte(`{"ext_id":"order-1","amount":1500}`))
	wantAnswer(t, w, 409, `{"error":"PAY_003","message":"a payment with this ext_id already exists","data":{"ext_id":"order-1"}}`)

	b = &fakeBackend{}
	w = serve(t, b, "POST", "/v1/payments", testKey, "", []byte(`{"ext_id":"order-1","amount":1500.505}`))
	wantAnswer(t, w, 400, `{"error":"PAY_002","message":"RUB amounts have at most 2 decimal places (kopecks)","data":{"field":"amount"}}`)
	if len(b.calls) != 2 {
		t.Fatalf("a refused field reached the backend: %q", b.calls)
	}
}

// A read names the merchant and the id to the backend and answers the GET
// view: requisites without bank_code, the rate.
func TestV1GetPayment(t *testing.T) {
	b := &fakeBackend{payment: testPayment()}
	w := serve(t, b, "GET", "/v1/payments/"+testPaymentID, testKey, "", nil)
	wantAnswer(t, w, 200, `{"id":"pay-1","ext_id":"order-1","amount":1500.50,"currency":"RUB","status":"PENDING","method":"CARD",`+
		`"requisites":{"type":"card","value":"2200000000000004","bank":"Sberbank","holder":"Ivan P."},`+
		`"payment_url":"http://sandbox.test/pay/pay-1","valid_until":"2026-01-02T03:34:05Z","created_at":"2026-01-02T03:04:05Z","usdt_rate":95.5}`)
	if got := strings.Join(b.calls, "; "); got != "catch up; arrived GET GET /v1/payments/{id} /v1/payments/pay-1; payment "+testKey+" "+testPaymentID {
		t.Fatalf("backend asked: %s", got)
	}
}

// Once the store failed every request is 503 SANDBOX_STORE, the catch-all
// answers NOT_FOUND, and /readyz says unavailable.
func TestV1StoreFailedNotFoundAndReadiness(t *testing.T) {
	b := &fakeBackend{payment: testPayment(), storeErr: errors.New("disk full")}
	wantAnswer(t, serve(t, b, "GET", "/v1/payments/"+testPaymentID, testKey, "", nil), 503,
		`{"error":"SANDBOX_STORE","message":"the sandbox's database cannot be used; see its log, fix the cause and restart it","data":{}}`)
	wantAnswer(t, serve(t, b, "GET", "/readyz", "", "-", nil), 503, `{"status":"unavailable"}`)
	b.storeErr = nil
	wantAnswer(t, serve(t, b, "GET", "/readyz", "", "-", nil), 200, `{"status":"ready"}`)
	wantAnswer(t, serve(t, b, "DELETE", "/v1/payments", testKey, "", nil), 404,
		`{"error":"NOT_FOUND","message":"no such endpoint: DELETE /v1/payments","data":{}}`)
}

// A change is answered by its own section's outcome, not by the store's
// state when it ends: NotKept (rolled back) 503, MaybeKept (its sync
// failed) 500, and kept 200 even when a later section's commit failed
// meanwhile. A read that ends after the store failed shows nothing: 503.
func TestV1StoreOutcomeOfTheRequestsOwnSection(t *testing.T) {
	body := []byte(`{"ext_id":"order-1","amount":1500.50}`)
	for _, tc := range []struct {
		name    string
		refusal *ledger.Error
		status  int
		body    string
	}{
		{"not kept", &ledger.Error{Kind: ledger.NotKept, Code: "SANDBOX_STORE", Message: "x"}, 503,
			`{"error":"SANDBOX_STORE","message":"the sandbox's database cannot be used; see its log, fix the cause and restart it","data":{}}`},
		{"may be kept", &ledger.Error{Kind: ledger.MaybeKept, Code: "SANDBOX_STORE", Message: "x"}, 500,
			`{"error":"SANDBOX_STORE","message":"the sandbox's database failed while making this change durable: it may or may not be kept; restart the sandbox and read it back before asking it again","data":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{payment: testPayment(), refusal: tc.refusal, failing: errors.New("disk full")}
			wantAnswer(t, serve(t, b, "POST", "/v1/payments", testKey, "", body), tc.status, tc.body)
		})
	}
	b := &fakeBackend{payment: testPayment(), failing: errors.New("disk full")}
	if w := serve(t, b, "POST", "/v1/payments", testKey, "", body); w.Code != 200 {
		t.Fatalf("a create its section kept, the store failing meanwhile: %d %s", w.Code, w.Body)
	}
	b = &fakeBackend{payment: testPayment(), failing: errors.New("disk full")}
	wantAnswer(t, serve(t, b, "GET", "/v1/payments/"+testPaymentID, testKey, "", nil), 503,
		`{"error":"SANDBOX_STORE","message":"the sandbox's database cannot be used; see its log, fix the cause and restart it","data":{}}`)
}

// A fault the backend hands out is served before authentication: without
// a code of its own it answers the route's internal error (PAY_001 for
// create payment, SYS_001 where the spec names none), and the request log
// names its mode.
func TestV1FaultServed(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		fault        Fault
		status       int
		body, retry  string
	}{
		{"POST", "/v1/payments", Fault{Mode: FaultErrorBefore, Status: 500}, 500,
			`{"error":"PAY_001","message":"sandbox: injected fault","data":{}}`, ""},
		{"GET", "/v1/balance", Fault{Mode: FaultErrorBefore, Status: 502}, 502,
			`{"error":"SYS_001","message":"sandbox: injected fault","data":{}}`, ""},
		{"POST", "/v1/payouts", Fault{Mode: FaultRetryAfter, RetryAfterS: 7, Code: "PAY_004"}, 503,
			`{"error":"PAY_004","message":"sandbox: injected fault, retry later","data":{}}`, "7"},
	} {
		f := tc.fault
		b := &fakeBackend{fault: &f}
		w := serve(t, b, tc.method, tc.path, "", "-", nil)
		wantAnswer(t, w, tc.status, tc.body)
		if got := w.Header().Get("Retry-After"); got != tc.retry {
			t.Fatalf("%s: Retry-After %q", tc.path, got)
		}
		if len(b.served) != 1 || b.served[0].Fault != tc.fault.Mode || b.served[0].Status != tc.status {
			t.Fatalf("%s: served %+v", tc.path, b.served)
		}
	}
}

// A payout list's query is checked and handed over as a PayoutQuery: a
// bare "to" date means its last second, and a limit over the sandbox's
// cap is lowered to it.
func TestV1PayoutQuery(t *testing.T) {
	b := &fakeBackend{}
	w := serve(t, b, "GET", "/v1/payouts?status=failed&from=2026-01-01&to=2026-01-31&limit=5000&offset=3", testKey, "", nil)
	wantAnswer(t, w, 200, `{"payouts":[],"total":0,"limit":1000,"offset":3}`)
	want := PayoutQuery{Status: "failed", From: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC), Limit: 1000, Offset: 3}
	if b.payoutsIn != want {
		t.Fatalf("query %+v, want %+v", b.payoutsIn, want)
	}
	w = serve(t, b, "GET", "/v1/payouts?status=FAILED", testKey, "", nil)
	wantAnswer(t, w, 400, `{"error":"PAY_002","message":"status must be exactly pending, processing, completed, failed or cancelled (lower case)","data":{"field":"status"}}`)
}

// countingBody is a request body that counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// A delay fault's request is refused as its route refuses it, at once
// (the delay is an hour): an unreadable body with the route's own invalid
// code (TRF_001, WDR_001, PAY_002), and an unknown key before a byte of
// its body is read, with the connection closed.
func TestV1DelayFaultRefusesAsItsRoute(t *testing.T) {
	delay := Fault{Mode: FaultDelay, DelayMS: int(time.Hour / time.Millisecond)}
	for _, tc := range []struct{ path, code string }{
		{"/v1/transfers", "TRF_001"}, {"/v1/withdrawals", "WDR_001"}, {"/v1/payments", "PAY_002"},
	} {
		f := delay
		b := &fakeBackend{fault: &f}
		w := serve(t, b, "POST", tc.path, testKey, "unchecked", bytes.Repeat([]byte(" "), JSONBodyCap+1))
		wantAnswer(t, w, 400, `{"error":"`+tc.code+`","message":"request body is larger than this route's limit of `+
			itoa(JSONBodyCap)+` bytes","data":{"field":"body"}}`)
		if len(b.served) != 1 || b.served[0].Fault != FaultDelay || b.served[0].Code != tc.code {
			t.Fatalf("%s: served %+v", tc.path, b.served)
		}
	}

	for _, path := range []string{"/v1/transfers", "/v1/payments"} {
		f := delay
		b := &fakeBackend{fault: &f}
		a := New(b, Config{})
		mux := http.NewServeMux()
		a.Routes(mux)
		body := &countingBody{r: bytes.NewReader(bytes.Repeat([]byte(" "), JSONBodyCap+1))}
		r := httptest.NewRequest("POST", "http://"+testHost+path, body)
		r.Header.Set("X-Identity", "key_nobody")
		r.Header.Set("X-Signature", "unchecked")
		w := httptest.NewRecorder()
		a.Pipeline(mux).ServeHTTP(w, r)
		wantAnswer(t, w, 401, `{"error":"AUTH_001","message":"unknown API key or invalid signature","data":{}}`)
		if body.read != 0 {
			t.Fatalf("%s: %d bytes of an unknown key's body were read", path, body.read)
		}
		if got := w.Header().Get("Connection"); got != "close" {
			t.Fatalf("%s: Connection %q", path, got)
		}
		if len(b.served) != 1 || b.served[0].Fault != FaultDelay || b.served[0].Status != 401 {
			t.Fatalf("%s: served %+v", path, b.served)
		}
	}
}
