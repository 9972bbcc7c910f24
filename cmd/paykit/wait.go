package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// Exit codes of wait --exit-status, documented in its help and the
// package comment.
const (
	// exitSettledUnsuccessful: the resource settled, but not as hoped
	// (a payment CANCELLED or CANCELLED_APPEAL, a payout or withdrawal
	// failed or cancelled).
	exitSettledUnsuccessful = 5
	// exitNotSettled: --timeout ran out before the resource settled.
	exitNotSettled = 6
)

// exitError ends a command with a code of its own after its output was
// printed.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// WaitOptions are wait's flags and arguments.
type WaitOptions struct {
	app *app
	// Kind is payment, payout or withdrawal.
	Kind      string
	ID, ExtID string
	// Interval is the first pause between reads, MaxInterval the longest;
	// Interval alone fixes the pause in every state.
	Interval, MaxInterval time.Duration
	// ExitStatus makes an unsuccessful end exit 5 and a --timeout 6.
	ExitStatus bool
}

const waitLong = `wait reads the resource until it settles, then prints it and exits 0.
A payment settles in COMPLETED, CANCELLED or CANCELLED_APPEAL; a payout in completed,
failed or cancelled; a withdrawal in completed or failed. It waits as long as it takes
unless --timeout is given; when that passes first, the last state read is printed and
it exits 1. --interval sets the pause between reads in every state (a pending payment
included); with --max-interval the pause grows from --interval up to it.

With --exit-status the exit code tells how it ended:
  0  settled successfully (COMPLETED, completed)
  5  settled unsuccessfully (CANCELLED, CANCELLED_APPEAL, failed, cancelled)
  6  --timeout ran out before it settled

On a terminal, stderr shows one status line that is updated at each read.`

func waitCmd(a *app) *cobra.Command { return newCmdWait(a, nil) }

func newCmdWait(a *app, runF func(context.Context, *WaitOptions) error) *cobra.Command {
	opts := &WaitOptions{app: a}
	cmd := &cobra.Command{
		Use:   "wait (payment|payout|withdrawal) (ID | --ext-id EXT_ID)",
		Short: "Block until a payment, payout or withdrawal settles (for scripts and incident work)",
		Long:  waitLong,
		Example: "  paykit wait payout 9d2a... --timeout 30m\n  paykit wait payment --ext-id order-1001 --exit-status --interval 5s\n" +
			"  paykit wait payment 3f0c... -o json | jq .status",
		Args:      cobra.RangeArgs(1, 2),
		ValidArgs: []string{"payment", "payout", "withdrawal"},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Kind = args[0]
			switch opts.Kind {
			case "payment", "payout", "withdrawal":
			default:
				return usagef("wait takes payment, payout or withdrawal, not %q", args[0])
			}
			if err := idOrExtID(opts.Kind, args[1:], opts.ExtID, &opts.ID); err != nil {
				return err
			}
			if opts.Kind == "withdrawal" && opts.ExtID != "" {
				return usagef("--ext-id: a withdrawal has no ext_id; give its id")
			}
			if opts.Interval < 0 || opts.MaxInterval < 0 || (opts.MaxInterval > 0 && opts.Interval > opts.MaxInterval) {
				return usagef("--interval must be positive and at most --max-interval")
			}
			return runBounded(a, cmd, opts, runF, runWait)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ExtID, "ext-id", "", "your order or payout id instead of the service's (payment and payout)")
	f.DurationVar(&opts.Interval, "interval", 0, "pause between reads, in every state (default: the SDK's, 1s growing to 30s)")
	f.DurationVar(&opts.MaxInterval, "max-interval", 0, "let the pause grow from --interval up to this")
	f.BoolVar(&opts.ExitStatus, "exit-status", false, "exit 5 when it settles unsuccessfully, 6 when --timeout runs out")
	return cmd
}

func runWait(ctx context.Context, opts *WaitOptions) error {
	a := opts.app
	c, err := a.client()
	if err != nil {
		return err
	}
	id := opts.ID
	if opts.ExtID != "" {
		if opts.Kind == "payment" {
			id, err = paymentRef{ExtID: opts.ExtID}.resolve(ctx, c)
		} else {
			var p *paykit.Payout
			if p, err = c.GetPayoutByExtID(ctx, opts.ExtID); err == nil {
				id = p.ID
			} else {
				err = fmt.Errorf("payout with ext_id %s: %w", shellQuote(opts.ExtID), err)
			}
		}
		if err != nil {
			return err
		}
	}
	o := paykit.WaitOptions{MinInterval: opts.Interval, MaxInterval: opts.MaxInterval}
	if o.MinInterval > 0 && o.MaxInterval == 0 {
		o.MaxInterval = o.MinInterval
	}
	line := a.statusLine(opts.Kind, id)
	defer line.clear()
	var end waitEnd
	switch opts.Kind {
	case "payment":
		p, werr := c.WaitPayment(ctx, id, o)
		end, err = waited(p, werr, paykit.PaymentStatusCompleted, func(p *paykit.Payment) (record, paykit.PaymentStatus) { return paymentRecord(a, p), p.Status })
	case "payout":
		p, werr := c.WaitPayout(ctx, id, o)
		end, err = waited(p, werr, paykit.PayoutStatusCompleted, func(p *paykit.Payout) (record, paykit.PayoutStatus) { return payoutRecord(a, p), p.Status })
	default:
		w, werr := waitWithdrawal(ctx, c, id, o)
		end, err = waited(w, werr, paykit.WithdrawalStatusCompleted, func(w *paykit.Withdrawal) (record, paykit.WithdrawalStatus) { return withdrawalRecord(a, w), w.Status })
	}
	line.clear()
	if end.got {
		if perr := a.printRecord(a.cap.last(), end.rec); perr != nil {
			return perr
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) && opts.ExitStatus:
		return &exitError{code: exitNotSettled, msg: fmt.Sprintf("%s %s not settled within --timeout", opts.Kind, id)}
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %s not settled within --timeout", opts.Kind, id)
	case err != nil:
		return err
	case opts.ExitStatus && !end.ok:
		return &exitError{code: exitSettledUnsuccessful, msg: fmt.Sprintf("%s %s settled as %s", opts.Kind, id, end.status)}
	}
	return nil
}

