package service

import (
	"net"
	"net/netip"
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
		s := NewSelfAddrs(tc.listen)
		for _, a := range tc.self {
			if !s.IsSelf(netip.MustParseAddrPort(a)) {
				t.Errorf("listening on %v: %s is the sandbox, not refused", tc.listen, a)
			}
		}
		for _, a := range tc.not {
			ap := netip.MustParseAddrPort(a)
			if !ap.Addr().IsLoopback() && localIP(ap.Addr()) {
				continue // this machine happens to own the address: it is the sandbox here
			}
			if s.IsSelf(ap) {
				t.Errorf("listening on %v: %s is a merchant's receiver, refused", tc.listen, a)
			}
		}
	}
}
