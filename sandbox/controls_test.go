package sandbox

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

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

// Whatever dials the sandbox, a webhook delivery is never a command: the
// controls refuse the sandbox's own User-Agent and unknown fields.
func TestControlsRefuseWebhookDeliveries(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	path := "/sandbox/withdrawals/" + w.str("id") + "/status"
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(`{"status":"completed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhook.UserAgent)
	wantStatus(t, e.send(req), 403, CodeControlForbidden)
	payoutHook := `{"id":"` + w.str("id") + `","ext_id":"po-1","amount":10,"status":"completed","method":"sbp"}`
	wantStatus(t, e.control(path, payoutHook), 400, CodeControlInvalid)
	wantStatus(t, e.control("/sandbox/reset", `{"id":"x","status":"CANCELLED"}`), 400, CodeControlInvalid)
	eq(t, e.do("GET", "/v1/withdrawals/"+w.str("id"), "").str("status"), "pending")
	wantStatus(t, e.control(path, `{"status":"completed"}`), 200, "") // a real control still works
}

// A flush whose request ends with a delivery still pending answers 409
// with ErrWrongState's text: the route decides it (package api), and the
// answer's bytes are those of the Go error it used to wrap.
func TestHTTPFlushNotFinishedIsWrongState(t *testing.T) {
	if api.WrongStateText != ErrWrongState.Error() {
		t.Fatalf("api.WrongStateText %q, ErrWrongState %q", api.WrongStateText, ErrWrongState.Error())
	}
	sink := newHookSink(t, 1000) // always fails
	sb := New(Config{WebhookRetryWait: time.Hour, Now: func() time.Time { return base }})
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close() })
	e := &env{t: t, sb: sb, ts: srv, key: DefaultAPIKey, sec: DefaultSecret}
	pid := e.createPayment(`{"ext_id":"f","amount":150,"notify_url":"` + sink.srv.URL + `"}`).str("id")
	e.do("POST", "/v1/payments/"+pid+"/cancel", "")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("POST", "http://127.0.0.1/sandbox/webhooks/flush", strings.NewReader(`{}`)).WithContext(ctx)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	sb.ServeHTTP(w, r)
	want := `{"error":"SANDBOX_CONFLICT","message":"sandbox: transition not allowed from the current status: ` +
		`webhooks still pending: context canceled","data":{}}` + "\n"
	if w.Code != 409 || w.Body.String() != want {
		t.Fatalf("got %d %s, want 409 %s", w.Code, w.Body, want)
	}
}
