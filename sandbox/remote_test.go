package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Remote drives a running sandbox over HTTP as the Go controls drive it in
// process: every control, the inspection views, and the control token of
// remote mode.
func TestRemoteControlsARunningSandbox(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-77-9f3c2a7b1e8d4c6f0a5b9e2d"})
	ctx := context.Background()

	anon, err := NewRemote(e.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	var ce *ControlError
	if err := anon.Reset(ctx); !errors.As(err, &ce) || ce.StatusCode != 401 || ce.Code != CodeControlUnauthorized {
		t.Fatalf("without the token: %v", err)
	}
	r, err := NewRemote(e.ts.URL+"/", WithControlToken("ctl-77-9f3c2a7b1e8d4c6f0a5b9e2d"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprintf("%v %+v", r, r), "ctl-77-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatal("the token shows in fmt")
	}

	p := e.createPayment(`{"ext_id":"r-1","amount":1500,"notify_url":"` + sink.srv.URL + `"}`)
	id := p.str("id")
	e.confirm("/v1/payments/" + id)
	if err := r.VerifyPayment(ctx, id, OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "COMPLETED")
	if err := r.VerifyPayment(ctx, id, OutcomeCompleted); !errors.Is(err, ErrWrongState) {
		t.Fatalf("verify twice: %v", err)
	}
	if err := r.VerifyPayment(ctx, "no-such-id", OutcomeCompleted); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := r.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, strings.Join(sink.statuses(), ","), "PROCESSING,COMPLETED")

	c := e.createPayment(`{"ext_id":"r-2","amount":1600}`)
	e.do("POST", "/v1/payments/"+c.str("id")+"/cancel", "")
	e.do("POST", "/v1/payments/"+c.str("id")+"/dispute", `{"comment":"paid"}`)
	if err := r.ReviewDispute(ctx, c.str("id"), OutcomeRejected); err != nil {
		t.Fatal(err)
	}
	po := e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A"}`)
	if err := r.SetPayoutStatus(ctx, po.str("id"), "processing"); err != nil {
		t.Fatal(err)
	}
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	if err := r.SetWithdrawalStatus(ctx, w.str("id"), "completed", "0xabc"); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/withdrawals/"+w.str("id"), "").str("tx_hash"), "0xabc")
	if err := r.SetWithdrawalStatus(ctx, w.str("id"), "bogus", ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad status: %v", err)
	}
	now, err := r.Advance(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, now, base.Add(time.Hour))
	if err := r.InjectFault(ctx, Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore, Status: 500}); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("GET", "/v1/balance", ""), 500, "SYS_001")

	st, err := r.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, st.Merchants[0].Payments["COMPLETED"], 1)
	eq(t, st.Merchants[0].Payouts["processing"], 1)
	wantDec(t, st.Merchants[0].Terminals[0].BalanceFrozen, "0")
	reqs, err := r.Requests(ctx)
	if err != nil || len(reqs) < 2 || reqs[1].Route != "/v1/balance" || reqs[1].Status != 500 || reqs[1].Code != "SYS_001" {
		t.Fatalf("requests: %v %+v", err, reqs)
	}
	ds, err := r.Deliveries(ctx)
	if err != nil || len(ds) != 2 || ds[0].State != DeliveryDelivered {
		t.Fatalf("deliveries: %v %+v", err, ds)
	}
	again, err := r.ResendWebhook(ctx, ds[0].ID)
	if err != nil || again.ResendOf != ds[0].ID {
		t.Fatalf("resend: %v %+v", err, again)
	}
	if _, err := r.ResendWebhook(ctx, "dlv_nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resend of an unknown delivery: %v", err)
	}
	if err := r.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	eq(t, e.do("GET", "/v1/payments/"+id, "").status, http.StatusNotFound)

	if _, err := NewRemote("ftp://x"); err == nil {
		t.Fatal("ftp base URL accepted")
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	rd, _ := NewRemote(down.URL)
	if err := rd.Reset(ctx); err == nil {
		t.Fatal("no error from a sandbox that is not there")
	}
}

// wireCall is one request a Remote sent, as the server read it.
type wireCall struct {
	method, path, contentType, auth, body string
}

