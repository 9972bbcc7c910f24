package main

// paykit wait is the SDK's waiters (Client.WaitPayment, Client.WaitPayout):
// their settled statuses, growing pauses and Retry-After handling.

import (
	"context"

	paykit "github.com/paykit-dev/paykit-go"
)

type waitOptions = paykit.WaitOptions

func waitPayment(ctx context.Context, c *paykit.Client, id string, o waitOptions) (*paykit.Payment, error) {
	return c.WaitPayment(ctx, id, o)
}

func waitPayout(ctx context.Context, c *paykit.Client, id string, o waitOptions) (*paykit.Payout, error) {
	return c.WaitPayout(ctx, id, o)
}
