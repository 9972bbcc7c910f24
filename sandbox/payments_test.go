package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

func TestCreatePaymentCardShape(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.createPayment(`{"ext_id":"order-1","amount":1500.50}`)
	id := r.str("id")
	for k, want := range map[string]string{
		"ext_id": "order-1", "currency": "RUB", "status": "PENDING", "method": "CARD",
		"valid_until": "2025-03-01T12:20:00Z", "created_at": "2025-03-01T12:00:00Z",
		"payment_url": e.ts.URL + "/pay/" + id,
	} {
		eq(t, r.str(k), want)
	}
	// Amounts are bare numbers, the RUB amount exactly as sent.
	for _, frag := range []string{`"amount":1500.50,`, `"usdt_rate":92.50`} {
		if !strings.Contains(r.raw, frag) {
			t.Fatalf("%s not in %s", frag, r.raw)
		}
	}
	eq(t, r.str("requisites", "type"), "card")
	eq(t, r.str("requisites", "bank"), "Sberbank")
	eq(t, r.str("requisites", "bank_code"), "sber")
	if !regexp.MustCompile(`^\d{16}$`).MatchString(r.str("requisites", "value")) {
		t.Fatalf("card number %q", r.str("requisites", "value"))
	}
	if !luhn(r.str("requisites", "value")) {
		t.Fatalf("card number %q fails Luhn", r.str("requisites", "value"))
	}
	if r.str("requisites", "holder") == "" || strings.Contains(r.raw, "bank_name") || strings.Contains(r.raw, "amount_local") {
		t.Fatalf("requisites: %s", r.raw)
	}
	if r.has("message") || r.has("completed_at") {
		t.Fatalf("unexpected fields: %s", r.raw)
	}

	g := e.do("GET", "/v1/payments/"+id, "")
	wantStatus(t, g, 200, "")
	eq(t, g.str("requisites", "bank"), "Sberbank")
	if strings.Contains(g.raw, "bank_code") || !strings.Contains(g.raw, `"usdt_rate":92.50`) {
		t.Fatalf("get shape: %s", g.raw)
	}
	eq(t, g.str("requisites", "value"), r.str("requisites", "value"))
}

