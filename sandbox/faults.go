package sandbox

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/paykit-dev/paykit-go/sandbox/internal/api"
)

// Fault modes.
const (
	// FaultErrorBefore answers Fault.Status (default 500) with an error body
	// whose code is Fault.Code (default: the spec's internal error of the
	// route, see Fault.Code) without processing the request.
	FaultErrorBefore = api.FaultErrorBefore
	// FaultDropAfter processes the request fully, then closes the connection
	// without answering: the client cannot know that it took effect.
	FaultDropAfter = api.FaultDropAfter
	// FaultDelay reads the request body, stalls Fault.DelayMS milliseconds,
	// then processes the request normally. A client that gives up during
	// the stall ends it, and its request is not applied.
	FaultDelay = api.FaultDelay
	// FaultRetryAfter answers 503 with a Retry-After header of
	// Fault.RetryAfterS seconds (default 1) without processing the request.
	FaultRetryAfter = api.FaultRetryAfter
)

// DefaultFaultCode is the error code of an error_before or retry_after
// answer whose Fault names no code, on a route for which the spec names no
// internal error of its own (create payment and confirm take PAY_001; see
// Fault.Code).
const DefaultFaultCode = api.DefaultFaultCode

// Fault is a one-shot (or Count-shot) failure injected in front of the
// API. Method is an HTTP method ("" = any). Path is an escaped request path,
// exact or with {name} segments that match any single segment, e.g.
// "/v1/payments/{id}/confirm". Count is how many matching requests the fault
// applies to (0 = 1). Faults are matched before authentication, in the
// order they were injected; the first match is used.
type Fault struct {
	// Method is the HTTP method to match, "" for any.
	Method string `json:"method"`
	// Path is the escaped path to match; {name} segments match any one
	// segment, so one fault can hit a route whatever the id.
	Path string `json:"path"`
	// Mode is FaultErrorBefore, FaultDropAfter, FaultDelay or
	// FaultRetryAfter.
	Mode string `json:"mode"`
	// Count is how many matching requests the fault applies to; 0 means 1.
	Count int `json:"count"`
	// Status is the HTTP status of an error_before answer; 0 means 500.
	Status int `json:"status"`
	// Code is the error code of an error_before or retry_after answer;
	// "" means the spec's internal error of the route the request hits:
	// PAY_001 for create and confirm payment, SYS_001 for create payout,
	// cancel dispute and the routes whose internal error the spec does not
	// name (DefaultFaultCode).
	Code string `json:"code"`
	// DelayMS is how long a delay fault stalls, in milliseconds.
	DelayMS int `json:"delay_ms"`
	// RetryAfterS is the Retry-After of a retry_after answer, in seconds;
	// 0 means 1.
	RetryAfterS int `json:"retry_after_s"`
}

// InjectFault arms f for the next Count matching requests. It returns an
// error wrapping ErrInvalidArgument for an unknown mode, a path that does
// not start with "/" or negative numbers.
func (s *Server) InjectFault(f Fault) error {
	switch f.Mode {
	case FaultErrorBefore, FaultDropAfter, FaultDelay, FaultRetryAfter:
	default:
		return fmt.Errorf("%w: fault mode must be error_before, drop_after, delay or retry_after", ErrInvalidArgument)
	}
	if !strings.HasPrefix(f.Path, "/") {
		return fmt.Errorf("%w: fault path must start with /", ErrInvalidArgument)
	}
	if f.Count < 0 || f.DelayMS < 0 || f.RetryAfterS < 0 || f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("%w: fault count, delay, retry-after and status must be in range", ErrInvalidArgument)
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
	s.faults = append(s.faults, &f)
	s.jr.saveFaults(s.faults)
	return storeOutcome(s.end()) // ErrStore when the fault was not kept, or may not be
}

// Arrived counts the request under its route pattern and consumes one
// shot of the first fault that matches it. Counting by route, not by raw
// path, keeps the counters bounded however many distinct ids or junk paths
// clients send.
func (b apiBackend) Arrived(method, pattern, path string) (api.Fault, bool) {
	s := b.s
	s.begin()
	defer s.commit()
	s.requests[routeKey{method: knownMethod(method), route: routePath(pattern)}]++
	s.jr.saveCounters(s.requests)
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && pathMatches(f.Path, path) {
			shot := api.Fault(*f)
			if f.Count--; f.Count <= 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			s.jr.saveFaults(s.faults)
			return shot, true
		}
	}
	return api.Fault{}, false
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
