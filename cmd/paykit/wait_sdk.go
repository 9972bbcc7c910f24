//go:build paykit_wait

package main

// The SDK's waiters (DESIGN.md, third round). Built with -tags paykit_wait
// until they land on main; then this file loses its build tag and
// wait_standin.go is deleted.

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
