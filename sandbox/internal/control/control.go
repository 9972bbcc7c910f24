// Package control declares the sandbox's control verbs once: the moves the
// real service's other parties make (verification, dispute review, the
// payout provider, the blockchain), the clock, faults, webhook resends and
// Reset. The application (sandbox/internal/service) implements Verbs; the
// JSON controls (api.Controls), the dashboard's forms (web.Backend) and
// the autopilot (autopilot.Target) each ask for it, so the three cannot
// drift apart and need no adapter. A leaf: standard library only.
//
// A refusal is a *ledger.Error (NotFound, WrongState, Conflict, Invalid;
// NotKept or MaybeKept when the store failed the change); each caller
// answers it in its own terms.
package control

import "time"

// Verbs are the control verbs. The values they return are the sandbox's
// read models (the API's view of the resource, the delivery), which the
// JSON controls encode; the dashboard and the autopilot ignore them.
type Verbs interface {
	// VerifyPayment plays the verification of a PROCESSING payment and
	// returns the payment as the API shows it.
	VerifyPayment(id, outcome string) (any, error)
	// ReviewDispute plays the review of a disputed payment and returns the
	// payment.
	ReviewDispute(id, outcome string) (any, error)
	// SetPayoutStatus moves a payout and returns it.
	SetPayoutStatus(id, status string) (any, error)
	// SetWithdrawalStatus moves a withdrawal (with its transaction hash
	// when completed; empty: one is generated) and returns it.
	SetWithdrawalStatus(id, status, txHash string) (any, error)
	// Advance moves the sandbox clock forward by d (the sandbox bounds
	// the total) and returns the clock's new time.
	Advance(d time.Duration) (time.Time, error)
	// InjectFault arms a fault.
	InjectFault(f Fault) error
	// ResendWebhook sends a logged delivery again and returns the new one.
	ResendWebhook(id string) (any, error)
	// Reset puts the sandbox back to its starting state.
	Reset() error
}

// Fault is an injected fault: the body of POST /sandbox/faults, the
// dashboard's fault form, and one shot of it as the API serves it. It has the fields of the sandbox's
// public Fault, which converts to it (sandbox's InjectFault: the conversion
// stops compiling if the two part ways); see sandbox.Fault for what each means.
type Fault struct {
	// Method is the HTTP method to match, "" for any.
	Method string `json:"method"`
	// Path is the escaped path to match, {name} segments matching any one.
	Path string `json:"path"`
	// Mode is FaultErrorBefore, FaultDropAfter, FaultDelay or
	// FaultRetryAfter.
	Mode string `json:"mode"`
	// Count is how many matching requests the fault applies to; 0 means 1.
	Count int `json:"count"`
	// Status is the HTTP status of an error_before answer; 0 means 500.
	Status int `json:"status"`
	// Code is the error code answered; "" takes the route's internal
	// error (FaultCode).
	Code string `json:"code"`
	// DelayMS is how long a delay stalls, in milliseconds.
	DelayMS int `json:"delay_ms"`
	// RetryAfterS is the Retry-After of a retry_after answer, in seconds;
	// 0 means 1.
	RetryAfterS int `json:"retry_after_s"`
}
