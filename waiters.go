package paykit

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"
)

// WaitOptions tune WaitPayment and WaitPayout. The zero value uses the
// defaults below.
type WaitOptions struct {
	// MinInterval is the first pause between reads; it grows by half (at
	// least a nanosecond, so any positive interval grows) after each read
	// that finds the resource unsettled, up to MaxInterval. Zero means
	// DefaultWaitMinInterval.
	MinInterval time.Duration
	// MaxInterval caps the pause between reads. Zero means
	// DefaultWaitMaxInterval. A Retry-After the service sends with a
	// refusal lengthens a pause beyond it, but no pause is longer than a
	// day, whatever the header or the options say.
	MaxInterval time.Duration
}

// Defaults of WaitOptions.
const (
	DefaultWaitMinInterval = time.Second
	DefaultWaitMaxInterval = 30 * time.Second
)

// WaitPayment reads the payment with the given id until it settles, that
// is, leaves PENDING, PROCESSING and DISPUTE (COMPLETED, CANCELLED,
// CANCELLED_APPEAL, or a status this SDK does not know, which it cannot
// call unsettled), or until ctx ends. A read without a status (null or
// missing) says nothing about the payment's state and is read again. It
// is the safety net for a lost webhook: a merchant who has not heard about
// a payment can wait for it.
//
// It returns the settled payment, or, when ctx ends first, the last
// payment it read (nil if none) with ctx's error. Reads are GetPayment
// calls, each with its own retries; one that still fails for a reason a
// later read may not share (a lost connection, a 5xx, a rate limit) is
// tried again at the next pause, honouring a Retry-After; any other error
// (ErrPaymentNotFound, ErrUnauthorized, an answer about another payment)
// is returned at once with the last read.
//
// A PENDING payment only moves when its payer acts or it expires, so it
// is read at MaxInterval, and once more right after its ValidUntil, when
// the service may have expired it.
func (c *Client) WaitPayment(ctx context.Context, id string, o WaitOptions) (*Payment, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return wait(ctx, c, o, func(ctx context.Context) (*Payment, error) { return c.GetPayment(ctx, id) },
		func(p *Payment) (bool, time.Time) {
			switch p.Status {
			case PaymentStatusPending:
				return false, p.ValidUntil
			case PaymentStatusProcessing, PaymentStatusDispute, "":
				return false, time.Time{}
			}
			return true, time.Time{}
		})
}

// payoutSettled are the payout statuses WaitPayout stops at.
var payoutSettled = []PayoutStatus{PayoutStatusCompleted, PayoutStatusFailed, PayoutStatusCancelled}

// WaitPayout reads the payout with the given id until it reaches
// completed, failed or cancelled, or until ctx ends; see WaitPayment for
// what comes back and which errors end the wait. A status this SDK does not
// know is waited on, since it cannot tell whether it is final: bound the
// wait with ctx.
func (c *Client) WaitPayout(ctx context.Context, id string, o WaitOptions) (*Payout, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return wait(ctx, c, o, func(ctx context.Context) (*Payout, error) { return c.GetPayout(ctx, id) },
		func(p *Payout) (bool, time.Time) { return slices.Contains(payoutSettled, p.Status), time.Time{} })
}

// wait is the waiters' loop: read, stop if settled, pause, honour ctx.
func wait[T any](ctx context.Context, c *Client, o WaitOptions, read func(context.Context) (*T, error),
	settled func(*T) (bool, time.Time)) (*T, error) {
	if ctx == nil {
		return nil, errors.New("paykit: nil context")
	}
	minI, maxI := o.MinInterval, o.MaxInterval
	if minI <= 0 {
		minI = DefaultWaitMinInterval
	}
	if maxI <= 0 {
		maxI = max(DefaultWaitMaxInterval, minI)
	}
	maxI = max(maxI, minI)
	var last *T
	interval := minI
	for {
		got, err := read(ctx)
		var pause time.Duration
		switch {
		case err == nil:
			last = got
			done, expires := settled(got)
			if done {
				return got, nil
			}
			pause = nextPause(interval, maxI, expires, c.now())
		case ctx.Err() != nil:
			return last, ctx.Err()
		case !transient(err):
			return last, err
		default:
			pause = interval
			var apiErr *Error
			if errors.As(err, &apiErr) {
				pause = max(pause, apiErr.retryAfter)
			}
		}
		interval = grow(interval, maxI)
		pause = min(pause, maxWaitPause)
		pause += rand.N(pause/10 + 1) // spread waiters that started together
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
	}
}

// maxWaitPause bounds every pause of a waiter, so that the jitter added to
// it cannot overflow into a negative pause (a spin).
const maxWaitPause = 24 * time.Hour

// grow is the interval after an unsettled read: half as long again, by at
// least a nanosecond (half of 1ns is 0), never past ceil and never
// overflowing.
func grow(d, ceil time.Duration) time.Duration {
	step := max(d/2, 1)
	if d >= ceil-step {
		return ceil
	}
	return d + step
}

// nextPause is the pause after an unsettled read: for a PENDING payment
// (expires set) maxI or until just after its expiry, then the interval.
func nextPause(interval, maxI time.Duration, expires, now time.Time) time.Duration {
	if expires.IsZero() {
		return interval
	}
	until := expires.Sub(now) + time.Second
	if until <= time.Second {
		return interval
	}
	return min(until, maxI)
}

// transient: no answer, a server error or a rate limit may not recur.
func transient(err error) bool {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatus >= 500 || apiErr.HTTPStatus == 429
	}
	var answer *answerError
	var v *ValidationError
	return !errors.As(err, &answer) && !errors.As(err, &v)
}
