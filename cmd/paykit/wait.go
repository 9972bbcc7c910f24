package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// waitCmd is the SDK's waiters (Client.WaitPayment, Client.WaitPayout):
// their settled statuses, growing pauses and Retry-After handling, with no
// loop of the CLI's own.
func waitCmd(a *app) *cobra.Command {
	var minI, maxI time.Duration
	cmd := &cobra.Command{
		Use:   "wait (payment|payout) ID",
		Short: "Block until a payment or payout settles (for scripts and incident work)",
		Long: "wait polls the resource until it reaches a settled status, then prints it and exits 0.\n" +
			"A payment settles in COMPLETED, CANCELLED or CANCELLED_APPEAL; a payout in completed,\n" +
			"failed or cancelled. It waits as long as it takes unless --timeout is given; when that\n" +
			"passes first, the last state read is printed and it exits 1.",
		Example:   "  paykit wait payout 9d2a... --timeout 30m\n  paykit wait payment 3f0c... -o json | jq .status",
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"payment", "payout"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "payment" && args[0] != "payout" {
				return usagef("wait takes payment or payout, not %q", args[0])
			}
			if minI < 0 || maxI < 0 || (maxI > 0 && minI > maxI) {
				return usagef("--interval must be positive and at most --max-interval")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			o := paykit.WaitOptions{MinInterval: minI, MaxInterval: maxI}
			if args[0] == "payment" {
				p, err := c.WaitPayment(ctx, args[1], o)
				if p != nil {
					if perr := a.printRecord(a.cap.last(), paymentRecord(a, p)); perr != nil {
						return perr
					}
				}
				return waitErr(err)
			}
			p, err := c.WaitPayout(ctx, args[1], o)
			if p != nil {
				if perr := a.printRecord(a.cap.last(), payoutRecord(a, p)); perr != nil {
					return perr
				}
			}
			return waitErr(err)
		},
	}
	cmd.Flags().DurationVar(&minI, "interval", 0, "first wait between reads (default: the SDK's)")
	cmd.Flags().DurationVar(&maxI, "max-interval", 0, "longest wait between reads (default: the SDK's)")
	return cmd
}

func waitErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("not settled within --timeout: %w", err)
	}
	return err
}
