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

// Wrong control tokens are throttled per client address: the first
// freeFailures of a window cost nothing (a typo, a stale token in a
// script), then each further one blocks the address for twice as long as
// the last, up to maxBlock. During a block every wrong token from the
// address is answered 429 with Retry-After and not counted. The right
// token is compared before any of this and always passes (see
// checkToken): an address is not a person, and behind a reverse proxy, a
// NAT or one IPv6 /64 a stranger's guesses would otherwise lock the
// operator out. What keeps a guesser from the key is its strength (128
// bits, package tokenstrength), not the throttle; the throttle tells a
// client to stop, keeps the log to a line per counted guess, and is not
// reset by the operator's success, which would hand a guesser behind the
// same address its free tries again.
const (
	freeFailures = 5
	firstBlock   = time.Second
	maxBlock     = 15 * time.Minute
	// forget is how long an address's failures are remembered after its
	// last one (and after its block ends).
	forget = time.Hour
	// maxAddrs bounds the table. A new address past it pushes out an
	// entry that is not blocked, the one with the fewest failures and then
	// the oldest; a blocked entry is never pushed out, so a flood from
	// other addresses cannot hand a blocked guesser free tries. When every
	// entry is blocked, new addresses share one entry, the overflow budget.
	maxAddrs = 4096
	// overflowClient is how the log names the overflow budget.
	overflowClient = "(any address beyond the full table)"
)

// failures counts wrong control tokens per client address, on the wall
// clock now.
type failures struct {
	now    func() time.Time
	logger *slog.Logger

	mu       sync.Mutex
	addrs    map[string]*entry
	overflow entry // the shared budget of addresses the full table cannot hold
}

type entry struct {
	fails int
	last  time.Time // the last failure
	until time.Time // blocked until then
}

// stale reports an entry whose story is over: its last failure and its
// block both ended more than forget ago.
func (e *entry) stale(now time.Time) bool {
	return now.Sub(e.last) > forget && !now.Before(e.until.Add(forget))
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
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	e, _ := a.entryLocked(addr, now, false)
	if e == nil {
		return 0
	}
	return max(e.until.Sub(now), 0)
}

// entryLocked is the entry addr's failures count in: its own, or, for an
// address not in the table while the table is full of blocked entries,
// the overflow budget. create makes room for (or starts over) addr's own
// entry; without it a new address has none yet (nil). client is how the
// log names the entry.
func (a *failures) entryLocked(addr string, now time.Time, create bool) (e *entry, client string) {
	if e := a.addrs[addr]; e != nil {
		if e.stale(now) && create {
			*e = entry{} // an old story: start over
		}
		return e, addr
	}
	if len(a.addrs) >= maxAddrs && !a.evictLocked(now, create) {
		if a.overflow.stale(now) {
			a.overflow = entry{}
		}
		return &a.overflow, overflowClient
	}
	if !create {
		return nil, addr
	}
	e = &entry{}
	a.addrs[addr] = e
	return e, addr
}

// fail records a wrong token from addr and logs it (the address, the count
// and the block; never the token).
func (a *failures) fail(addr, via string) {
	now := a.now()
	a.mu.Lock()
	e, client := a.entryLocked(addr, now, true)
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
			slog.String("client", client), slog.String("via", via), slog.Int("failures", fails),
			slog.String("blocked_for", block.String()))
	}
}

// evictLocked reports whether the full table has room for a new address,
// making it when evict is set: the stale entries go, else the entry not
// blocked now with the fewest failures, the oldest among equals. A blocked
// entry never goes; with every entry blocked there is no room.
func (a *failures) evictLocked(now time.Time, evict bool) bool {
	var victim string
	var v *entry
	for k, e := range a.addrs {
		if e.stale(now) {
			if !evict {
				return true
			}
			delete(a.addrs, k)
			continue
		}
		if now.Before(e.until) {
			continue
		}
		if v == nil || e.fails < v.fails || e.fails == v.fails && e.last.Before(v.last) {
			victim, v = k, e
		}
	}
	if len(a.addrs) < maxAddrs {
		return true
	}
	if v == nil {
		return false
	}
	if evict {
		delete(a.addrs, victim)
	}
	return true
}

// waitSeconds is a block's rest in whole seconds, rounded up, as
// Retry-After says it.
func waitSeconds(wait time.Duration) int {
	return int((wait + time.Second - 1) / time.Second)
}
