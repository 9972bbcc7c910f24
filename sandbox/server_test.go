package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"ext_id":"a","amount":150}`

	// No headers at all.
	anon := e.as("", "")
	wantStatus(t, anon.do("POST", "/v1/payments", body), 401, "AUTH_001")
	// Unknown key, wrong secret.
	wantStatus(t, e.as("other", DefaultSecret).do("GET", "/v1/banks", ""), 401, "AUTH_001")
	r := e.as(DefaultAPIKey, "wrong-secret").do("GET", "/v1/banks", "")
	wantStatus(t, r, 401, "AUTH_001")
	eq(t, r.str("data"), "{}")
	if strings.Contains(r.raw, DefaultSecret) || strings.Contains(r.raw, "wrong-secret") {
		t.Fatalf("secret echoed: %s", r.raw)
	}
	// A signature over another body or another path does not verify.
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", strings.NewReader(body))
	other, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", nil)
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(other, []byte(`{"ext_id":"b","amount":150}`))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	req, _ = http.NewRequest("GET", e.ts.URL+"/v1/payouts?limit=1", nil)
	other, _ = http.NewRequest("GET", e.ts.URL+"/v1/payouts?limit=2", nil)
	sig, _ = paykit.HMACSigner(DefaultSecret).Sign(other, nil)
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	wantStatus(t, e.send(req), 401, "AUTH_001")
	eq(t, e.sb.Stats(DefaultAPIKey).Payments, 0)

	// Unknown endpoints are 404 once authenticated.
	wantStatus(t, e.do("GET", "/v1/nothing", ""), 404, "NOT_FOUND")
	wantStatus(t, e.do("DELETE", "/v1/payments", ""), 404, "NOT_FOUND")
	// Bodies over the route's cap are refused with 400 PAY_002, not 413.
	wantStatus(t, e.do("POST", "/v1/payments", strings.Repeat(" ", jsonBodyCap+1)), http.StatusBadRequest, "PAY_002")
}

func TestCustomSigner(t *testing.T) {
	signer := paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
		return r.Method + " " + r.URL.RequestURI() + " " + fmt.Sprint(len(body)), nil
	})
	e := newEnv(t, Config{Merchants: []Merchant{{APIKey: "k", Signer: signer}}})
	req, _ := http.NewRequest("GET", e.ts.URL+"/v1/payments/by-ext-id/a%2Fb?x=1", nil)
	req.Header.Set("X-Identity", "k")
	req.Header.Set("X-Signature", "GET /v1/payments/by-ext-id/a%2Fb?x=1 0")
	wantStatus(t, e.send(req), 404, "PAY_006")
	eq(t, len(e.sb.Terminals("k")), 0)
	eq(t, e.sb.Terminals("nobody") == nil, true)
}

func TestMerchantScoping(t *testing.T) {
	a := DefaultMerchant("key-a", "secret-a")
	b := Merchant{APIKey: "key-b", Secret: "secret-b", Terminals: []Terminal{
		{ID: "b-1", Balance: dec("10"), IsActive: true}, {ID: "b-2", IsActive: true}}}
	e := newEnv(t, Config{Merchants: []Merchant{a, b}})
	eb := e.as("key-b", "secret-b")

	pay := e.createPayment(`{"ext_id":"same","amount":150}`).str("id")
	// B may reuse A's ext_id and cannot see A's payment.
	eb.createPayment(`{"ext_id":"same","amount":150}`)
	wantStatus(t, eb.do("GET", "/v1/payments/"+pay, ""), 404, "PAY_006")
	wantStatus(t, eb.do("POST", "/v1/payments/"+pay+"/cancel", ""), 404, "PAY_006")
	eq(t, e.do("GET", "/v1/payments/"+pay, "").str("status"), "PENDING")

	po := e.do("POST", "/v1/payouts", `{"ext_id":"x","amount":1,"method":"card","requisites":"1","holder_name":"A"}`).str("id")
	wantStatus(t, eb.do("GET", "/v1/payouts/"+po, ""), 404, "PAY_001")
	wantStatus(t, eb.do("GET", "/v1/payouts/by-ext-id/x", ""), 404, "PAY_001")
	eq(t, eb.do("GET", "/v1/payouts", "").str("total"), "0")

	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"T"}`).str("id")
	wantStatus(t, eb.do("GET", "/v1/withdrawals/"+w, ""), 404, "WDR_003")
	wantStatus(t, eb.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":1,"address":"T"}`), 400, "WDR_001")

	// Terminals of another merchant do not exist for a transfer.
	wantStatus(t, eb.do("POST", "/v1/transfers", `{"from_terminal_id":"b-1","to_terminal_id":"term_sandbox_main","amount":1}`), 404, "TRF_002")
	wantStatus(t, e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"b-1","amount":1}`), 404, "TRF_002")
	eq(t, strings.Count(eb.do("GET", "/v1/terminals", "").raw, `"id"`), 2)
	eq(t, strings.TrimSpace(eb.do("GET", "/v1/balance", "").raw), `{"balance":10.00,"balance_frozen":0.00,"currency":"USDT"}`)
	eq(t, e.sb.Stats("key-a"), Stats{Payments: 1, Payouts: 1, Withdrawals: 1})
	eq(t, e.sb.Stats("nobody"), Stats{})
}

func TestNewPanicsOnBadMerchants(t *testing.T) {
	for _, ms := range [][]Merchant{
		{{APIKey: ""}},
		{{APIKey: "a"}, {APIKey: "a"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("no panic for %v", ms)
				}
			}()
			New(Config{Merchants: ms})
		}()
	}
}

func TestWebhooksOrderRetriesAndToken(t *testing.T) {
	sink := newHookSink(t, 1) // the first attempt fails
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"w","amount":150,"notify_url":"` + sink.srv.URL + `","notification_token":"tok-1"}`).str("id")
	e.confirm("/v1/payments/" + id)
	if err := e.sb.VerifyPayment(id, "cancelled"); err != nil {
		t.Fatal(err)
	}
	e.do("POST", "/v1/payments/"+id+"/dispute", `{}`)
	e.do("POST", "/v1/payments/"+id+"/dispute/cancel", "")
	e.do("POST", "/v1/payments/"+id+"/dispute", `{}`)
	e.sb.ReviewDispute(id, "approved")
	e.flush()

	eq(t, strings.Join(sink.statuses(), ","), "PROCESSING,CANCELLED,DISPUTE,CANCELLED_APPEAL,DISPUTE,COMPLETED")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	eq(t, sink.attempts, 7)
	for _, tok := range sink.tokens {
		eq(t, tok, "tok-1")
	}
	// The payload is the GET shape.
	p := sink.bodies[0]
	if p["id"] != id || p["usdt_rate"] == nil || p["requisites"] == nil || p["message"] != nil {
		t.Fatalf("payload: %v", p)
	}
	eq(t, fmt.Sprint(p["amount"]), "150")
}