// waitEnd is what wait prints and judges of the last state read.
type waitEnd struct {
	rec    record
	status string
	// got: there is a state to print; ok: it is the successful one.
	got, ok bool
}

// waited is waitEnd of what a waiter returned: the last state read (nil
// when none), with its record and status from show.
func waited[T any, S ~string](v *T, err error, success S, show func(*T) (record, S)) (waitEnd, error) {
	if v == nil {
		return waitEnd{}, err
	}
	rec, status := show(v)
	return waitEnd{rec: rec, status: string(status), got: true, ok: status == success}, err
}

// withdrawalSettled are the withdrawal statuses wait stops at.
var withdrawalSettled = []paykit.WithdrawalStatus{paykit.WithdrawalStatusCompleted, paykit.WithdrawalStatusFailed}

// waitWithdrawal is the SDK's waiters' loop for a withdrawal, which the
// SDK has none of: read, stop when settled or on a refusal that will not
// change, pause (growing by half up to the maximum), honour ctx. A
// status this CLI does not know is waited on; bound it with --timeout.
func waitWithdrawal(ctx context.Context, c *paykit.Client, id string, o paykit.WaitOptions) (*paykit.Withdrawal, error) {
	interval, maxI := o.MinInterval, o.MaxInterval
	if interval <= 0 {
		interval = paykit.DefaultWaitMinInterval
	}
	if maxI <= 0 {
		maxI = max(paykit.DefaultWaitMaxInterval, interval)
	}
	var last *paykit.Withdrawal
	for {
		w, err := c.GetWithdrawal(ctx, id)
		switch {
		case err == nil:
			last = w
			for _, s := range withdrawalSettled {
				if w.Status == s {
					return w, nil
				}
			}
		case ctx.Err() != nil:
			return last, ctx.Err()
		case !transient(err):
			return last, err
		}
		pause := jittered(interval)
		interval = grow(interval, maxI)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
	}
}

// grow is the interval after an unsettled read, as the SDK's waiters grow
// theirs: half as long again, by at least a nanosecond (half of 1ns is 0),
// never past ceil and never overflowing.
func grow(d, ceil time.Duration) time.Duration {
	step := max(d/2, 1)
	return min(d, ceil-step) + step
}

// jittered is the pause d plus up to a tenth, to spread waiters that
// started together; the sum stops at the largest Duration rather than
// wrap to a negative pause (a spin).
func jittered(d time.Duration) time.Duration {
	return d + min(rand.N(d/10+1), math.MaxInt64-d)
}

// transient: no answer, a server error or a rate limit may not recur; a
// refusal (not found, invalid id) will.
func transient(err error) bool {
	var apiErr *paykit.Error
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatus >= 500 || apiErr.HTTPStatus == 429
	}
	return !errors.Is(err, paykit.ErrInvalidParameters)
}

// statusLine is wait's one line on a terminal's stderr: the status of
// each read, rewritten in place. Off a terminal it prints nothing, so a
// script's stderr holds only what went wrong.
type statusLine struct {
	a     *app
	on    bool
	shown bool
}

func (a *app) statusLine(kind, id string) *statusLine {
	l := &statusLine{a: a, on: a.env.isTerminal(a.env.stderr)}
	if !l.on {
		return l
	}
	start, reads := time.Now(), 0
	a.cap.setObserver(func(body []byte) {
		var v struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(body, &v) != nil || v.Status == "" {
			return
		}
		reads++
		fmt.Fprintf(a.env.stderr, "\r\x1b[K%s %s: %s (read %d, %s)", kind, id, safeCell(v.Status), reads, time.Since(start).Round(time.Second))
		l.shown = true
	})
	return l
}

// clear removes the line, so that what follows starts on a clean one.
func (l *statusLine) clear() {
	if l.on {
		l.a.cap.setObserver(nil)
	}
	if l.shown {
		fmt.Fprint(l.a.env.stderr, "\r\x1b[K")
		l.shown = false
	}
}
