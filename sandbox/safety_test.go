package sandbox

// Tests of a sandbox safe to share (issue 20): each failed on df6900a.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A notify_url pointing at the sandbox itself, by address or by name, never
// reaches its controls: one merchant cannot reset everyone's state, or
// settle another merchant's withdrawal, with a webhook.
func TestWebhooksNeverReachTheSandbox(t *testing.T) {
	e := newEnv(t, Config{WebhookMaxAttempts: 2})
	other := e.createPayment(`{"ext_id":"someone-elses","amount":1500}`)
	u, _ := url.Parse(e.ts.URL)
	for i, target := range []string{e.ts.URL + "/sandbox/reset", "http://localhost:" + u.Port() + "/sandbox/reset",
		"http://0.0.0.0:" + u.Port() + "/sandbox/reset"} { // connecting to 0.0.0.0 reaches loopback
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"attacker-%d","amount":1500,"notify_url":%q}`, i, target))
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	// A payout's webhook ({"status":"completed",...}) aimed at a withdrawal control.
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	wantStatus(t, w, 200, "")
	po := e.do("POST", "/v1/payouts", `{"ext_id":"po-x","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A B",`+
		`"notify_url":"`+e.ts.URL+`/sandbox/withdrawals/`+w.str("id")+`/status"}`)
	wantStatus(t, po, 200, "")
	if err := e.sb.SetPayoutStatus(po.str("id"), "processing"); err != nil {
		t.Fatal(err)
	}
	e.flush()

	wantStatus(t, e.do("GET", "/v1/payments/"+other.str("id"), ""), 200, "") // not reset
	eq(t, e.do("GET", "/v1/withdrawals/"+w.str("id"), "").str("status"), "pending")
	for _, d := range e.sb.Deliveries() {
		eq(t, d.State, DeliveryFailed)
		for _, a := range d.Attempts {
			eq(t, a.StatusCode, 0)
			if !strings.Contains(a.Error, "sandbox itself") {
				t.Fatalf("attempt error %q", a.Error)
			}
		}
	}
	if got := e.sb.RequestCount("POST", "/sandbox/reset") + e.sb.RequestCount("POST", "/sandbox/withdrawals/{id}/status"); got != 0 {
		t.Fatalf("%d deliveries reached the controls", got)
	}
}

// Whatever dials the sandbox, a webhook delivery is never a command: the
// controls refuse the sandbox's own User-Agent and unknown fields.
func TestControlsRefuseWebhookDeliveries(t *testing.T) {
	e := newEnv(t, Config{})
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	path := "/sandbox/withdrawals/" + w.str("id") + "/status"
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(`{"status":"completed"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	wantStatus(t, e.send(req), 403, CodeControlForbidden)
	payoutHook := `{"id":"` + w.str("id") + `","ext_id":"po-1","amount":10,"status":"completed","method":"sbp"}`
	wantStatus(t, e.control(path, payoutHook), 400, CodeControlInvalid)
	wantStatus(t, e.control("/sandbox/reset", `{"id":"x","status":"CANCELLED"}`), 400, CodeControlInvalid)
	eq(t, e.do("GET", "/v1/withdrawals/"+w.str("id"), "").str("status"), "pending")
	wantStatus(t, e.control(path, `{"status":"completed"}`), 200, "") // a real control still works
}

// A receiver answering 302 has not taken the notification: the attempt
// fails and is retried; the redirect's target never sees a GET or a POST.
func TestWebhookRedirectsAreNotFollowed(t *testing.T) {
	target := newHookSink(t, 0)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.srv.URL, http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	var logs syncBuffer
	e := newEnv(t, Config{WebhookMaxAttempts: 3, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500,"notify_url":"` + redirector.URL + `"}`)
	e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	e.flush()
	d := e.sb.Deliveries()[0]
	eq(t, d.State, DeliveryFailed)
	eq(t, len(d.Attempts), 3)
	for _, a := range d.Attempts {
		eq(t, a.StatusCode, http.StatusFound)
		eq(t, a.Error, "redirect not followed")
	}
	target.mu.Lock()
	eq(t, target.attempts, 0)
	target.mu.Unlock()
	// Logged as failed attempts: a warning each, with the 302 and why.
	var warned int
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "webhook attempt" {
			eq(t, m["level"], any("WARN"))
			eq(t, m["response_status"], any(float64(http.StatusFound)))
			eq(t, m["error"], any("redirect not followed"))
			warned++
		}
	}
	eq(t, warned, 3)
}

// Remote mode needs the control token; with it, the controls, inspection
// and dashboard take it as a bearer token or a login cookie.
func TestRemoteModeNeedsTheControlToken(t *testing.T) {
	bare := newEnv(t, Config{AllowRemote: true})
	wantStatus(t, bare.control("/sandbox/reset", `{}`), 403, CodeControlForbidden)

	e := newEnv(t, Config{AllowRemote: true, ControlToken: "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"})
	get := func(path string, hdr ...string) resp {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Host = "sandbox.team.internal"
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return e.send(req)
	}
	wantStatus(t, e.control("/sandbox/reset", `{}`), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state", "Authorization", "Bearer wrong"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/state", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")

	// The dashboard sends a browser to the login form; a login sets an
	// HttpOnly, SameSite=Strict cookie that is not the token itself.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(e.ts.URL + "/sandbox/ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusSeeOther)
	eq(t, res.Header.Get("Location"), "/sandbox/login")
	res, _ = noFollow.PostForm(e.ts.URL+"/sandbox/login", url.Values{"token": {"wrong"}})
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusUnauthorized)
	res, _ = noFollow.PostForm(e.ts.URL+"/sandbox/login", url.Values{"token": {"ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"}})
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusSeeOther)
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode ||
		strings.Contains(cookies[0].Value, "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatalf("session cookie %+v", cookies)
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/ui?refresh=0", nil)
	req.AddCookie(cookies[0])
	res, _ = noFollow.Do(req)
	res.Body.Close()
	eq(t, res.StatusCode, http.StatusOK)
	wantStatus(t, get("/sandbox/webhooks", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")
	wantStatus(t, get("/sandbox/requests"), 401, CodeControlUnauthorized)
	wantStatus(t, get("/sandbox/ui?refresh=0", "Authorization", "Bearer ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"), 200, "")

	// The dashboard's forms act with the login cookie, and not without it
	// (even with the form token).
	uiForm := func(c *http.Cookie) int {
		req, _ := http.NewRequest("POST", e.ts.URL+"/sandbox/ui/clock/advance",
			strings.NewReader(url.Values{"seconds": {"60"}, "token": {uiToken}, "page": {"payments"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.ts.URL)
		if c != nil {
			req.AddCookie(c)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	before := e.sb.Now()
	eq(t, uiForm(nil), http.StatusUnauthorized)
	eq(t, uiForm(&http.Cookie{Name: sessionCookie, Value: "ctl-token-9-9f3c2a7b1e8d4c6f0a5b9e2d"}), http.StatusUnauthorized)
	eq(t, e.sb.Now(), before)
	eq(t, uiForm(cookies[0]), http.StatusSeeOther)
	eq(t, e.sb.Now(), before.Add(time.Minute))

	// Loopback-only mode keeps working without one.
	local := newEnv(t, Config{})
	wantStatus(t, local.control("/sandbox/clock/advance", `{"seconds":1}`), 200, "")
}

// Deliveries to one slow receiver go through a bounded pool: never more
// sockets than the per-receiver cap, none dropped, and the API answers
// while the receiver hangs.
func TestWebhookDeliveryIsBounded(t *testing.T) {
	release := make(chan struct{})
	var inFlight, peak, done atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		inFlight.Add(-1)
		done.Add(1)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	e := newEnv(t, Config{WebhookPerReceiver: 2, WebhookConcurrency: 3})
	const n = 30
	for i := range n {
		p := e.createPayment(fmt.Sprintf(`{"ext_id":"o-%d","amount":%d,"notify_url":%q}`, i, 1000+i, slow.URL))
		// The API answers while every delivery so far is stuck.
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	deadline := time.Now().Add(10 * time.Second)
	for inFlight.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until the pool is full
	}
	eq(t, inFlight.Load(), int32(2))
	close(release)
	e.flush()
	eq(t, done.Load(), int32(n))
	eq(t, peak.Load(), int32(2))
	for _, d := range e.sb.Deliveries() {
		eq(t, d.State, DeliveryDelivered)
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

// The I-paid post of the hosted page refuses a cross-site request even
// with the page's token, and any request without it.
func TestPaymentPageRefusesCrossSitePosts(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.createPayment(`{"ext_id":"o-1","amount":1500}`).str("id")
	post := func(token string, hdr ...string) int {
		req, _ := http.NewRequest("POST", e.ts.URL+"/pay/"+id, strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	eq(t, post(pageToken(id), "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	eq(t, post(""), http.StatusForbidden)
	eq(t, post(pageToken("another-payment")), http.StatusForbidden)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PENDING")
	eq(t, post(pageToken(id), "Origin", "null", "Sec-Fetch-Site", "cross-site"), http.StatusForbidden)
	// The page's no-referrer policy makes a browser send Origin: null;
	// Sec-Fetch-Site and the token decide then.
	eq(t, post(pageToken(id), "Origin", "null", "Sec-Fetch-Site", "same-origin"), http.StatusSeeOther)
	eq(t, e.do("GET", "/v1/payments/"+id, "").str("status"), "PROCESSING")
}

// Inputs are bounded: a dispute amount obeys the payment bounds, free text
// has caps whose refusals name them.
func TestBoundedInputs(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500}`)
	path := "/v1/payments/" + p.str("id")
	e.do("POST", path+"/cancel", "")
	r := e.do("POST", path+"/dispute", `{"amount":1000000000000000000000000000000}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("data", "field"), "amount")
	wantStatus(t, e.do("POST", path+"/dispute", `{"amount":50}`), 400, "PAY_002")
	r = e.do("POST", path+"/dispute", `{"comment":"`+strings.Repeat("x", MaxCommentLength+1)+`"}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("message"), "comment must be at most 1000 characters")

	r = e.do("POST", "/v1/payouts", `{"ext_id":"`+strings.Repeat("p", 600)+`","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"A"}`)
	wantStatus(t, r, 400, "PAY_002")
	eq(t, r.str("message"), "ext_id must be at most 255 characters")
	r = e.do("POST", "/v1/payouts", `{"ext_id":"po","amount":10,"method":"sbp","requisites":"+79001234567","holder_name":"`+strings.Repeat("a", 256)+`"}`)
	eq(t, r.str("message"), "holder_name must be at most 255 characters")
	r = e.do("POST", "/v1/payments", `{"ext_id":"o-2","amount":1500,"client_id":"`+strings.Repeat("c", 256)+`"}`)
	eq(t, r.str("message"), "client_id must be at most 255 characters")
	r = e.do("POST", "/v1/payments", `{"ext_id":"o-2","amount":1500,"notification_token":"`+strings.Repeat("t", 256)+`"}`)
	eq(t, r.str("message"), "notification_token must be at most 255 characters")
	r = e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"`+strings.Repeat("T", 129)+`"}`)
	wantStatus(t, r, 400, "WDR_001")
	w := e.do("POST", "/v1/withdrawals", `{"terminal_id":"term_sandbox_main","amount":10,"address":"TQn9"}`)
	wantStatus(t, e.control("/sandbox/withdrawals/"+w.str("id")+"/status",
		`{"status":"completed","tx_hash":"`+strings.Repeat("a", 129)+`"}`), 400, CodeControlInvalid)
}

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
	for len(e.sb.largeBodies) == 0 && time.Now().Before(deadline) {
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

// A notify_url's query (?api_key=...) is masked like its password in the
// delivery log, the dashboard and the log lines.
func TestNotifyURLQueryIsMasked(t *testing.T) {
	var logs syncBuffer
	e := newEnv(t, Config{WebhookMaxAttempts: 1, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	p := e.createPayment(`{"ext_id":"o-1","amount":1500,"notify_url":"http://user:pw-SECRET1@127.0.0.1:1/hook?api_key=SECRET2&x=SECRET3"}`)
	e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", "")
	e.flush()
	req, _ := http.NewRequest("GET", e.ts.URL+"/sandbox/webhooks", nil)
	inspect := e.send(req).raw
	_, _, dash := e.uiGet("/sandbox/ui/webhooks?refresh=0")
	for where, text := range map[string]string{"inspection": string(inspect), "dashboard": dash, "log": logs.String()} {
		for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3"} {
			if strings.Contains(text, secret) {
				t.Fatalf("%s shows %s:\n%s", where, secret, text)
			}
		}
	}
	if !strings.Contains(string(inspect), "api_key=xxxxx") {
		t.Fatalf("the masked query is not shown:\n%s", inspect)
	}
}
