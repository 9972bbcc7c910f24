package paykit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Observer sees every call a Client makes: its start, each HTTP attempt,
// each wait before a retry, and its end. It is the SDK's neutral telemetry
// hook, as AWS SDK for Go v2's middleware: an adapter such as otelpaykit
// turns the events into spans and metrics.
//
// An Observer must be safe for concurrent use and return quickly: its
// methods run inside the call. The infos must not be kept or changed after
// a method returns. Without an Observer the hook costs nothing.
type Observer interface {
	// CallStart runs once per call before anything is sent. The context it
	// returns (carrying a span, say) is the call's from then on: attempts,
	// retry waits, read-backs (calls of their own, nested) and CallEnd.
	CallStart(ctx context.Context, call *CallInfo) context.Context
	// AttemptStart runs before each HTTP attempt; the context it returns
	// is the attempt's (the request is sent with it) and AttemptEnd's.
	AttemptStart(ctx context.Context, a *AttemptInfo) context.Context
	// AttemptEnd runs after each HTTP attempt, once its response body has
	// been read or the attempt has failed.
	AttemptEnd(ctx context.Context, a *AttemptInfo)
	// RetryWait runs before each retry, once its wait is over.
	RetryWait(ctx context.Context, w *RetryInfo)
	// CallEnd runs once per call that CallStart saw, with its outcome.
	CallEnd(ctx context.Context, end *CallEndInfo)
}

// CallInfo names one call of an operation.
type CallInfo struct {
	// Operation is the Client method's name, such as "CreatePayment".
	Operation string
	// Method is the HTTP method, such as "POST".
	Method string
	// Route is the path template below the base URL, such as
	// "/v1/payments/{id}" or "/v1/payouts/by-ext-id/{extId}": never a
	// concrete id or ext_id, so it is safe as a metric label.
	Route string
	// Scheme is the base URL's scheme.
	Scheme string
	// Host is the base URL's host name, without the port.
	Host string
	// Port is the base URL's port, or the scheme's default (443, 80), so
	// that a server.port attribute is always set.
	Port int
	// BasePath is the base URL's path prefix without a trailing slash ("" for
	// most services); a redacted full URL is Scheme://Host:Port+BasePath+Route.
	BasePath string
	// Start is when the call started.
	Start time.Time
}

// AttemptInfo describes one HTTP attempt of a call.
type AttemptInfo struct {
	// Call is the call the attempt belongs to.
	Call *CallInfo
	// Attempt counts from 1; a value above 1 is a retry
	// (http.request.resend_count is Attempt-1).
	Attempt int
	// Start is when the attempt started.
	Start time.Time
	// Duration is how long the attempt took, response body included; it is
	// zero until AttemptEnd.
	Duration time.Duration
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Code is the API error code of the answer ("PAY_004"), "" for a success
	// or a body without one. It is safe as a metric label: a code that is
	// neither in the spec's table nor one the sandbox documents (AUTH_001,
	// SANDBOX_BUSY, SANDBOX_STORE) is "OTHER", and one not shaped like a
	// code "INVALID_CODE", so a server inventing codes cannot make the
	// label's values unbounded. (*Error).Code keeps what was answered.
	Code string
	// Err is the transport error of an attempt that got no response (its
	// text never carries a secret, but may name the host).
	Err error
}

// RetryInfo describes a wait before the next attempt.
type RetryInfo struct {
	// Call is the call being retried.
	Call *CallInfo
	// Attempt is the number of the attempt that failed.
	Attempt int
	// Wait is how long the SDK waited since the attempt ended.
	Wait time.Duration
}

// Outcome classifies how a call ended.
type Outcome string

// Outcomes of a call.
const (
	// OutcomeSuccess: the API answered with the resource.
	OutcomeSuccess Outcome = "success"
	// OutcomeReconciled: an attempt's answer was lost or unusable, and the
	// SDK established by reading the resource back that the operation had
	// taken effect; the call returned it without error.
	OutcomeReconciled Outcome = "reconciled"
	// OutcomeBusinessError: the API refused the call with an error answer
	// (an *Error: PAY_004, 4xx codes, or a 5xx on a read).
	OutcomeBusinessError Outcome = "business_error"
	// OutcomeTransportError: no usable answer arrived (a connection failure,
	// a timeout, a cancelled context) on a call that provably changed
	// nothing or only reads.
	OutcomeTransportError Outcome = "transport_error"
	// OutcomeUnknownOutcome: the call's error matches ErrUnknownOutcome:
	// the operation may or may not have taken effect.
	OutcomeUnknownOutcome Outcome = "unknown_outcome"
	// OutcomeInvalidAnswer: a read was answered, but not with the resource
	// asked for (a body that does not decode, lacks the id, or is about
	// another resource), so the call failed without any transport fault.
	OutcomeInvalidAnswer Outcome = "invalid_answer"
)

// CallEndInfo describes how a call ended.
type CallEndInfo struct {
	// Call is the call that ended.
	Call *CallInfo
	// Attempts is how many HTTP attempts were made.
	Attempts int
	// Duration is the call's whole time, retries and read-backs included.
	Duration time.Duration
	// Outcome classifies the end.
	Outcome Outcome
	// StatusCode is the last attempt's HTTP status, 0 when none arrived.
	StatusCode int
	// Code is the API error code the call ended with, "" if none; bounded
	// as AttemptInfo.Code is.
	Code string
	// Err is the error the call returns, nil on success.
	Err error
}

