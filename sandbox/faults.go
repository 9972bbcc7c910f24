package sandbox

import "github.com/paykit-dev/paykit-go/sandbox/internal/api"

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
func (s *Server) InjectFault(f Fault) error { return goError(s.svc.InjectFault(api.Fault(f))) }
