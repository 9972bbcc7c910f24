package service

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// SelfAddrs is what the sandbox listens on: Config.ListenAddrs, and every
// local address a request has arrived on (ServeHTTP learns them: the
// application knows where it is served). Webhook deliveries refuse to
// connect to any of them, so a merchant cannot point notify_url at the
// sandbox's own /sandbox/reset (or at a control that settles another
// merchant's withdrawal). The check runs when dialling, on the address
// actually dialled, so DNS names, other spellings of an address and
// redirects are all covered.
type SelfAddrs struct {
	mu    sync.RWMutex
	addrs map[netip.AddrPort]struct{}
	ports map[uint16]struct{} // ports of listeners on an unspecified address (0.0.0.0, [::])
}

// NewSelfAddrs guards the listen addresses (host:port; a host name guards
// its port on every local address).
func NewSelfAddrs(listen []string) *SelfAddrs {
	s := &SelfAddrs{addrs: map[netip.AddrPort]struct{}{}, ports: map[uint16]struct{}{}}
	for _, a := range listen {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			s.Add(ap)
		} else if _, port, err := net.SplitHostPort(a); err == nil {
			// A host name ("localhost:8080"): guard the port on every
			// local address.
			if p, err := netip.ParseAddrPort("0.0.0.0:" + port); err == nil {
				s.Add(p)
			}
		}
	}
	return s
}

// Add guards ap (an unspecified address: its port on every local address).
func (s *SelfAddrs) Add(ap netip.AddrPort) {
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	s.mu.RLock()
	_, known := s.addrs[ap]
	_, knownPort := s.ports[ap.Port()]
	s.mu.RUnlock()
	if known || ap.Addr().IsUnspecified() && knownPort {
		return
	}
	s.mu.Lock()
	if ap.Addr().IsUnspecified() {
		s.ports[ap.Port()] = struct{}{}
	} else {
		s.addrs[ap] = struct{}{}
	}
	s.mu.Unlock()
}

// Learn records the local address a request arrived on.
func (s *SelfAddrs) Learn(r *http.Request) {
	switch a := r.Context().Value(http.LocalAddrContextKey).(type) {
	case *net.TCPAddr:
		s.Add(a.AddrPort()) // every request learns: no text round trip
	case net.Addr:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			s.Add(ap)
		}
	}
}

// IsSelf reports whether dialling ap would reach the sandbox.
func (s *SelfAddrs) IsSelf(ap netip.AddrPort) bool {
	// A link-local address names its interface (fe80::1%eth0); the
	// interface's address list does not.
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	if ap.Addr().IsUnspecified() {
		// Connecting to 0.0.0.0 or [::] reaches this machine's loopback.
		return s.IsSelf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())) ||
			s.IsSelf(netip.AddrPortFrom(netip.IPv6Loopback(), ap.Port()))
	}
	s.mu.RLock()
	_, exact := s.addrs[ap]
	_, port := s.ports[ap.Port()]
	s.mu.RUnlock()
	return exact || port && localIP(ap.Addr())
}

// localIP reports whether ip is an address of this machine.
func localIP(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // cannot tell: refuse rather than risk a self-delivery
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}