// WithObserver adds an Observer to the Client. Given several times, the
// observers compose in the order given: each start event (CallStart,
// AttemptStart) runs them first to last, each feeding its context to the
// next, and each end event (AttemptEnd, CallEnd) runs them last to first,
// so that the first observer's span encloses the others', as nested
// middleware would. RetryWait runs them first to last.
func WithObserver(o Observer) Option {
	return func(c *clientConfig) error {
		if o == nil {
			return errNilObserver
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// observers is the Client's Observer: the merchant's, composed as
// WithObserver says, each hook's panic recovered and logged once, so that a
// bug in telemetry cannot turn a created payout into a panic.
type observers struct {
	os     []Observer
	logger *slog.Logger // the Client's, or slog.Default() without one
	once   *sync.Once
}

// each runs f on every observer, last to first when reverse.
func (s observers) each(hook string, reverse bool, f func(Observer)) {
	for i := range s.os {
		if reverse {
			i = len(s.os) - 1 - i
		}
		s.guard(hook, s.os[i], f)
	}
}

func (s observers) guard(hook string, o Observer, f func(Observer)) {
	defer func() {
		if v := recover(); v != nil {
			s.once.Do(func() {
				s.logger.Error("paykit: Observer."+hook+" panicked; calls go on without that hook's work (logged once)",
					slog.String("panic", mask.Text(truncate(fmt.Sprint(v), 200))))
			})
		}
	}()
	f(o)
}

func (s observers) CallStart(ctx context.Context, call *CallInfo) context.Context {
	s.each("CallStart", false, func(o Observer) {
		if got := o.CallStart(ctx, call); got != nil {
			ctx = got
		}
	})
	return ctx
}

func (s observers) AttemptStart(ctx context.Context, a *AttemptInfo) context.Context {
	s.each("AttemptStart", false, func(o Observer) {
		if got := o.AttemptStart(ctx, a); got != nil {
			ctx = got
		}
	})
	return ctx
}

func (s observers) AttemptEnd(ctx context.Context, a *AttemptInfo) {
	a.Code = observedCode(a.Code)
	s.each("AttemptEnd", true, func(o Observer) { o.AttemptEnd(ctx, a) })
}

func (s observers) RetryWait(ctx context.Context, w *RetryInfo) {
	s.each("RetryWait", false, func(o Observer) { o.RetryWait(ctx, w) })
}

func (s observers) CallEnd(ctx context.Context, end *CallEndInfo) {
	end.Code = observedCode(end.Code)
	s.each("CallEnd", true, func(o Observer) { o.CallEnd(ctx, end) })
}

var errNilObserver = errors.New("paykit: WithObserver(nil)")

// otherCode stands in, for an Observer, for an error code outside the
// spec's table and sandboxCodes.
const otherCode = "OTHER"

// sandboxCodes are the codes outside the spec's table that the sandbox
// answers (openapi.yaml documents them), and the SDK's own stand-in for a
// code not shaped like one: an Observer sees them as they are.
var sandboxCodes = []string{invalidCode, spec.CodeAUTH001, spec.CodeSandboxBusy, spec.CodeSandboxStore}

// observedCode is the error code an Observer sees: one of a fixed, small
// set (the spec's codes, sandboxCodes, otherCode), because observers use
// it as a metric label.
func observedCode(code string) string {
	if code == "" || spec.IsCode(code) || slices.Contains(sandboxCodes, code) {
		return code
	}
	return otherCode
}

// callInfo describes a call of op for the Observer.
func (c *Client) callInfo(op *operation) *CallInfo {
	port, _ := strconv.Atoi(c.base.Port())
	if port == 0 {
		port = 443
		if c.base.Scheme == "http" {
			port = 80
		}
	}
	return &CallInfo{Operation: op.name, Method: op.method, Route: op.route, Scheme: c.base.Scheme,
		Host: c.base.Hostname(), Port: port, BasePath: c.basePath, Start: time.Now()}
}

// endCall tells the Observer how the call ended.
func (c *Client) endCall(ctx context.Context, k *call, res any, err error) {
	end := &CallEndInfo{Call: k.info, Attempts: len(k.log), Duration: time.Since(k.info.Start), Outcome: outcomeOf(res, err), Err: err}
	if a := k.last(); a != nil {
		end.StatusCode, end.Code = a.status, a.code
	}
	c.obs.CallEnd(ctx, end)
}

// outcomeOf classifies a call's end for the Observer.
func outcomeOf(res any, err error) Outcome {
	var apiErr *Error
	var answer *answerError
	switch {
	case err == nil:
		if r, ok := res.(interface{ reconciled() *bool }); ok && *r.reconciled() {
			return OutcomeReconciled
		}
		return OutcomeSuccess
	case errors.Is(err, ErrUnknownOutcome):
		return OutcomeUnknownOutcome
	case errors.As(err, &apiErr):
		return OutcomeBusinessError
	case errors.As(err, &answer):
		return OutcomeInvalidAnswer
	}
	return OutcomeTransportError
}