func TestWebhooksPayoutGiveUpAndClose(t *testing.T) {
	sink := newHookSink(t, 1000) // always fails
	e := newEnv(t, Config{WebhookMaxAttempts: 3})
	id := e.do("POST", "/v1/payouts", `{"ext_id":"x","amount":1,"method":"card","requisites":"1","holder_name":"A","notify_url":"`+sink.srv.URL+`"}`).str("id")
	if err := e.sb.SetPayoutStatus(id, "processing"); err != nil {
		t.Fatal(err)
	}
	e.flush()
	sink.mu.Lock()
	eq(t, sink.attempts, 3)
	sink.mu.Unlock()

	ok := newHookSink(t, 0)
	id2 := e.do("POST", "/v1/payouts", `{"ext_id":"y","amount":1,"method":"card","requisites":"1","holder_name":"A","notify_url":"`+ok.srv.URL+`"}`).str("id")
	e.sb.SetPayoutStatus(id2, "completed")
	e.flush()
	ok.mu.Lock()
	eq(t, ok.tokens[0], "")
	eq(t, ok.bodies[0]["status"].(string), "completed")
	if ok.bodies[0]["completed_at"] == nil || ok.bodies[0]["provider_order_id"] == nil {
		t.Fatalf("payout payload: %v", ok.bodies[0])
	}
	ok.mu.Unlock()

	// A receiver that is down, a slow backoff, and Close: Close returns
	// promptly and flushing completes.
	slow := New(Config{WebhookRetryWait: time.Hour, Now: func() time.Time { return base }})
	srv := httptest.NewServer(slow)
	defer srv.Close()
	es := &env{t: t, sb: slow, ts: srv, key: DefaultAPIKey, sec: DefaultSecret}
	pid := es.createPayment(`{"ext_id":"s","amount":150,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	es.do("POST", "/v1/payments/"+pid+"/cancel", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := slow.FlushWebhooks(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("flush with a cancelled context: %v", err)
	}
	slow.Close()
	slow.Close()
	es.flush()
	if _, onFile := slow.st.(*sqlStore); onFile {
		// A closed Server's file is released: nothing it changed could be
		// kept, so it answers 503 rather than acknowledge.
		wantStatus(t, es.do("POST", "/v1/payments", `{"ext_id":"t","amount":150}`), 503, "SANDBOX_STORE")
		return
	}
	es.do("POST", "/v1/payments/"+es.createPayment(`{"ext_id":"t","amount":150,"notify_url":"`+sink.srv.URL+`"}`).str("id")+"/cancel", "")
	es.flush() // nothing is queued after Close
}

func TestWebhookUnreachable(t *testing.T) {
	e := newEnv(t, Config{WebhookMaxAttempts: 2})
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	id := e.createPayment(`{"ext_id":"u","amount":150,"notify_url":"` + url + `"}`).str("id")
	e.do("POST", "/v1/payments/"+id+"/cancel", "")
	e.flush()
}

func TestPaymentPage(t *testing.T) {
	e := newEnv(t, Config{})
	r := e.createPayment(`{"ext_id":"<script>","amount":1500.50,"method":"SBP"}`)
	id := r.str("id")
	res, err := e.ts.Client().Get(r.str("payment_url"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	eq(t, res.StatusCode, 200)
	for _, frag := range []string{"1,500.50 RUB", "SBP (Faster Payments)", r.str("requisites", "value"), "Sberbank", `<form method="post" action="/pay/` + id + `">`,
		"Moscow time</strong> <span id=\"time-left\">(in 20 minutes)</span>", "&lt;script&gt;", "PENDING"} {
		if !strings.Contains(html.UnescapeString(string(page)), frag) && !strings.Contains(string(page), frag) {
			t.Fatalf("%q not in page:\n%s", frag, page)
		}
	}
	if strings.Contains(string(page), "<script>") {
		t.Fatal("ext_id not escaped")
	}

	// POST is the I-paid button: confirm, then 303 back to the page.
	res = e.pressPaid(id)
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	eq(t, res.StatusCode, 200) // after following the redirect
	eq(t, res.Request.URL.Path, "/pay/"+id)
	if !strings.Contains(string(page), "PROCESSING") || strings.Contains(string(page), "<form") {
		t.Fatalf("page after confirm:\n%s", page)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")
	// Posting again without the page's token is refused; nothing changes.
	res, _ = e.ts.Client().Post(e.ts.URL+"/pay/"+id, "", nil)
	res.Body.Close()
	eq(t, res.StatusCode, 403)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")

	cb := e.createPayment(`{"ext_id":"cb","amount":1000,"method":"CROSS_BORDER","country":"TJ"}`)
	res, _ = e.ts.Client().Get(cb.str("payment_url"))
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "120.00") || !strings.Contains(string(page), "TJS") {
		t.Fatalf("cross-border page:\n%s", page)
	}

	res, _ = e.ts.Client().Get(e.ts.URL + "/pay/nope")
	res.Body.Close()
	eq(t, res.StatusCode, 404)
	// A post for an unknown payment has no valid token either: refused
	// before anything is looked up.
	res, _ = e.ts.Client().PostForm(e.ts.URL+"/pay/nope", url.Values{"token": {pageToken("nope")}})
	res.Body.Close()
	eq(t, res.StatusCode, 404)
}

func TestFaults(t *testing.T) {
	e := newEnv(t, Config{})
	transfer := `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":1}`

	// error_before: default 500 SYS_001, nothing processed; applies Count times.
	must(t, e.sb.InjectFault(Fault{Method: "post", Path: "/v1/transfers", Mode: FaultErrorBefore, Count: 2}))
	for range 2 {
		wantStatus(t, e.do("POST", "/v1/transfers", transfer), 500, "SYS_001")
	}
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
	wantStatus(t, e.do("POST", "/v1/transfers", transfer), 200, "")
	eq(t, e.sb.RequestCount("POST", "/v1/transfers"), 3)

	// error_before with a code and wildcard path; another method does not match.
	must(t, e.sb.InjectFault(Fault{Method: "POST", Path: "/v1/payments/{id}/confirm", Mode: FaultErrorBefore, Code: "PAY_001"}))
	id := e.createPayment(`{"ext_id":"f","amount":150}`).str("id")
	wantStatus(t, e.do("GET", "/v1/payments/"+id, ""), 200, "")
	wantStatus(t, e.confirm("/v1/payments/"+id), 500, "PAY_001")
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PENDING")
	eq(t, e.sb.RequestCount("", "/v1/payments/{id}"), 2)

	must(t, e.sb.InjectFault(Fault{Path: "/v1/balance", Mode: FaultErrorBefore, Status: 502, Code: "GATEWAY"}))
	wantStatus(t, e.do("GET", "/v1/balance", ""), 502, "GATEWAY")

	// retry_after: 503 with Retry-After, not processed.
	must(t, e.sb.InjectFault(Fault{Method: "POST", Path: "/v1/payouts", Mode: FaultRetryAfter, RetryAfterS: 7}))
	r := e.do("POST", "/v1/payouts", `{"ext_id":"ra","amount":1,"method":"card","requisites":"1","holder_name":"A"}`)
	wantStatus(t, r, 503, "SYS_001")
	eq(t, r.header.Get("Retry-After"), "7")
	eq(t, e.sb.Stats(e.key).Payouts, 0)

	// delay: processed after the stall.
	must(t, e.sb.InjectFault(Fault{Path: "/v1/banks", Mode: FaultDelay, DelayMS: 5}))
	wantStatus(t, e.do("GET", "/v1/banks", ""), 200, "")

	// drop_after: processed, connection closed without an answer.
	must(t, e.sb.InjectFault(Fault{Method: "POST", Path: "/v1/transfers", Mode: FaultDropAfter}))
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/transfers", strings.NewReader(transfer))
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, []byte(transfer))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	if res, err := e.ts.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("drop_after answered %d", res.StatusCode)
	}
	wantDec(t, e.balance(DefaultMainTerminalID), "998")
	wantDec(t, e.balance(DefaultReserveTerminalID), "2")

	// Invalid faults.
	for _, f := range []Fault{
		{Path: "/v1/x", Mode: "explode"},
		{Path: "v1/x", Mode: FaultDelay},
		{Path: "/v1/x", Mode: FaultDelay, Count: -1},
		{Path: "/v1/x", Mode: FaultErrorBefore, Status: 99},
	} {
		if err := e.sb.InjectFault(f); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%+v: %v", f, err)
		}
	}
	// Reset clears faults.
	must(t, e.sb.InjectFault(Fault{Path: "/v1/banks", Mode: FaultErrorBefore}))
	e.sb.Reset()
	wantStatus(t, e.do("GET", "/v1/banks", ""), 200, "")
}

