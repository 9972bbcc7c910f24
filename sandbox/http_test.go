package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
)

// At most LargeBodyConcurrency large bodies are read at once: with the slot
// held by a stalled upload, another upload is answered 503 rather than
// buffered, while a small confirm goes through.
func TestLargeBodiesAreReadFewAtATime(t *testing.T) {
	e := newEnv(t, Config{LargeBodyConcurrency: 1, RequestBodyTimeout: 2 * time.Second})
	id := e.createPayment(`{"ext_id":"o-1","amount":1500}`).str("id")
	pr, pw := io.Pipe()
	stalled := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments/"+id+"/confirm", pr)
		req.ContentLength = 5 << 20
		req.Header.Set("X-Identity", DefaultAPIKey)
		req.Header.Set("X-Signature", "bad")
		req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			stalled <- res.StatusCode
			return
		}
		stalled <- 0
	}()
	go pw.Write(bytes.Repeat([]byte("x"), 1<<16))
	deadline := time.Now().Add(10 * time.Second)
	for e.sb.svc.LargeBodiesInFlight() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until the upload holds the slot
	}
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments/"+id+"/confirm", bytes.NewReader(make([]byte, 2<<20)))
	req.Header.Set("X-Identity", DefaultAPIKey)
	req.Header.Set("X-Signature", "bad")
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	r := e.send(req)
	wantStatus(t, r, http.StatusServiceUnavailable, "SANDBOX_BUSY")
	// A small confirm (no receipt) is no large body: it needs no slot.
	wantStatus(t, e.confirm("/v1/payments/"+id), 200, "")
	pw.Close()
	<-stalled
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
	}{{"/v1/payments", api.JSONBodyCap + 1, "PAY_002"}, {"/v1/transfers", api.JSONBodyCap + 1, "TRF_001"},
		{"/v1/withdrawals", api.JSONBodyCap + 1, "WDR_001"}, {"/v1/payouts", api.JSONBodyCap + 1, "PAY_002"},
		{"/v1/payments/x/cancel", api.NoBodyCap + 1, "PAY_002"}} {
		req, _ := http.NewRequest("POST", e.ts.URL+tc.path, strings.NewReader(strings.Repeat("x", tc.size)))
		req.Header.Set("X-Identity", DefaultAPIKey)
		req.Header.Set("X-Signature", "not-checked-yet")
		r := e.send(req)
		wantStatus(t, r, 400, tc.code)
		eq(t, r.str("data", "field"), "body")
	}
	// Just under the cap is read and then judged on its signature.
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/payments", strings.NewReader(strings.Repeat(" ", api.JSONBodyCap)))
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
	n := e.sb.svc.Probe().Counters()
	if n > 5 {
		t.Fatalf("%d counters after 1200 distinct requests", n)
	}
	eq(t, e.sb.RequestCount("GET", "/v1/payments/{id}"), 300)
	eq(t, e.sb.RequestCount("", "/v1/payments/{x}"), 300)
	eq(t, e.sb.RequestCount("GET", "/v1/payments/7"), 0) // concrete ids match no template
	eq(t, e.sb.RequestCount("OTHER", "/v1/"), 300)
	eq(t, len(e.sb.Requests()), DefaultRequestLogSize)
}