// What each Remote method puts on the wire: method, escaped path, the JSON
// content type on POSTs only, the bearer token, and the exact body; and
// what it makes of each answer.
func TestRemoteWire(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []wireCall
	)
	answers := map[string]string{
		"/sandbox/clock/advance":               `{"now":"2026-11-24T13:00:00Z"}`,
		"/sandbox/webhooks/dlv_1/resend":       `{"id":"dlv_2","resource":"payment","resource_id":"p-1","ext_id":"o-1","resource_status":"COMPLETED","url":"https://shop.example/h","state":"pending","attempts":[],"created_at":"2026-11-24T13:00:00Z","resend_of":"dlv_1"}`,
		"/sandbox/state":                       `{"now":"2026-11-24T13:00:00Z","merchants":[{"index":0,"terminals":[{"id":"term_a","name":"A","balance":1016.22,"balance_frozen":101.50,"withdrawal_fee":1.50,"currency":"USDT","is_active":true}],"payments":{"COMPLETED":2},"payouts":{},"withdrawals":{"pending":1},"transfers":3}]}`,
		"/sandbox/requests":                    `{"requests":[{"at":"2026-11-24T13:00:00Z","method":"POST","route":"/v1/payments","path":"/v1/payments","status":409,"code":"PAY_003","duration_ns":48400}]}`,
		"/sandbox/webhooks":                    `{"deliveries":[{"id":"dlv_1","resource":"payout","resource_id":"po-1","ext_id":"x","resource_status":"completed","url":"https://shop.example/h","state":"failed","attempts":[{"at":"2026-11-24T13:00:00Z","status_code":503,"duration_ns":1000}],"created_at":"2026-11-24T13:00:00Z"}]}`,
		"/sandbox/payments/a%2Fb/verify":       `{}`,
		"/sandbox/payments/p-1/verify":         `{}`,
		"/sandbox/payments/p-1/dispute/review": `{}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, wireCall{r.Method, r.URL.EscapedPath(), r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(body)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if a, ok := answers[r.URL.EscapedPath()]; ok {
			io.WriteString(w, a)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	r, err := NewRemote(srv.URL, WithControlToken("ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.VerifyPayment(ctx, "p-1", OutcomeCompleted))
	must(r.VerifyPayment(ctx, "a/b", OutcomeCancelled))
	must(r.ReviewDispute(ctx, "p-1", OutcomeApproved))
	must(r.SetPayoutStatus(ctx, "po-1", "completed"))
	must(r.SetWithdrawalStatus(ctx, "w-1", "completed", "0xabc"))
	must(r.SetWithdrawalStatus(ctx, "w-1", "failed", ""))
	now, err := r.Advance(ctx, 90*time.Minute)
	must(err)
	must(r.InjectFault(ctx, Fault{Method: "POST", Path: "/v1/transfers", Mode: FaultDropAfter, Count: 1}))
	must(r.Reset(ctx))
	must(r.FlushWebhooks(ctx))
	again, err := r.ResendWebhook(ctx, "dlv_1")
	must(err)
	st, err := r.State(ctx)
	must(err)
	reqs, err := r.Requests(ctx)
	must(err)
	ds, err := r.Deliveries(ctx)
	must(err)

	const js = "application/json"
	want := []wireCall{
		{"POST", "/sandbox/payments/p-1/verify", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"outcome":"completed"}`},
		{"POST", "/sandbox/payments/a%2Fb/verify", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"outcome":"cancelled"}`},
		{"POST", "/sandbox/payments/p-1/dispute/review", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"outcome":"approved"}`},
		{"POST", "/sandbox/payouts/po-1/status", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"status":"completed"}`},
		{"POST", "/sandbox/withdrawals/w-1/status", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"status":"completed","tx_hash":"0xabc"}`},
		{"POST", "/sandbox/withdrawals/w-1/status", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"status":"failed"}`},
		{"POST", "/sandbox/clock/advance", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"seconds":5400}`},
		{"POST", "/sandbox/faults", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{"method":"POST","path":"/v1/transfers","mode":"drop_after","count":1,"status":0,"code":"","delay_ms":0,"retry_after_s":0}`},
		{"POST", "/sandbox/reset", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{}`},
		{"POST", "/sandbox/webhooks/flush", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{}`},
		{"POST", "/sandbox/webhooks/dlv_1/resend", js, "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", `{}`},
		{"GET", "/sandbox/state", "", "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", ``},
		{"GET", "/sandbox/requests", "", "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", ``},
		{"GET", "/sandbox/webhooks", "", "Bearer ctl-9-9f3c2a7b1e8d4c6f0a5b9e2d", ``},
	}
	mu.Lock()
	got := append([]wireCall(nil), calls...)
	mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}

	eq(t, now, time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC))
	eq(t, again.ID, "dlv_2")
	eq(t, again.ResendOf, "dlv_1")
	eq(t, again.ExtID, "o-1")
	eq(t, again.State, DeliveryPending)
	eq(t, len(st.Merchants), 1)
	eq(t, st.Merchants[0].Terminals[0].ID, "term_a")
	wantDec(t, st.Merchants[0].Terminals[0].Balance, "1016.22")
	wantDec(t, st.Merchants[0].Terminals[0].BalanceFrozen, "101.50")
	eq(t, st.Merchants[0].Payments["COMPLETED"], 2)
	eq(t, st.Merchants[0].Transfers, 3)
	eq(t, len(reqs), 1)
	eq(t, reqs[0].Code, "PAY_003")
	eq(t, reqs[0].Status, 409)
	eq(t, reqs[0].Duration, 48400*time.Nanosecond)
	eq(t, len(ds), 1)
	eq(t, ds[0].State, DeliveryFailed)
	eq(t, ds[0].Attempts[0].StatusCode, 503)

	// Bad input never reaches the wire.
	mu.Lock()
	n := len(calls)
	mu.Unlock()
	for name, err := range map[string]error{
		"empty payment id":    r.VerifyPayment(ctx, "", OutcomeCompleted),
		"empty dispute id":    r.ReviewDispute(ctx, "", OutcomeApproved),
		"empty payout id":     r.SetPayoutStatus(ctx, "", "completed"),
		"empty withdrawal id": r.SetWithdrawalStatus(ctx, "", "completed", ""),
		"negative advance":    func() error { _, err := r.Advance(ctx, -time.Second); return err }(),
		"sub-second advance":  func() error { _, err := r.Advance(ctx, 1500*time.Millisecond); return err }(),
		"empty delivery id":   func() error { _, err := r.ResendWebhook(ctx, ""); return err }(),
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	mu.Lock()
	if len(calls) != n {
		t.Errorf("bad input sent %d requests", len(calls)-n)
	}
	mu.Unlock()
}

// Answers a Remote cannot use come back as errors, never a panic or a zero
// value taken for success: a 2xx that is not JSON, an error that is not
// JSON, an answer cut off.
func TestRemoteOddAnswers(t *testing.T) {
	var answer func(w http.ResponseWriter)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
	defer srv.Close()
	r, err := NewRemote(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	answer = func(w http.ResponseWriter) { io.WriteString(w, "<html>proxy page</html>") }
	if _, err := r.State(ctx); err == nil || !strings.Contains(err.Error(), "decoding the answer") {
		t.Errorf("HTML 200: %v", err)
	}
	answer = func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway); io.WriteString(w, "bad gateway") }
	var ce *ControlError
	if err := r.Reset(ctx); !errors.As(err, &ce) || ce.StatusCode != 502 || ce.Message != "Bad Gateway" {
		t.Errorf("plain-text 502: %v", err)
	}
	answer = func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"now":`)
	}
	if _, err := r.Advance(ctx, time.Second); err == nil {
		t.Error("a cut-off answer was taken")
	}
	answer = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error":"SANDBOX_CONFLICT","message":"payment p is PENDING, not PROCESSING","data":{}}`)
	}
	if err := r.VerifyPayment(ctx, "p", OutcomeCompleted); !errors.Is(err, ErrWrongState) || !errors.As(err, &ce) || ce.Code != CodeControlConflict {
		t.Errorf("409: %v", err)
	}
}

