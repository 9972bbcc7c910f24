package guard

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Wrong control tokens are slowed per client address: the first
// freeFailures of a window cost nothing (a typo, a stale token in a
// script), then each further one blocks the address for twice as long as
// the last, up to maxBlock. During a block every credential from the
// address is answered 429 with Retry-After, the right one included, so
// guessing runs at a few tries per hour however fast the client sends.
const (
	freeFailures = 5
	firstBlock   = time.Second
	maxBlock     = 15 * time.Minute
	// forget is how long an address's failures are remembered after its
	// last one (and after its block ends).
	forget = time.Hour
	// maxAddrs bounds the table: past it, the entry whose last failure is
	// oldest goes, so a flood from many addresses costs memory once.
	maxAddrs = 4096
)

// failures counts wrong control tokens per client address, on the wall
// clock now.
type failures struct {
	now    func() time.Time
	logger *slog.Logger

	mu    sync.Mutex
	addrs map[string]*entry
}

type entry struct {
	fails int
	last  time.Time // the last failure
	until time.Time // blocked until then
}

func newFailures(now func() time.Time, logger *slog.Logger) *failures {
	return &failures{now: now, logger: logger, addrs: map[string]*entry{}}
}

// clientAddr is the address failures are counted under: the peer's IP
// (never a header the client writes), an IPv6 one by its /64, which one
// host or subscriber usually holds whole.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// blocked returns how long addr must still wait, or 0.
func (a *failures) blocked(addr string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.addrs[addr]
	if e == nil {
		return 0
	}
	return max(e.until.Sub(a.now()), 0)
}

// fail records a wrong token from addr and logs it (the address, the count
// and the block; never the token).
func (a *failures) fail(addr, via string) {
	now := a.now()
	a.mu.Lock()
	e := a.addrs[addr]
	if e != nil && now.Sub(e.last) > forget && !now.Before(e.until.Add(forget)) {
		e = nil // an old story: start over
	}
	if e == nil {
		if len(a.addrs) >= maxAddrs {
			a.evictLocked(now)
		}
		e = &entry{}
		a.addrs[addr] = e
	}
	e.fails++
	e.last = now
	var block time.Duration
	if n := e.fails - freeFailures; n > 0 {
		block = maxBlock
		if n <= 20 && firstBlock<<(n-1) < maxBlock {
			block = firstBlock << (n - 1)
		}
		e.until = now.Add(block)
	}
	fails := e.fails
	a.mu.Unlock()
	if a.logger != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelWarn, "wrong control token",
			slog.String("client", addr), slog.String("via", via), slog.Int("failures", fails),
			slog.String("blocked_for", block.String()))
	}
}

// succeed forgets addr's failures: its holder knows the token.
func (a *failures) succeed(addr string) {
	a.mu.Lock()
	delete(a.addrs, addr)
	a.mu.Unlock()
}

// evictLocked drops the forgotten entries, or when none is, the one whose
// last failure is oldest.
func (a *failures) evictLocked(now time.Time) {
	var oldest string
	for k, e := range a.addrs {
		if now.Sub(e.last) > forget && !now.Before(e.until.Add(forget)) {
			delete(a.addrs, k)
			continue
		}
		if oldest == "" || e.last.Before(a.addrs[oldest].last) {
			oldest = k
		}
	}
	if len(a.addrs) >= maxAddrs {
		delete(a.addrs, oldest)
	}
}

// waitSeconds is a block's rest in whole seconds, rounded up, as
// Retry-After says it.
func waitSeconds(wait time.Duration) int {
	return int((wait + time.Second - 1) / time.Second)
}