func luhn(s string) bool {
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func TestCreatePaymentMethods(t *testing.T) {
	e := newEnv(t, Config{BaseURL: "https://pay.example/"})
	r := e.createPayment(`{"ext_id":"s","amount":200,"method":"SBP","bank":"tinkoff"}`)
	eq(t, r.str("requisites", "type"), "sbp")
	eq(t, r.str("requisites", "bank"), "T-Bank")
	eq(t, r.str("requisites", "bank_code"), "tinkoff")
	eq(t, r.str("payment_url"), "https://pay.example/pay/"+r.str("id"))
	if !regexp.MustCompile(`^\+79\d{9}$`).MatchString(r.str("requisites", "value")) {
		t.Fatalf("phone %q", r.str("requisites", "value"))
	}
	r = e.createPayment(`{"ext_id":"m","amount":300000,"method":"SIM"}`)
	eq(t, r.str("method"), "SIM")
	eq(t, r.str("requisites", "type"), "sim")

	r = e.createPayment(`{"ext_id":"x","amount":1000,"method":"CROSS_BORDER","country":"KZ"}`)
	eq(t, r.str("requisites", "type"), "phone")
	eq(t, r.str("requisites", "bank"), "kaspi")
	eq(t, r.str("requisites", "bank_name"), "Kaspi Bank")
	eq(t, r.str("requisites", "country"), "KZ")
	eq(t, r.str("requisites", "currency"), "KZT")
	if !strings.Contains(r.raw, `"amount_local":5600.00`) || strings.Contains(r.raw, "bank_code") {
		t.Fatalf("cross-border: %s", r.raw)
	}
	if !strings.HasPrefix(r.str("requisites", "value"), "+77") {
		t.Fatalf("phone %q", r.str("requisites", "value"))
	}
	g := e.do("GET", "/v1/payments/"+r.str("id"), "")
	eq(t, g.str("requisites", "bank"), "kaspi")
	if strings.Contains(g.raw, "amount_local") {
		t.Fatalf("get carries full requisites: %s", g.raw)
	}

	// Bank alone picks the country; no bank and no country picks TJ.
	r = e.createPayment(`{"ext_id":"y","amount":999.99,"method":"CROSS_BORDER","bank":"mbank"}`)
	eq(t, r.str("requisites", "country"), "KG")
	eq(t, r.str("requisites", "currency"), "KGS")
	if !strings.Contains(r.raw, `"amount_local":959.99`) { // 999.99*0.96 = 959.9904
		t.Fatalf("amount_local: %s", r.raw)
	}
	r = e.createPayment(`{"ext_id":"z","amount":100,"method":"CROSS_BORDER"}`)
	eq(t, r.str("requisites", "country"), "TJ")
	eq(t, r.str("requisites", "bank"), "eskhata")
	r = e.createPayment(`{"ext_id":"u","amount":100,"method":"CROSS_BORDER","country":"UZ","bank":"hamkorbank"}`)
	eq(t, r.str("requisites", "currency"), "UZS")
	if !strings.Contains(r.raw, `"amount_local":14050.00`) {
		t.Fatalf("amount_local: %s", r.raw)
	}
}

func TestCreatePaymentValidation(t *testing.T) {
	e := newEnv(t, Config{})
	long := strings.Repeat("й", 256)
	for _, body := range []string{
		`{"amount":150}`,
		`{"ext_id":"","amount":150}`,
		`{"ext_id":"` + long + `","amount":150}`,
		`{"ext_id":"a"}`,
		`{"ext_id":"a","amount":99.99}`,
		`{"ext_id":"a","amount":300000.01}`,
		`{"ext_id":"a","amount":"abc"}`,
		`{"ext_id":"a","amount":true}`,
		`{"ext_id":"a","amount":1e999999}`,
		`{"ext_id":"a","amount":150,"method":"CRYPTO"}`,
		`{"ext_id":"a","amount":150,"method":"card"}`,
		`{"ext_id":"a","amount":150,"method":"Sbp"}`,
		`{"ext_id":"a","amount":150,"method":"cross_border","country":"KZ"}`,
		`{"ext_id":"a","amount":150,"method":"CROSS_BORDER","country":"kz"}`,
		`{"ext_id":"a","amount":"150"}`,
		`{"ext_id":"a","amount":" 150"}`,
		`{"ext_id":"a","amount":150,"method":"CROSS_BORDER","country":"RU"}`,
		`{"ext_id":"a","amount":150,"country":"KZ"}`,
		`{"ext_id":"a","amount":150,"notify_url":"not a url"}`,
		`{"ext_id":"a","amount":150`,
		`{"ext_id":"a","amount":150} {}`,
		``,
	} {
		r := e.do("POST", "/v1/payments", body)
		wantStatus(t, r, http.StatusBadRequest, "PAY_002")
	}
	// Boundaries are accepted.
	e.createPayment(`{"ext_id":"` + strings.Repeat("й", 255) + `","amount":100}`)
	e.createPayment(`{"ext_id":"b","amount":300000.00}`)
	e.createPayment(`{"ext_id":"c","amount":150,"method":"CARD"}`)
}

func TestCreatePaymentConflicts(t *testing.T) {
	e := newEnv(t, Config{MaxSamePendingAmount: 2})
	e.createPayment(`{"ext_id":"dup","amount":500}`)
	r := e.do("POST", "/v1/payments", `{"ext_id":"dup","amount":700}`)
	wantStatus(t, r, http.StatusConflict, "PAY_003")
	eq(t, r.str("data", "ext_id"), "dup")

	for _, body := range []string{
		`{"ext_id":"b1","amount":500,"bank":"gazprom"}`,
		`{"ext_id":"b2","amount":500,"bank":"kaspi"}`,
		`{"ext_id":"b3","amount":500,"bank":"nosuchbank"}`,
		`{"ext_id":"b4","amount":500,"method":"CROSS_BORDER","bank":"sber"}`,
		`{"ext_id":"b5","amount":500,"method":"CROSS_BORDER","country":"TJ","bank":"kaspi"}`,
	} {
		wantStatus(t, e.do("POST", "/v1/payments", body), http.StatusServiceUnavailable, "PAY_004")
	}

	// 500 and 500.00 are the same amount; the third pending one is refused.
	second := e.createPayment(`{"ext_id":"p2","amount":500.00}`)
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"p3","amount":500.0}`), http.StatusTooManyRequests, "PAY_005")
	// Leaving PENDING frees the slot.
	wantStatus(t, e.do("POST", "/v1/payments/"+second.str("id")+"/cancel", ""), 200, "")
	e.createPayment(`{"ext_id":"p3","amount":500}`)
}

func TestNoActiveTerminal(t *testing.T) {
	m := DefaultMerchant("k", "s")
	for i := range m.Terminals {
		m.Terminals[i].IsActive = false
	}
	e := newEnv(t, Config{Merchants: []Merchant{m}})
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"a","amount":500}`), http.StatusServiceUnavailable, "PAY_004")
	wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"`+DefaultMainTerminalID+`","amount":1,"address":"T"}`),
		http.StatusBadRequest, "WDR_001")
	r := e.do("GET", "/v1/withdrawals/fee", "")
	if !strings.Contains(r.raw, `"fee":0.00`) {
		t.Fatal(r.raw)
	}
}

// "The merchant's first active terminal" is one rule: the terminal a
// payment credits is the one whose fee GET /v1/withdrawals/fee answers,
// past an inactive first terminal.
func TestFirstActiveTerminal(t *testing.T) {
	zero := dec("0")
	m := Merchant{APIKey: "k", Secret: "s", Terminals: []Terminal{
		{ID: "off", Balance: zero, BalanceFrozen: zero, WithdrawalFee: dec("9.00")},
		{ID: "first", Balance: zero, BalanceFrozen: zero, WithdrawalFee: dec("2.25"), IsActive: true},
		{ID: "second", Balance: zero, BalanceFrozen: zero, WithdrawalFee: dec("3.00"), IsActive: true},
	}}
	e := newEnv(t, Config{Merchants: []Merchant{m}})
	eq(t, strings.TrimSpace(e.do("GET", "/v1/withdrawals/fee", "").raw), `{"fee":2.25,"currency":"USDT"}`)
	id := e.createPayment(`{"ext_id":"a","amount":925}`).str("id")
	wantStatus(t, e.confirm("/v1/payments/"+id), 200, "")
	must(t, e.sb.VerifyPayment(id, OutcomeCompleted))
	ts := e.sb.Terminals("k")
	wantDec(t, ts[0].Balance, "0")
	wantDec(t, ts[1].Balance, "10")
	wantDec(t, ts[2].Balance, "0")
}

func multipartBody(t *testing.T, field string, content []byte, ct string) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if field != "" {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename="receipt"`, field)}
		h["Content-Type"] = []string{ct}
		p, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		p.Write(content)
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

