package sandbox

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// The self guard refuses exactly the sandbox's own sockets: its port on a
// loopback or local address, whatever the spelling. Receivers on other
// ports of loopback, and on private addresses of other machines, are how
// merchants develop and stay reachable.
func TestSelfAddrsGuardOnlyTheSandbox(t *testing.T) {
	var local []string // this machine's non-loopback addresses, link-local ones with their zone
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil || p.Addr().IsLoopback() {
				continue
			}
			ip := p.Addr()
			if ip.Is6() && ip.IsLinkLocalUnicast() {
				ip = ip.WithZone(ifc.Name)
			}
			local = append(local, netip.AddrPortFrom(ip, 8080).String())
		}
	}
	for _, tc := range []struct {
		listen    []string
		self, not []string
	}{
		{listen: []string{"0.0.0.0:8080"},
			self: append([]string{"127.0.0.1:8080", "127.0.0.2:8080", "[::1]:8080", "[::ffff:127.0.0.1]:8080", "0.0.0.0:8080"}, local...),
			not:  []string{"127.0.0.1:8081", "[::1]:9000", "10.1.2.3:8080", "192.168.7.7:8080", "172.16.0.9:8080", "[fd00::7]:8080"}},
		{listen: []string{"127.0.0.1:9090"},
			self: []string{"127.0.0.1:9090", "[::ffff:127.0.0.1]:9090", "0.0.0.0:9090", "[::ffff:0.0.0.0]:9090"},
			not:  []string{"127.0.0.1:9091", "10.0.0.1:9090", "192.168.1.10:9090"}},
		{listen: []string{"localhost:7070"},
			self: []string{"127.0.0.1:7070", "[::1]:7070"},
			not:  []string{"127.0.0.1:7071", "10.0.0.1:7070"}},
	} {
		s := newSelfAddrs(tc.listen)
		for _, a := range tc.self {
			if !s.isSelf(netip.MustParseAddrPort(a)) {
				t.Errorf("listening on %v: %s is the sandbox, not refused", tc.listen, a)
			}
		}
		for _, a := range tc.not {
			ap := netip.MustParseAddrPort(a)
			if !ap.Addr().IsLoopback() && localIP(ap.Addr()) {
				continue // this machine happens to own the address: it is the sandbox here
			}
			if s.isSelf(ap) {
				t.Errorf("listening on %v: %s is a merchant's receiver, refused", tc.listen, a)
			}
		}
	}
}

// A merchant's receiver on loopback, by address or by the name localhost,
// gets its webhook from a sandbox that guards its own address: only the
// sandbox's own port is refused.
func TestDeliveriesReachLoopbackReceivers(t *testing.T) {
	sink := newHookSink(t, 0)
	e := newEnv(t, Config{WebhookMaxAttempts: 1})
	u, _ := url.Parse(sink.srv.URL)
	self, _ := url.Parse(e.ts.URL)
	e.sb.self.add(netip.MustParseAddrPort("0.0.0.0:" + self.Port())) // as the binary listening on every address
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
