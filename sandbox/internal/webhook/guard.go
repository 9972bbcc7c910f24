package webhook

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// UserAgent is the User-Agent of every webhook delivery. The sandbox's
// controls refuse a request that carries it: a delivery is never a command.
const UserAgent = "paykit-sandbox-webhooks"

// ErrSelfDelivery refuses a webhook connection to the sandbox itself.
var ErrSelfDelivery = errors.New("notify_url points at the sandbox itself; deliveries never connect to it")

// NewClient is the default client of deliveries: a dialer that refuses
// the sandbox's own addresses (isSelf: the addresses it listens on, which
// the sandbox learns as requests arrive; the check runs when dialling, on
// the address actually dialled, so DNS names, other spellings of an
// address and redirects are all covered), no proxy (a proxy would connect
// to the sandbox on the delivery's behalf), no redirects, and a timeout
// per attempt.
func NewClient(isSelf func(netip.AddrPort) bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || isSelf(ap) {
			return ErrSelfDelivery
		}
		return nil
	}}
	return &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: NoRedirects,
	}
}

// NoRedirects makes a 3xx the receiver's answer: following it would turn
// the POST into a GET of another URL and lose the notification. A client
// the owner gives in place of NewClient's takes it as CheckRedirect.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