func TestFaultDelayAbandoned(t *testing.T) {
	e := newEnv(t, Config{})
	must(t, e.sb.InjectFault(Fault{Path: "/v1/banks", Mode: FaultDelay, DelayMS: 60_000}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/v1/banks", nil)
	done := make(chan error, 1)
	go func() {
		res, err := e.ts.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("expected the cancelled request to fail")
	}
}

// Without a hijackable connection drop_after aborts the handler.
func TestFaultDropAfterRecorder(t *testing.T) {
	sb := New(Config{})
	defer sb.Close()
	must(t, sb.InjectFault(Fault{Path: "/v1/banks", Mode: FaultDropAfter}))
	defer func() {
		if recover() != http.ErrAbortHandler {
			t.Fatal("expected http.ErrAbortHandler")
		}
	}()
	sb.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/banks", nil))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestHTTPControls(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"c","amount":925}`).str("id")
	wantStatus(t, e.control("/sandbox/payments/"+id+"/verify", `{"outcome":"completed"}`), 409, CodeControlConflict)
	wantStatus(t, e.control("/sandbox/payments/nope/verify", `{"outcome":"completed"}`), 404, CodeControlNotFound)
	wantStatus(t, e.control("/sandbox/payments/"+id+"/verify", `{"outcome":"x"}`), 400, CodeControlInvalid)
	wantStatus(t, e.control("/sandbox/payments/"+id+"/verify", `{`), 400, CodeControlInvalid)
	e.confirm("/v1/payments/" + id)
	r := e.control("/sandbox/payments/"+id+"/verify", `{"outcome":"completed"}`)
	wantStatus(t, r, 200, "")
	eq(t, r.str("status"), "COMPLETED")
	wantDec(t, e.balance(DefaultMainTerminalID), "1010")

	id2 := e.createPayment(`{"ext_id":"c2","amount":925}`).str("id")
	e.do("POST", "/v1/payments/"+id2+"/cancel", "")
	wantStatus(t, e.control("/sandbox/payments/"+id2+"/dispute/review", `{"outcome":"approved"}`), 409, CodeControlConflict)
	e.do("POST", "/v1/payments/"+id2+"/dispute", `{}`)
	eq(t, e.control("/sandbox/payments/"+id2+"/dispute/review", `{"outcome":"rejected"}`).str("status"), "CANCELLED")

	po := e.do("POST", "/v1/payouts", `{"ext_id":"x","amount":1,"method":"card","requisites":"1","holder_name":"A"}`).str("id")
	r = e.control("/sandbox/payouts/"+po+"/status", `{"status":"processing"}`)
	eq(t, r.str("status"), "processing")
	wantStatus(t, e.control("/sandbox/payouts/"+po+"/status", `{"status":"processing"}`), 409, CodeControlConflict)
	wantStatus(t, e.control("/sandbox/payouts/nope/status", `{"status":"failed"}`), 404, CodeControlNotFound)

	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":5,"address":"T"}`).str("id")
	r = e.control("/sandbox/withdrawals/"+w+"/status", `{"status":"completed","tx_hash":"0xabc"}`)
	eq(t, r.str("tx_hash"), "0xabc")
	wantStatus(t, e.control("/sandbox/withdrawals/"+w+"/status", `{"status":"failed"}`), 409, CodeControlConflict)

	r = e.control("/sandbox/clock/advance", `{"seconds":3600}`)
	eq(t, r.str("now"), "2025-03-01T13:00:00Z")
	wantStatus(t, e.control("/sandbox/clock/advance", `{"seconds":-1}`), 400, CodeControlInvalid)

	wantStatus(t, e.control("/sandbox/faults", `{"method":"GET","path":"/v1/banks","mode":"error_before","status":418,"code":"TEAPOT"}`), 200, "")
	wantStatus(t, e.do("GET", "/v1/banks", ""), 418, "TEAPOT")
	wantStatus(t, e.control("/sandbox/faults", `{"path":"/v1/banks","mode":"nope"}`), 400, CodeControlInvalid)
	wantStatus(t, e.control("/sandbox/nope", `{}`), 404, CodeControlNotFound)

	r = e.control("/sandbox/reset", `{}`)
	wantStatus(t, r, 200, "")
	eq(t, strings.TrimSpace(r.raw), "{}")
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
	wantStatus(t, e.do("GET", "/v1/payments/"+id, ""), 404, "PAY_006")
	eq(t, e.sb.Now(), base)
}

// Many goroutines create payments, complete some and shuffle USDT between
// the two terminals; at the end every credit is accounted for exactly.
func TestConcurrency(t *testing.T) {
	e := newEnv(t, Config{MaxSamePendingAmount: 1 << 20})
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	completed := decimal.Zero
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				id := e.createPayment(fmt.Sprintf(`{"ext_id":"w%d-%d","amount":%d.37}`, w, i, 100+i)).str("id")
				if i%3 == 0 {
					e.confirm("/v1/payments/" + id)
					if err := e.sb.VerifyPayment(id, "completed"); err != nil {
						errs <- err
						continue
					}
					mu.Lock()
					completed = completed.Add(dec(fmt.Sprintf("%d.37", 100+i)).DivRound(DefaultUSDTRate, 2))
					mu.Unlock()
				}
				from, to := DefaultMainTerminalID, DefaultReserveTerminalID
				if (w+i)%2 == 1 {
					from, to = to, from
				}
				r := e.do("POST", "/v1/transfers", fmt.Sprintf(`{"from_terminal_id":%q,"to_terminal_id":%q,"amount":3.33}`, from, to))
				if r.status != 200 && r.str("error") != "TRF_003" {
					errs <- fmt.Errorf("transfer: %s", r.raw)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := decimal.Zero
	for _, term := range e.sb.Terminals(e.key) {
		if term.Balance.IsNegative() {
			t.Fatalf("negative balance: %v", term)
		}
		total = total.Add(term.Balance)
	}
	wantDec(t, total, dec("1000").Add(completed).String())
	eq(t, e.sb.Stats(e.key).Payments, workers*rounds)
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
