//go:build !paykit_wait

package main

// STAND-IN: a tiny local poller with the signatures of DESIGN.md's
// Client.WaitPayment and Client.WaitPayout, until they land in the root
// package. At merge: delete this file and drop the build tag of
// wait_sdk.go.

import (
	"context"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
)

type waitOptions struct{ MinInterval, MaxInterval time.Duration }

func waitPayment(ctx context.Context, c *paykit.Client, id string, o waitOptions) (*paykit.Payment, error) {
	return poll(ctx, o, func() (*paykit.Payment, bool, error) {
		p, err := c.GetPayment(ctx, id)
		if err != nil {
			return nil, false, err
		}
		switch p.Status {
		case paykit.PaymentStatusCompleted, paykit.PaymentStatusCancelled, paykit.PaymentStatusCancelledAppeal:
			return p, true, nil
		}
		return p, false, nil
	})
}

func waitPayout(ctx context.Context, c *paykit.Client, id string, o waitOptions) (*paykit.Payout, error) {
	return poll(ctx, o, func() (*paykit.Payout, bool, error) {
		p, err := c.GetPayout(ctx, id)
		if err != nil {
			return nil, false, err
		}
		switch p.Status {
		case paykit.PayoutStatusCompleted, paykit.PayoutStatusFailed, paykit.PayoutStatusCancelled:
			return p, true, nil
		}
		return p, false, nil
	})
}

func poll[T any](ctx context.Context, o waitOptions, read func() (*T, bool, error)) (*T, error) {
	wait, maxWait := o.MinInterval, o.MaxInterval
	if wait <= 0 {
		wait = time.Second
	}
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	var last *T
	for {
		got, done, err := read()
		if got != nil {
			last = got
		}
		if err != nil && ctx.Err() != nil {
			return last, ctx.Err()
		}
		if err != nil {
			return last, err
		}
		if done {
			return got, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}