// No fmt verb and no slog handler shows a Remote's control token, whether
// the Remote is printed by pointer or by value.
func TestRemoteNeverPrintsItsToken(t *testing.T) {
	const tok = "7c1e9a4f3b2d8e6a0f5c9b1d4e7a2c8f"
	r, err := NewRemote("http://127.0.0.1:8080", WithControlToken(tok))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&out, verb+"\n", r)
		fmt.Fprintf(&out, verb+"\n", *r)
	}
	slog.New(slog.NewTextHandler(&out, nil)).Info("remote", "r", r, "v", *r)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("remote", "r", r, "v", *r)
	if strings.Contains(out.String(), tok) || strings.Contains(out.String(), fmt.Sprintf("%x", tok)) {
		t.Fatalf("the token shows:\n%s", out.String())
	}
	if got := fmt.Sprintf("%#v", r); got != `&sandbox.Remote{base:"http://127.0.0.1:8080", token:"****"}` {
		t.Fatalf("%%#v: %s", got)
	}
	if got := fmt.Sprintf("%v", r); got != "sandbox.Remote(http://127.0.0.1:8080)" {
		t.Fatalf("%%v: %s", got)
	}
	if !strings.Contains(out.String(), `"r":{"base":"http://127.0.0.1:8080","control_token":true}`) {
		t.Fatalf("slog does not show the base URL:\n%s", out.String())
	}
}

// A sandbox whose database failed answers its controls 503 SANDBOX_STORE;
// through a Remote that matches ErrStore, as the Server's own controls'
// errors do. Another 503 (a proxy's) does not.
func TestRemoteStoreFailureIsErrStore(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := "SANDBOX_STORE"
		if r.URL.Path == "/sandbox/reset" {
			code = "SANDBOX_BUSY"
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":%q,"message":"the sandbox's database cannot be used","data":{}}`, code)
	}))
	t.Cleanup(srv.Close)
	r, err := NewRemote(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	err = r.VerifyPayment(context.Background(), "p-1", OutcomeCompleted)
	var ce *ControlError
	if !errors.Is(err, ErrStore) || !errors.As(err, &ce) || ce.StatusCode != 503 || errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed store through Remote: %v", err)
	}
	if err := r.Reset(context.Background()); errors.Is(err, ErrStore) {
		t.Fatalf("another 503 matches ErrStore: %v", err)
	}
}
