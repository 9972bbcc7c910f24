package sandbox

import (
	"net"
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
