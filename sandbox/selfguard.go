package sandbox

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// webhookUserAgent is the User-Agent of every webhook delivery. The
// controls refuse a request that carries it: a delivery is never a command.
const webhookUserAgent = "paykit-sandbox-webhooks"

// errSelfDelivery refuses a webhook connection to the sandbox itself.
var errSelfDelivery = errors.New("notify_url points at the sandbox itself; deliveries never connect to it")

// selfAddrs is what the sandbox listens on: Config.ListenAddrs, and every
// local address a request has arrived on. Webhook deliveries refuse to
// connect to any of them, so a merchant cannot point notify_url at the
// sandbox's own /sandbox/reset (or at a control that settles another
// merchant's withdrawal). The check runs when dialling, on the address
// actually dialled, so DNS names, other spellings of an address and
// redirects are all covered.
type selfAddrs struct {
	mu    sync.RWMutex
	addrs map[netip.AddrPort]struct{}
	ports map[uint16]struct{} // ports of listeners on an unspecified address (0.0.0.0, [::])
}

func newSelfAddrs(listen []string) *selfAddrs {
	s := &selfAddrs{addrs: map[netip.AddrPort]struct{}{}, ports: map[uint16]struct{}{}}
	for _, a := range listen {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			s.add(ap)
		} else if _, port, err := net.SplitHostPort(a); err == nil {
			// A host name ("localhost:8080"): guard the port on every
			// local address.
			if p, err := netip.ParseAddrPort("0.0.0.0:" + port); err == nil {
				s.add(p)
			}
		}
	}
	return s
}

func (s *selfAddrs) add(ap netip.AddrPort) {
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

// learn records the local address a request arrived on.
func (s *selfAddrs) learn(r *http.Request) {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			s.add(ap)
		}
	}
}

// isSelf reports whether dialling ap would reach the sandbox.
func (s *selfAddrs) isSelf(ap netip.AddrPort) bool {
	// A link-local address names its interface (fe80::1%eth0); the
	// interface's address list does not.
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	if ap.Addr().IsUnspecified() {
		// Connecting to 0.0.0.0 or [::] reaches this machine's loopback.
		return s.isSelf(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port())) ||
			s.isSelf(netip.AddrPortFrom(netip.IPv6Loopback(), ap.Port()))
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

// webhookClient is the default client of deliveries: a dialer that
// refuses the sandbox's own addresses, no proxy (a proxy would connect to
// the sandbox on the delivery's behalf), no redirects, and a timeout per
// attempt.
func webhookClient(self *selfAddrs) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || self.isSelf(ap) {
			return errSelfDelivery
		}
		return nil
	}}
	return &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: noRedirects,
	}
}

// noRedirects makes a 3xx the receiver's answer: following it would turn
// the POST into a GET of another URL and lose the notification.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// semaphore is a counting semaphore whose acquire gives up when ctx ends.
type semaphore chan struct{}

func (s semaphore) acquire(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s semaphore) release() { <-s }
