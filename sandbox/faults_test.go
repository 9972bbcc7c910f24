package sandbox

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

// A fault that names no code answers with the spec's internal error of the
// route it hits: PAY_001 (500) for create and confirm payment, SYS_001 for
// create payout and cancel dispute, and DefaultFaultCode on routes whose
// internal error the spec does not name. A code given is kept.
func TestFaultDefaultCodeIsTheRoutesInternalError(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"o-1","amount":1500}`).str("id")
	payout := `{"ext_id":"po-1","amount":500,"method":"card","requisites":"4111111111111111","holder_name":"IVAN"}`
	for _, c := range []struct {
		fault      Fault
		method     string
		path, body string
		status     int
		want       string
	}{
		{Fault{Method: "POST", Path: "/v1/payments", Mode: FaultErrorBefore}, "POST", "/v1/payments", `{"ext_id":"o-2","amount":1500}`, 500, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payments/{id}/confirm", Mode: FaultErrorBefore}, "POST", "/v1/payments/" + id + "/confirm", "", 500, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payouts", Mode: FaultErrorBefore}, "POST", "/v1/payouts", payout, 500, "SYS_001"},
		{Fault{Path: "/v1/payments/{id}/dispute/cancel", Mode: FaultErrorBefore}, "POST", "/v1/payments/" + id + "/dispute/cancel", "", 500, "SYS_001"},
		{Fault{Method: "GET", Path: "/v1/balance", Mode: FaultErrorBefore}, "GET", "/v1/balance", "", 500, DefaultFaultCode},
		{Fault{Path: "/v1/payments", Mode: FaultRetryAfter}, "POST", "/v1/payments", `{"ext_id":"o-3","amount":1500}`, 503, "PAY_001"},
		{Fault{Method: "POST", Path: "/v1/payouts", Mode: FaultRetryAfter}, "POST", "/v1/payouts", payout, 503, "SYS_001"},
		{Fault{Method: "POST", Path: "/v1/payments", Mode: FaultErrorBefore, Status: 502, Code: "GATEWAY"}, "POST", "/v1/payments", `{"ext_id":"o-4","amount":1500}`, 502, "GATEWAY"},
	} {
		if err := e.sb.InjectFault(c.fault); err != nil {
			t.Fatal(err)
		}
		var r resp
		if c.body == "" && c.method == "POST" && c.path == "/v1/payments/"+id+"/confirm" {
			r = e.confirm("/v1/payments/" + id)
		} else {
			r = e.do(c.method, c.path, c.body)
		}
		wantStatus(t, r, c.status, c.want)
	}
	// Every fault was used up: nothing else was answered with one.
	wantStatus(t, e.do("GET", "/v1/balance", ""), 200, "")
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

// A delayed POST whose client goes away during the delay is not applied.
// httptest.Server.Close waits for the handler, so no sleep is needed: with
// the defect, the handler applies the transfer when the 3 s delay ends.
func TestFaultDelayAbandonedNotApplied(t *testing.T) {
	e := newEnv(t, Config{})
	must(t, e.sb.InjectFault(Fault{Method: "POST", Path: "/v1/transfers", Mode: FaultDelay, DelayMS: 3000}))
	body := `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":5}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", e.ts.URL+"/v1/transfers", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	sig, _ := paykit.HMACSigner(DefaultSecret).Sign(req, []byte(body))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", sig)
	done := make(chan error, 1)
	go func() {
		res, err := e.ts.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	// Cancel once the request has reached the sandbox.
	deadline := time.Now().Add(10 * time.Second)
	for e.sb.RequestCount("POST", "/v1/transfers") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
		time.Sleep(time.Millisecond) // polling with a deadline, not synchronisation by sleep
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("expected the cancelled request to fail")
	}
	start := time.Now()
	e.ts.Close() // waits for the handler
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the handler kept waiting %v after its client left", d)
	}
	eq(t, e.sb.Stats(e.key).Transfers, 0)
	wantDec(t, e.sb.Terminals(e.key)[0].Balance, "1000")
}