var png = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)

func TestPaymentLifecycleCompleted(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.createPayment(`{"ext_id":"o","amount":1500.50}`)
	id := r.str("id")

	ct, body := multipartBody(t, "attachment", png, "application/octet-stream")
	c := e.doCT("POST", "/v1/payments/"+id+"/confirm", ct, body)
	wantStatus(t, c, 200, "")
	eq(t, c.str("status"), "PROCESSING")
	if c.str("message") == "<nil>" || c.has("usdt_rate") || strings.Contains(c.raw, "bank_code") {
		t.Fatalf("confirm shape: %s", c.raw)
	}
	eq(t, c.str("payment_url"), r.str("payment_url"))

	wantStatus(t, e.doCT("POST", "/v1/payments/"+id+"/confirm", ct, body), 400, "PAY_008")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 400, "PAY_007")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute", `{}`), 400, "DIS_001")

	if err := e.sb.VerifyPayment(id, "completed"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	// 1500.50 / 92.50 = 16.2216..., half up to 16.22.
	wantDec(t, e.balance(DefaultMainTerminalID), "1016.22")
	if err := e.sb.VerifyPayment(id, "completed"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("second verify: %v", err)
	}
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute/cancel", ""), 400, "DIS_003")
}

func TestConfirmAttachments(t *testing.T) {
	e := newEnv(t, Config{})
	n := 0
	id := func() string {
		n++ // distinct amounts: PAY_005 caps same-amount PENDING payments
		return e.createPayment(fmt.Sprintf(`{"ext_id":"%s-%d","amount":%d}`, t.Name(), n, 250+n)).str("id")
	}

	ct, body := multipartBody(t, "attachment", []byte("plain text, not an image"), "text/plain")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 400, "PAY_002")
	ct, body = multipartBody(t, "attachment", make([]byte, spec.MaxAttachmentSize+1), "image/jpeg")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 400, "PAY_002")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", "multipart/form-data; boundary=x", []byte("garbage")), 400, "PAY_002")

	// Only multipart/form-data is a confirm: JSON, an empty body, a form
	// or another multipart subtype are PAY_002 and leave the payment alone.
	for _, tc := range []struct{ ct, body string }{
		{"", ""},
		{"application/json", "{}"},
		{"application/x-www-form-urlencoded", "a=b"},
		{"multipart/mixed; boundary=xyz", "--xyz--\r\n"},
		{"multipart/form-data", "--xyz--\r\n"}, // no boundary
	} {
		pid := id()
		r := e.doCT("POST", "/v1/payments/"+pid+"/confirm", tc.ct, []byte(tc.body))
		wantStatus(t, r, 400, "PAY_002")
		eq(t, e.do("GET", "/v1/payments/"+pid, "").str("status"), "PENDING")
	}
	r := e.confirm("/v1/payments/" + id())
	wantStatus(t, r, 200, "")
	eq(t, r.str("status"), "PROCESSING")

	// The limit is the spec's 10 MB, 10,000,000 bytes: exactly that is
	// accepted, one byte more (and so 10 MiB) is refused.
	jpeg := func(n int) []byte { return append([]byte("\xff\xd8\xff\xe0"), make([]byte, n-4)...) }
	ct, body = multipartBody(t, "attachment", jpeg(10_000_000), "image/jpeg")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 200, "")
	for _, n := range []int{10_000_001, 10 << 20} {
		ct, body = multipartBody(t, "attachment", jpeg(n), "image/jpeg")
		wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 400, "PAY_002")
	}
	// A body past the route's cap (receipt plus framing) is 400 PAY_002 too.
	ct, body = multipartBody(t, "attachment", jpeg(api.ConfirmBodyCap+1), "image/jpeg")
	r = e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("data", "field"), "body")
	ct, body = multipartBody(t, "", nil, "")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 200, "")
	ct, body = multipartBody(t, "other", []byte("x"), "text/plain")
	wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), 200, "")
	// The receipt's bytes decide, as in the SDK, never the part's
	// Content-Type: a PDF or one byte labelled image/png is refused, an
	// image labelled application/octet-stream (or not at all) accepted,
	// HEIC (which DetectContentType does not know) too.
	heic := append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 12)...)
	for _, c := range []struct {
		data   []byte
		label  string
		status int
	}{
		{[]byte("x"), "image/png", 400},
		{[]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), "image/png", 400},
		{png, "application/octet-stream", 200},
		{png, "", 200},
		{heic, "application/octet-stream", 200},
		{jpeg(64), "text/plain", 200},
	} {
		ct, body = multipartBody(t, "attachment", c.data, c.label)
		code := ""
		if c.status == 400 {
			code = "PAY_002"
		}
		wantStatus(t, e.doCT("POST", "/v1/payments/"+id()+"/confirm", ct, body), c.status, code)
	}
}

