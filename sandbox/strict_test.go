package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

// USDT moves at TRC-20 precision: a seventh decimal place is refused with
// the operation's invalid-parameters code and no dust enters a balance.
func TestUSDTPrecision(t *testing.T) {
	e := newEnv(t, Config{})
	tr := func(amount string) resp {
		return e.do("POST", "/v1/transfers", `{"from_terminal_id":"term_sandbox_main","to_terminal_id":"term_sandbox_reserve","amount":`+amount+`}`)
	}
	for _, a := range []string{"0.0000001", "1.1234567", "10.00000001"} {
		r := tr(a)
		wantStatus(t, r, 400, "TRF_001")
		eq(t, r.str("data", "field"), "amount")
		r = e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":`+a+`,"address":"TXyz"}`)
		wantStatus(t, r, 400, "WDR_001")
		eq(t, r.str("data", "field"), "amount")
	}
	wantDec(t, e.balance(DefaultMainTerminalID), "1000")
	wantDec(t, e.balance(DefaultReserveTerminalID), "0")
	eq(t, e.sb.Stats(e.key).Withdrawals, 0)

	// Six places, and trailing zeros beyond them, are fine.
	wantStatus(t, tr("0.000001"), 200, "")
	wantStatus(t, tr("1.5000000000"), 200, "")
	wantStatus(t, e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":2.123456,"address":"TXyz"}`), 200, "")
	wantDec(t, e.balance(DefaultReserveTerminalID), "1.500001")
	wantDec(t, e.balance(DefaultMainTerminalID), "994.876543") // 1000 - 1.500001 - (2.123456 + 1.50 fee)
}

// rawExchange writes a raw HTTP/1.1 request head (and optionally part of a
// body) on a fresh connection and returns the status line of the answer.
// The connection deadline only guards against a hang; the tests do not
// rely on it.
func rawExchange(t *testing.T, e *env, head, partialBody string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Write([]byte(head + partialBody)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	res.Body.Close()
	return res.Status
}

// An unknown X-Identity is refused before a byte of the body is read: the
// request announces 1 MB and sends none of it, and the 401 comes anyway.
func TestUnknownKeyRefusedBeforeBody(t *testing.T) {
	e := newEnv(t, Config{RequestBodyTimeout: time.Hour})
	head := "POST /v1/transfers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"X-Identity: pk_nobody\r\nX-Signature: x\r\nContent-Length: 1000000\r\n\r\n"
	eq(t, rawExchange(t, e, head, ""), "401 Unauthorized")
	head = "POST /v1/transfers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n"
	eq(t, rawExchange(t, e, head, ""), "401 Unauthorized")
}

// A known key with a body that stalls is cut off after RequestBodyTimeout
// with 400 PAY_002, and nothing is applied. The body timeout is 50 ms; the
// connection deadline of 20 s is only a guard.
func TestStalledBodyCutOff(t *testing.T) {
	e := newEnv(t, Config{RequestBodyTimeout: 50 * time.Millisecond})
	head := "POST /v1/transfers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
		"X-Identity: " + DefaultAPIKey + "\r\nX-Signature: whatever\r\nContent-Length: 200\r\n\r\n"
	eq(t, rawExchange(t, e, head, `{"from_terminal_id":"term_sandbox_main",`), "400 Bad Request")
	eq(t, e.sb.Stats(e.key).Transfers, 0)
	last := e.sb.Requests()[0]
	eq(t, last.Code, "TRF_001") // the route's own invalid-parameters code
	eq(t, last.Route, "/v1/transfers")
}

// Per-route caps: a JSON route refuses a body over 64 KiB with 400 PAY_002
// before checking the signature (the body is garbage, unsigned).
func TestBodyCapsPerRoute(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tc := range []struct {
		path string
		size int
		code string
	}{{"/v1/payments", jsonBodyCap + 1, "PAY_002"}, {"/v1/transfers", jsonBodyCap + 1, "TRF_001"},
		{"/v1/withdrawals", jsonBodyCap + 1, "WDR_001"}, {"/v1/payouts", jsonBodyCap + 1, "PAY_002"},
		{"/v1/payments/x/cancel", noBodyCap + 1, "PAY_002"}} {
		req, _ := http.NewRequest("POST", e.ts.URL+tc.path, strings.NewReader(strings.Repeat("x", tc.size)))
		req.Header.Set("X-Identity", DefaultAPIKey)
		req.Header.Set("X-Signature", "not-checked-yet")
		r := e.send(req)
		wantStatus(t, r, 400, tc.code)
		eq(t, r.str("data", "field"), "body")
	}
	// Just under the cap is read and then judged on its signature.
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", strings.NewReader(strings.Repeat(" ", jsonBodyCap)))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", "bad")
	wantStatus(t, e.send(req), 401, "AUTH_001")
}

// Counters are kept per route, so a flood of distinct paths (ids, junk,
// odd methods) adds no entries, and RequestCount still counts them.
func TestRequestCountersBounded(t *testing.T) {
	e := newEnv(t, Config{})
	for i := range 300 {
		e.do("GET", fmt.Sprintf("/v1/payments/%d", i), "")
		e.do("GET", fmt.Sprintf("/v1/junk/%d/x", i), "")
		e.do("GET", fmt.Sprintf("/elsewhere/%d", i), "")
		req, _ := http.NewRequest(fmt.Sprintf("M%d", i), e.ts.URL+"/v1/banks", nil)
		e.send(req)
	}
	e.sb.mu.Lock()
	n := len(e.sb.requests)
	e.sb.mu.Unlock()
	if n > 5 {
		t.Fatalf("%d counters after 1200 distinct requests", n)
	}
	eq(t, e.sb.RequestCount("GET", "/v1/payments/{id}"), 300)
	eq(t, e.sb.RequestCount("", "/v1/payments/{x}"), 300)
	eq(t, e.sb.RequestCount("GET", "/v1/payments/7"), 0) // concrete ids match no template
	eq(t, e.sb.RequestCount("OTHER", "/v1/"), 300)
	eq(t, len(e.sb.Requests()), DefaultRequestLogSize)
}

// Two huge advances would overflow time.Duration; the clock clamps instead
// of running backwards.
func TestClockNeverRunsBackwards(t *testing.T) {
	e := newEnv(t, Config{})
	prev := e.sb.Now()
	for _, secs := range []string{"9223372036", "9223372036", "9223372036854775807", "1"} {
		r := e.control("/sandbox/clock/advance", `{"seconds":`+secs+`}`)
		wantStatus(t, r, 200, "")
		now := e.sb.Now()
		if now.Before(prev) {
			t.Fatalf("clock ran backwards: %v after %v", now, prev)
		}
		prev = now
	}
	eq(t, prev, base.Add(maxClockOffset))
	e.sb.Advance(1<<63 - 1)
	e.sb.Advance(1<<63 - 1)
	eq(t, e.sb.Now(), base.Add(maxClockOffset))
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
