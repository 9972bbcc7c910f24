package sandbox

import (
	"context"
	"fmt"
	"time"
)

// Controller is the sandbox's controls and its state, as a test drives
// them: a *Remote (a sandbox in another process, a container, a team's
// staging sandbox) and the in-process Server's Controller() both implement
// it, so one test body runs against either. A refused control matches
// ErrNotFound, ErrWrongState or ErrInvalidArgument with errors.Is, and a
// sandbox whose store failed ErrStore through the Server (a Remote sees
// its 503 as a *ControlError).
type Controller interface {
	// VerifyPayment plays the verification of a PROCESSING payment:
	// OutcomeCompleted or OutcomeCancelled.
	VerifyPayment(ctx context.Context, id, outcome string) error
	// ReviewDispute plays the review of a disputed payment:
	// OutcomeApproved or OutcomeRejected.
	ReviewDispute(ctx context.Context, id, outcome string) error
	// SetPayoutStatus moves a payout to processing, completed, failed or
	// cancelled.
	SetPayoutStatus(ctx context.Context, id, status string) error
	// SetWithdrawalStatus moves a withdrawal to processing, completed
	// (with txHash, or a generated one when empty) or failed.
	SetWithdrawalStatus(ctx context.Context, id, status, txHash string) error
	// Advance moves the sandbox clock forward by d, a whole number of
	// seconds, and returns the new time.
	Advance(ctx context.Context, d time.Duration) (time.Time, error)
	// InjectFault installs a fault (see Fault).
	InjectFault(ctx context.Context, f Fault) error
	// Reset puts the sandbox back to its starting state.
	Reset(ctx context.Context) error
	// FlushWebhooks waits until every webhook queued so far has been
	// delivered or given up on, or ctx ends.
	FlushWebhooks(ctx context.Context) error
	// State returns the balances and resource counts.
	State(ctx context.Context) (State, error)
}

var (
	_ Controller = (*Remote)(nil)
	_ Controller = localController{}
)

// Controller returns the Server's controls as a Controller, for a test
// body written once for an in-process and a remote sandbox. The Server's
// own methods (without a context) stay what Go tests call directly.
func (s *Server) Controller() Controller { return localController{s} }

// localController is the in-process Controller: the Server's methods, with
// the context checked before each and the refusals a Remote gets before
// any request (an Advance of a negative or fractional number of seconds)
// refused alike.
type localController struct{ s *Server }

func (c localController) VerifyPayment(ctx context.Context, id, outcome string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.s.VerifyPayment(id, outcome)
}

func (c localController) ReviewDispute(ctx context.Context, id, outcome string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.s.ReviewDispute(id, outcome)
}

func (c localController) SetPayoutStatus(ctx context.Context, id, status string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.s.SetPayoutStatus(id, status)
}

func (c localController) SetWithdrawalStatus(ctx context.Context, id, status, txHash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.s.SetWithdrawalStatus(id, status, txHash)
}

func (c localController) Advance(ctx context.Context, d time.Duration) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	if err := checkAdvance(d); err != nil {
		return time.Time{}, err
	}
	now, err := c.s.svc.Advance(d)
	return now, goError(err)
}

func (c localController) InjectFault(ctx context.Context, f Fault) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.s.InjectFault(f)
}

func (c localController) Reset(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return goError(c.s.svc.Reset())
}

func (c localController) FlushWebhooks(ctx context.Context) error { return c.s.FlushWebhooks(ctx) }

func (c localController) State(ctx context.Context) (State, error) {
	if err := ctx.Err(); err != nil {
		return State{}, err
	}
	st := c.s.State()
	if err := c.s.svc.StoreFailed(); err != nil {
		return State{}, err
	}
	return st, nil
}

// checkAdvance refuses, before any request, a d the clock control cannot
// carry: it counts whole seconds forward. The Remote and the in-process
// Controller refuse alike.
func checkAdvance(d time.Duration) error {
	if d < 0 || d%time.Second != 0 {
		return fmt.Errorf("sandbox: Advance(%v): %w: the clock moves forward by whole seconds", d, ErrInvalidArgument)
	}
	return nil
}