func TestPaymentLifecycleDisputes(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"d","amount":925}`).str("id")
	p := "/v1/payments/" + id

	wantStatus(t, e.do("POST", p+"/dispute", `{}`), 400, "DIS_001") // PENDING
	wantStatus(t, e.do("POST", p+"/dispute/cancel", ""), 400, "DIS_003")
	c := e.do("POST", p+"/cancel", "")
	wantStatus(t, c, 200, "")
	eq(t, c.str("status"), "CANCELLED")
	if c.has("usdt_rate") || c.has("message") || strings.Contains(c.raw, "bank_code") || !c.has("payment_url") {
		t.Fatalf("cancel shape: %s", c.raw)
	}
	wantStatus(t, e.do("POST", p+"/cancel", ""), 400, "PAY_007")
	wantStatus(t, e.confirm(p), 400, "PAY_008")

	wantStatus(t, e.do("POST", p+"/dispute", `{"amount":0}`), 400, "PAY_002")
	wantStatus(t, e.do("POST", p+"/dispute", `{"receipt_url":"nope"}`), 400, "PAY_002")
	wantStatus(t, e.do("POST", p+"/dispute", `{"amount":`), 400, "PAY_002")

	d := e.do("POST", p+"/dispute", `{"receipt_url":"https://r.example/1.png","comment":"paid in full"}`)
	wantStatus(t, d, 200, "")
	eq(t, d.str("status"), "dispute")
	eq(t, d.str("dispute", "receipt_url"), "https://r.example/1.png")
	eq(t, d.str("dispute", "comment"), "paid in full")
	eq(t, d.str("dispute", "created_at"), "2025-03-01T12:00:00Z")
	if !strings.Contains(d.raw, `"dispute":{"amount":null,`) {
		t.Fatalf("dispute amount not null: %s", d.raw)
	}
	for _, k := range []string{"id", "ext_id", "amount", "currency", "method", "created_at"} {
		if !d.has(k) {
			t.Fatalf("dispute response lacks %s: %s", k, d.raw)
		}
	}
	for _, k := range []string{"requisites", "payment_url", "valid_until", "usdt_rate"} {
		if d.has(k) {
			t.Fatalf("dispute response has %s: %s", k, d.raw)
		}
	}
	eq(t, e.do("GET", p, "").str("status"), "DISPUTE")
	wantStatus(t, e.do("POST", p+"/dispute", `{}`), http.StatusConflict, "DIS_002")

	dc := e.do("POST", p+"/dispute/cancel", "")
	wantStatus(t, dc, 200, "")
	if len(dc.m) != 3 || dc.str("status") != "cancelled_appeal" || dc.str("id") != id || dc.str("ext_id") != "d" {
		t.Fatalf("dispute cancel: %s", dc.raw)
	}
	eq(t, e.do("GET", p, "").str("status"), "CANCELLED_APPEAL")
	wantStatus(t, e.do("POST", p+"/dispute/cancel", ""), 400, "DIS_003")

	// Reopen from CANCELLED_APPEAL, reject, open again from CANCELLED, approve
	// with a different amount: the disputed amount is credited.
	wantStatus(t, e.do("POST", p+"/dispute", `{}`), 200, "")
	if err := e.sb.ReviewDispute(id, "rejected"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", p, "").str("status"), "CANCELLED")
	d = e.do("POST", p+"/dispute", `{"amount":462.50}`)
	if !strings.Contains(d.raw, `"amount":462.50,`) {
		t.Fatalf("dispute amount: %s", d.raw)
	}
	if err := e.sb.ReviewDispute(id, "approved"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", p, "").str("status"), "COMPLETED")
	wantDec(t, e.balance(DefaultMainTerminalID), "1005.00")
	if err := e.sb.ReviewDispute(id, "approved"); !errors.Is(err, ErrWrongState) {
		t.Fatal(err)
	}
}

func TestVerifyCancelledAndControlErrors(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"v","amount":300}`).str("id")
	if err := e.sb.VerifyPayment(id, "completed"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("verify pending: %v", err)
	}
	if err := e.sb.VerifyPayment("nope", "completed"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := e.sb.VerifyPayment(id, "maybe"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := e.sb.ReviewDispute(id, "maybe"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := e.sb.ReviewDispute("nope", "approved"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := e.sb.ReviewDispute(id, "approved"); !errors.Is(err, ErrWrongState) {
		t.Fatal(err)
	}
	e.confirm("/v1/payments/" + id)
	if err := e.sb.VerifyPayment(id, "cancelled"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "CANCELLED")
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
	// A payment cancelled by verification can be disputed.
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute", `{"amount":300}`), 200, "")
}

func TestGetPaymentNotFoundAndExtID(t *testing.T) {
	e := newEnv(t, Config{})
	for _, p := range []string{"/v1/payments/6f1c9a8e-0000-4000-8000-000000000000", "/v1/payments/by-ext-id/none"} {
		wantStatus(t, e.do("GET", p, ""), http.StatusNotFound, "PAY_006")
	}
	for _, op := range []string{"confirm", "cancel", "dispute", "dispute/cancel"} {
		wantStatus(t, e.do("POST", "/v1/payments/nope/"+op, ""), http.StatusNotFound, "PAY_006")
	}
	odd := "a/b?c#d %й"
	id := e.createPayment(`{"ext_id":"a/b?c#d %й","amount":150}`).str("id")
	r := e.do("GET", "/v1/payments/by-ext-id/"+url.PathEscape(odd), "")
	wantStatus(t, r, 200, "")
	eq(t, r.str("id"), id)
	eq(t, r.str("ext_id"), odd)
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/a%2Fb", ""), 404, "PAY_006")

	// An ext_id with an unescaped slash still arrives whole.
	e.createPayment(`{"ext_id":"x/y","amount":150}`)
	wantStatus(t, e.do("GET", "/v1/payments/by-ext-id/x/y", ""), 200, "")
}

func TestExpiry(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{PaymentTTL: 10 * time.Minute})
	id := e.createPayment(`{"ext_id":"e","amount":150,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	eq(t, e.createPayment(`{"ext_id":"e2","amount":150}`).str("valid_until"), "2025-03-01T12:10:00Z")
	e.sb.Advance(10*time.Minute - time.Second)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PENDING")
	e.sb.Advance(-time.Hour) // ignored
	e.sb.Advance(time.Second)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "CANCELLED")
	wantStatus(t, e.confirm("/v1/payments/"+id), 400, "PAY_008")
	e.flush()
	eq(t, strings.Join(sink.statuses(), ","), "CANCELLED")
	if !e.sb.Now().Equal(base.Add(10 * time.Minute)) {
		t.Fatal(e.sb.Now())
	}
}

func TestLazyExpiryOnAccess(t *testing.T) {
	clk := &clock{t: base}
	e := newEnv(t, Config{Now: clk.Now})
	id := e.createPayment(`{"ext_id":"l","amount":150}`).str("id")
	e.createPayment(`{"ext_id":"l2","amount":150}`)
	e.confirm("/v1/payments/" + id) // PROCESSING never expires
	clk.Set(base.Add(DefaultPaymentTTL))
	r := e.do("GET", "/v1/payments/by-ext-id/l2", "")
	eq(t, r.str("status"), "CANCELLED")
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")
	// Expired payments no longer count towards PAY_005.
	for i := range 5 {
		e.createPayment(fmt.Sprintf(`{"ext_id":"n%d","amount":150}`, i))
	}
}

// A whitespace-only ext_id is no order id: refused for payments as for
// payouts, with nothing created.
func TestBlankExtIDRefused(t *testing.T) {
	e := newEnv(t, Config{})
	for _, ext := range []string{"", " ", "\t \n", "\u00a0"} {
		body, _ := json.Marshal(map[string]any{"ext_id": ext, "amount": 1500})
		r := e.do("POST", "/v1/payments", string(body))
		wantStatus(t, r, 400, "PAY_002")
		eq(t, r.str("data", "field"), "ext_id")
		body, _ = json.Marshal(map[string]any{"ext_id": ext, "amount": 500, "method": "card",
			"requisites": "4111111111111111", "holder_name": "IVAN"})
		r = e.do("POST", "/v1/payouts", string(body))
		wantStatus(t, r, 400, "PAY_002")
		eq(t, r.str("data", "field"), "ext_id")
	}
	eq(t, e.sb.Stats(DefaultAPIKey), Stats{})
}

// Money is at its currency's scale: a RUB amount (payment, payout,
// dispute) has at most two decimals (PAY_002), a USDT amount (transfer,
// withdrawal) at most six (TRF_001, WDR_001). Trailing zeros do not count:
// 1500.500 is 1500.50.
func TestMoneyAtItsCurrencysScale(t *testing.T) {
	e := newEnv(t, Config{})
	payout := func(amount string) string {
		return `{"ext_id":"po-` + amount + `","amount":` + amount + `,"method":"card","requisites":"4111111111111111","holder_name":"IVAN"}`
	}
	for _, c := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/v1/payments", `{"ext_id":"p-1","amount":1500.505}`, 400, "PAY_002"},
		{"/v1/payments", `{"ext_id":"p-2","amount":1500.001}`, 400, "PAY_002"},
		{"/v1/payments", `{"ext_id":"p-3","amount":1500.500}`, 200, ""},
		{"/v1/payments", `{"ext_id":"p-4","amount":1500.5}`, 200, ""},
		{"/v1/payouts", payout("500.125"), 400, "PAY_002"},
		{"/v1/payouts", payout("500.120"), 200, ""},
		{"/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1.0000001}`, 400, "TRF_001"},
		{"/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1.000001}`, 200, ""},
		{"/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10.1234567,"address":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"}`, 400, "WDR_001"},
		{"/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10.123456,"address":"TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"}`, 200, ""},
	} {
		r := e.do("POST", c.path, c.body)
		wantStatus(t, r, c.status, c.code)
		if c.status == 400 {
			eq(t, r.str("data", "field"), "amount")
		}
	}
	id := e.createPayment(`{"ext_id":"d-1","amount":1500}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	r := e.do("POST", "/v1/payments/"+id+"/dispute", `{"amount":1000.001}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("message"), "RUB amounts have at most 2 decimal places (kopecks)")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute", `{"amount":1000.010}`), 200, "")
	eq(t, e.sb.Stats(DefaultAPIKey), Stats{Payments: 3, Payouts: 1, Withdrawals: 1, Transfers: 1})
}

func BenchmarkCreateThenGet(b *testing.B) {
	sb := New(Config{MaxSamePendingAmount: 1 << 30})
	defer sb.Close()
	signer := paykit.HMACSigner(DefaultSecret)
	sign := func(r *http.Request, body []byte) {
		sig, _ := signer.Sign(r, body)
		r.Header.Set("X-Identity", DefaultAPIKey)
		r.Header.Set("X-Signature", sig)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := []byte(fmt.Sprintf(`{"ext_id":"bench-%d","amount":1500.50}`, i))
		req := httptest.NewRequest("POST", "/v1/payments", bytes.NewReader(body))
		sign(req, body)
		w := httptest.NewRecorder()
		sb.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("create: %d %s", w.Code, w.Body)
		}
		req = httptest.NewRequest("GET", "/v1/payments/by-ext-id/bench-"+fmt.Sprint(i), nil)
		sign(req, nil)
		w = httptest.NewRecorder()
		sb.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("get: %d %s", w.Code, w.Body)
		}
	}
}

