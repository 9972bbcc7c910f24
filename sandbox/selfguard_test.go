package sandbox

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// A merchant's receiver on loopback, by address or by the name localhost,
// gets its webhook from a sandbox that guards its own address: only the
// sandbox's own port is refused.
func TestDeliveriesReachLoopbackReceivers(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{WebhookMaxAttempts: 1})
	u, _ := url.Parse(sink.srv.URL)
	self, _ := url.Parse(e.ts.URL)
	e.sb.svc.Probe().Self().Add(netip.MustParseAddrPort("0.0.0.0:" + self.Port())) // as the binary listening on every address
	for i, target := range []string{sink.srv.URL + "/hook", "http://localhost:" + u.Port() + "/hook"} {
		p := e.createPayment(`{"ext_id":"dev-` + string(rune('a'+i)) + `","amount":1500,"notify_url":"` + target + `"}`)
		wantStatus(t, e.do("POST", "/v1/payments/"+p.str("id")+"/cancel", ""), 200, "")
	}
	e.flush()
	for _, d := range e.sb.Deliveries() {
		eq(t, d.State, DeliveryDelivered)
		if !strings.HasSuffix(d.URL, "/hook") {
			t.Fatalf("delivery to %s", d.URL)
		}
	}
	eq(t, len(sink.statuses()), 2)
}

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
