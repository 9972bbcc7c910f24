package service

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// InjectFault arms f for the next Count matching requests. It returns an
// error wrapping ErrInvalidArgument for an unknown mode, a path that does
// not start with "/" or negative numbers.
func (s *Service) InjectFault(f api.Fault) (err error) {
	switch f.Mode {
	case api.FaultErrorBefore, api.FaultDropAfter, api.FaultDelay, api.FaultRetryAfter:
	default:
		return refusal(ledger.Invalid, "fault mode must be error_before, drop_after, delay or retry_after")
	}
	if !strings.HasPrefix(f.Path, "/") {
		return refusal(ledger.Invalid, "fault path must start with /")
	}
	if f.Count < 0 || f.DelayMS < 0 || f.RetryAfterS < 0 || f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return refusal(ledger.Invalid, "fault count, delay, retry-after and status must be in range")
	}
	f.Method = strings.ToUpper(f.Method)
	if f.Count == 0 {
		f.Count = 1
	}
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	if f.RetryAfterS == 0 {
		f.RetryAfterS = 1
	}
	s.begin()
	defer s.endErr(&err) // NotKept or MaybeKept when the fault was not kept, or may not be
	s.setFaultsLocked(append(slices.Clone(s.faultsLocked()), f))
	return nil
}

// Arrived counts the request under its route pattern and consumes one
// shot of the first fault that matches it. Counting by route, not by raw
// path, keeps the counters bounded however many distinct ids or junk paths
// clients send. The counters are kept under reqMu, with the request log,
// and a request takes the lock here only when a fault may be armed
// (faultsArmed): most requests take it once, for their own section.
func (s *Service) Arrived(method, pattern, path string) (api.Fault, bool) {
	s.reqMu.Lock()
	s.requests[routeKey{method: knownMethod(method), route: routePath(pattern)}]++
	s.reqMu.Unlock()
	s.countersChanged()
	if !s.faultsArmed.Load() {
		return api.Fault{}, false
	}
	s.begin()
	defer s.commit()
	faults := s.faultsLocked()
	if len(faults) == 0 {
		s.faultsArmed.Store(false) // under the lock, as every setting of it: no fault is armed
		return api.Fault{}, false
	}
	for i, f := range faults {
		if (f.Method == "" || f.Method == method) && pathMatches(f.Path, path) {
			left := slices.Clone(faults) // the kept value is never changed: a new one is set
			if left[i].Count--; left[i].Count <= 0 {
				left = slices.Delete(left, i, i+1)
			}
			s.setFaultsLocked(left)
			return f, true
		}
	}
	return api.Fault{}, false
}

// Keys of the Service's own state in the store's transaction (Value).
const (
	offsetKey = "offset"
	faultsKey = "faults"
)

// faultsLocked are the armed faults, in injection order.
func (s *Service) faultsLocked() []api.Fault {
	f, _ := s.tx.Value(faultsKey).([]api.Fault)
	return f
}

// setFaultsLocked arms f with the section's transaction (and the journal).
func (s *Service) setFaultsLocked(f []api.Fault) {
	if len(f) > 0 {
		s.faultsArmed.Store(true) // before any request can see the fault
	}
	s.tx.SetValue(faultsKey, f)
	s.jr.saveFaults(f)
}

// offsetLocked is the clock offset of every Advance so far.
func (s *Service) offsetLocked() time.Duration {
	d, _ := s.tx.Value(offsetKey).(time.Duration)
	return d
}

// routeKey names a counter: a method (or OTHER) and a route's path
// template.
type routeKey struct{ method, route string }

// knownMethod maps the method token to itself when it is a standard one
// and to "OTHER" otherwise: a client may send any token as a method, and
// each must not become a new counter.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// routePath turns a ServeMux pattern ("POST /v1/payments/{id}/confirm",
// "GET /v1/payouts/by-ext-id/{extId...}") into the path template that
// RequestCount matches: "/v1/payments/{id}/confirm",
// "/v1/payouts/by-ext-id/{extId}". A request no route matched is
// "(unmatched)".
func routePath(pattern string) string {
	if pattern == "" {
		return "(unmatched)"
	}
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p
	}
	return strings.ReplaceAll(pattern, "...}", "}")
}

func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if len(p) > 2 && p[0] == '{' && p[len(p)-1] == '}' {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if p != xs[i] {
			return false
		}
	}
	return true
}