// With the real clock a PENDING payment nobody touches is cancelled at its
// valid_until (not before), and its webhook goes out: no request or
// control needed.
func TestExpiryOnTimeWithTheRealClock(t *testing.T) {
	type arrival struct {
		body map[string]any
		at   time.Time
	}
	got := make(chan arrival, 1)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		got <- arrival{m, time.Now()}
	}))
	t.Cleanup(sink.Close)
	// created_at is whole seconds, so valid_until is 1 to 2 s away.
	sb := New(Config{PaymentTTL: 2 * time.Second, WebhookRetryWait: time.Millisecond})
	ts := httptest.NewServer(sb)
	t.Cleanup(func() { ts.Close(); sb.Close() })
	e := &env{t: t, sb: sb, ts: ts, key: DefaultAPIKey, sec: DefaultSecret}
	p := e.createPayment(`{"ext_id":"unpaid","amount":1500,"notify_url":"` + sink.URL + `"}`)
	validUntil, err := time.Parse(time.RFC3339, p.str("valid_until"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		eq(t, a.body["id"], any(p.str("id")))
		eq(t, a.body["status"], any("CANCELLED"))
		if a.at.Before(validUntil) {
			t.Fatalf("expired at %s, before valid_until %s", a.at, validUntil)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no CANCELLED webhook at valid_until")
	}
	eq(t, sb.State().Merchants[0].Payments["CANCELLED"], 1)
	// The dashboard shows it expired.
	_, _, dash := e.uiGet("/sandbox/ui?refresh=0")
	if !strings.Contains(dash, `id="pay-`+p.str("id")+`" data-status="CANCELLED"`) {
		t.Fatalf("the dashboard does not show the payment CANCELLED:\n%s", dash)
	}
}

// The API, the Go controls and the HTTP controls refuse a move through the
// one rule of the ledger: the same refusal (its message word for word),
// each in its own form (the spec's code and 400 or 409, ErrWrongState,
// 409 SANDBOX_CONFLICT), and none of them changes the payment.
func TestPaymentRefusalsAreTheLedgers(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"same-rule","amount":1500}`).str("id")
	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/cancel", ""), 200, "")
	refusal := func(ev ledger.PaymentEvent) string {
		return ledger.CheckPayment(id, statusCancelled, ev).Message
	}

	r := e.do("POST", "/v1/payments/"+id+"/cancel", "")
	wantStatus(t, r, 400, "PAY_007")
	eq(t, r.str("message"), refusal(ledger.Cancel))
	r = e.do("POST", "/v1/payments/"+id+"/dispute/cancel", "")
	wantStatus(t, r, 400, "DIS_003")
	eq(t, r.str("message"), refusal(ledger.CancelDispute))

	err := e.sb.VerifyPayment(id, OutcomeCompleted)
	if !errors.Is(err, ErrWrongState) || !strings.HasSuffix(err.Error(), ": "+refusal(ledger.VerifyCompleted)) {
		t.Fatalf("VerifyPayment: %v", err)
	}
	r = e.control("/sandbox/payments/"+id+"/verify", `{"outcome":"completed"}`)
	wantStatus(t, r, 409, CodeControlConflict)
	eq(t, r.str("message"), err.Error())

	wantStatus(t, e.do("POST", "/v1/payments/"+id+"/dispute", `{}`), 200, "")
	r = e.do("POST", "/v1/payments/"+id+"/dispute", `{}`)
	wantStatus(t, r, 409, "DIS_002")
	eq(t, r.str("message"), ledger.CheckPayment(id, statusDispute, ledger.OpenDispute).Message)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), statusDispute)
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
}
