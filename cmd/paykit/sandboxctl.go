package main

// The sandbox's controls as commands (paykit sandbox verify, payout,
// advance, ...), through sandbox.Remote: following a payment to completion
// in the sandbox needs no curl. They go to the base URL of the profile in
// use (--profile sandbox for the local one) with the control token of
// remote mode from PAYKIT_SANDBOX_CONTROL_TOKEN, the variable the sandbox
// itself reads. After a move, the resource is read back through the SDK
// and printed like get prints it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// SandboxControlOptions are the control commands' arguments.
type SandboxControlOptions struct {
	app *app
	// Control is the command's name (verify, review, payout, ...).
	Control string
	// Args are its arguments (an id and an outcome or status, a duration).
	Args []string
	// TxHash is withdrawal's --tx-hash.
	TxHash string
	// Fault is fault's flags.
	Fault sandbox.Fault
}

// remote is the sandbox at the profile's base URL.
func (a *app) remote() (*sandbox.Remote, error) {
	cr, err := a.credentials()
	if err != nil {
		return nil, err
	}
	a.cred = cr
	var opts []sandbox.RemoteOption
	if t := a.env.getenv(controlTokenEnv); t != "" {
		opts = append(opts, sandbox.WithControlToken(t))
	}
	r, err := sandbox.NewRemote(cr.baseURL, opts...)
	if err != nil {
		return nil, &credentialsError{msg: fmt.Sprintf("credentials (%s): the base URL is not an http(s) URL", cr.source())}
	}
	return r, nil
}

// sandboxControls adds the control commands to paykit sandbox.
func sandboxControls(a *app, sb *cobra.Command) {
	ctl := func(use, short, example string, args cobra.PositionalArgs, valid []string) (*cobra.Command, *SandboxControlOptions) {
		opts := &SandboxControlOptions{app: a}
		cmd := &cobra.Command{Use: use, Short: short, Example: example, Args: args, ValidArgs: valid,
			RunE: func(cmd *cobra.Command, args []string) error {
				opts.Control, opts.Args = cmd.Name(), args
				return runBounded(a, cmd, opts, nil, runSandboxControl)
			}}
		return cmd, opts
	}
	verify, _ := ctl("verify PAYMENT_ID completed|cancelled", "Play the service's verification of a PROCESSING payment",
		"  paykit --profile sandbox sandbox verify 3f0c... completed", cobra.ExactArgs(2), nil)
	review, _ := ctl("review PAYMENT_ID approved|rejected", "Play the service's review of a disputed payment",
		"  paykit --profile sandbox sandbox review 3f0c... approved", cobra.ExactArgs(2), nil)
	payout, _ := ctl("payout PAYOUT_ID processing|completed|failed|cancelled", "Move a payout to a status",
		"  paykit --profile sandbox sandbox payout 9d2a... completed", cobra.ExactArgs(2), nil)
	withdrawal, wOpts := ctl("withdrawal WITHDRAWAL_ID processing|completed|failed [--tx-hash H]", "Move a withdrawal to a status",
		"  paykit --profile sandbox sandbox withdrawal 7b1e... completed", cobra.ExactArgs(2), nil)
	withdrawal.Flags().StringVar(&wOpts.TxHash, "tx-hash", "", "the chain's transaction hash for completed (default: a generated one)")
	advance, _ := ctl("advance DURATION", "Move the sandbox clock forward (whole seconds), expiring what is due",
		"  paykit --profile sandbox sandbox advance 20m", cobra.ExactArgs(1), nil)
	fault, fOpts := ctl("fault --path PATH --mode MODE [flags]", "Make the next matching requests fail (error_before, drop_after, delay, retry_after)",
		"  paykit --profile sandbox sandbox fault --method POST --path /v1/payouts --mode drop_after", cobra.NoArgs, nil)
	ff := fault.Flags()
	ff.StringVar(&fOpts.Fault.Method, "method", "", "HTTP method to match (default: any)")
	ff.StringVar(&fOpts.Fault.Path, "path", "", "escaped path to match; {name} matches any one segment (required)")
	ff.StringVar(&fOpts.Fault.Mode, "mode", "", "error_before, drop_after, delay or retry_after (required)")
	ff.IntVar(&fOpts.Fault.Count, "count", 0, "how many matching requests (default 1)")
	ff.IntVar(&fOpts.Fault.Status, "status", 0, "HTTP status of an error_before answer (default 500)")
	ff.StringVar(&fOpts.Fault.Code, "code", "", "error code of an error_before or retry_after answer")
	ff.IntVar(&fOpts.Fault.DelayMS, "delay-ms", 0, "how long a delay fault stalls, in milliseconds")
	ff.IntVar(&fOpts.Fault.RetryAfterS, "retry-after", 0, "Retry-After of a retry_after answer, in seconds (default 1)")
	_ = fault.MarkFlagRequired("path")
	_ = fault.MarkFlagRequired("mode")
	_ = fault.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{sandbox.FaultErrorBefore, sandbox.FaultDropAfter, sandbox.FaultDelay, sandbox.FaultRetryAfter}, cobra.ShellCompDirectiveNoFileComp))
	reset, _ := ctl("reset", "Put the sandbox back to its starting state (every resource gone)",
		"  paykit --profile sandbox sandbox reset", cobra.NoArgs, nil)
	webhooks := &cobra.Command{Use: "webhooks", Short: "List the webhook deliveries, or resend one",
		Example: "  paykit --profile sandbox sandbox webhooks list\n  paykit --profile sandbox sandbox webhooks resend d_12"}
	wlist, _ := ctl("list", "List the webhook deliveries, newest first", "  paykit --profile sandbox sandbox webhooks list -o json", cobra.NoArgs, nil)
	wresend, _ := ctl("resend DELIVERY_ID", "Send a logged delivery again", "  paykit --profile sandbox sandbox webhooks resend d_12", cobra.ExactArgs(1), nil)
	webhooks.AddCommand(wlist, wresend)
	verify.ValidArgsFunction = secondArg(sandbox.OutcomeCompleted, sandbox.OutcomeCancelled)
	review.ValidArgsFunction = secondArg(sandbox.OutcomeApproved, sandbox.OutcomeRejected)
	payout.ValidArgsFunction = secondArg("processing", "completed", "failed", "cancelled")
	withdrawal.ValidArgsFunction = secondArg("processing", "completed", "failed")
	sb.AddCommand(verify, review, payout, withdrawal, advance, fault, reset, webhooks)
}

// secondArg completes the second argument (an outcome or a status).
func secondArg(words ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 1 {
			return words, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

func runSandboxControl(ctx context.Context, opts *SandboxControlOptions) error {
	a := opts.app
	r, err := a.remote()
	if err != nil {
		return err
	}
	return a.controlTokenError(runControl(ctx, a, r, opts))
}

// controlTokenError makes the sandbox's refusal of the control token
// (401 SANDBOX_UNAUTHORIZED, a sandbox in remote mode) a credentials
// error, exit 4 as the service's refusal of the API key, naming the
// variable the token comes from: the profile's credentials were not what
// was refused. There is no config-file key for the token: it opens every
// merchant's money of a shared sandbox, and stays in the environment
// (a secret manager's) as the sandbox's own -control-token does.
func (a *app) controlTokenError(err error) error {
	var ce *sandbox.ControlError
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusUnauthorized {
		return err
	}
	host := a.target()
	t := a.env.getenv(controlTokenEnv)
	if t == "" {
		return &credentialsError{msg: fmt.Sprintf("the sandbox on %s wants a control token (%s, HTTP %d) and none was sent: "+
			"set %s to the -control-token the sandbox was started with", host, ce.Code, ce.StatusCode, controlTokenEnv)}
	}
	return &credentialsError{msg: fmt.Sprintf("the sandbox on %s refused the control token in %s, %s (%s, HTTP %d): "+
		"set it to the -control-token the sandbox was started with", host, controlTokenEnv, fingerprint(t), ce.Code, ce.StatusCode)}
}

// controlTokenEnv holds the control token of a sandbox in remote mode,
// the variable the sandbox itself reads.
const controlTokenEnv = "PAYKIT_SANDBOX_CONTROL_TOKEN"

// runControl runs one control on r and prints its result.
func runControl(ctx context.Context, a *app, r *sandbox.Remote, opts *SandboxControlOptions) error {
	args := opts.Args
	switch opts.Control {
	case "verify":
		if err := r.VerifyPayment(ctx, args[0], args[1]); err != nil {
			return err
		}
		return a.showPayment(ctx, args[0])
	case "review":
		if err := r.ReviewDispute(ctx, args[0], args[1]); err != nil {
			return err
		}
		return a.showPayment(ctx, args[0])
	case "payout":
		if err := r.SetPayoutStatus(ctx, args[0], args[1]); err != nil {
			return err
		}
		return show(ctx, a, func(c *paykit.Client, ctx context.Context) (*paykit.Payout, error) { return c.GetPayout(ctx, args[0]) }, payoutRecord)
	case "withdrawal":
		if err := r.SetWithdrawalStatus(ctx, args[0], args[1], opts.TxHash); err != nil {
			return err
		}
		return show(ctx, a, func(c *paykit.Client, ctx context.Context) (*paykit.Withdrawal, error) {
			return c.GetWithdrawal(ctx, args[0])
		}, withdrawalRecord)
	case "advance":
		d, err := time.ParseDuration(args[0])
		if err != nil || d <= 0 || d%time.Second != 0 {
			return usagef("advance takes a positive whole number of seconds, such as 90s, 20m or 24h, not %q", args[0])
		}
		now, err := r.Advance(ctx, d)
		if err != nil {
			return err
		}
		return a.printSimple(map[string]string{"clock": a.when(now)}, "clock")
	case "fault":
		if err := r.InjectFault(ctx, opts.Fault); err != nil {
			return err
		}
		count := max(1, opts.Fault.Count)
		return a.printSimple(map[string]string{"fault": opts.Fault.Mode, "path": opts.Fault.Path, "count": strconv.Itoa(count)}, "fault", "path", "count")
	case "reset":
		if err := r.Reset(ctx); err != nil {
			return err
		}
		return a.printSimple(map[string]string{"reset": "done"}, "reset")
	case "list":
		ds, err := r.Deliveries(ctx)
		if err != nil {
			return err
		}
		return a.printDeliveries(ds)
	case "resend":
		d, err := r.ResendWebhook(ctx, args[0])
		if err != nil {
			return err
		}
		return a.printDeliveries([]sandbox.Delivery{d})
	}
	return fmt.Errorf("no sandbox control %q", opts.Control)
}

// showPayment reads a payment back after a control moved it.
func (a *app) showPayment(ctx context.Context, id string) error {
	return show(ctx, a, func(c *paykit.Client, ctx context.Context) (*paykit.Payment, error) { return c.GetPayment(ctx, id) }, paymentRecord)
}

// printSimple prints labelled values that no API answer holds.
func (a *app) printSimple(m map[string]string, keys ...string) error {
	var r record
	obj := map[string]string{}
	for _, k := range keys {
		r.add(k, m[k])
		obj[k] = m[k]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return a.printRecord(b, r)
}

var deliveryHeader = []string{"id", "resource", "resource_id", "ext_id", "resource_status", "state", "attempts", "last_status", "created_at", "resend_of"}

// printDeliveries prints the webhook log: a table or csv row a delivery,
// or the sandbox's JSON.
func (a *app) printDeliveries(ds []sandbox.Delivery) error {
	l := list{header: deliveryHeader}
	for _, d := range ds {
		last := ""
		if n := len(d.Attempts); n > 0 {
			if at := d.Attempts[n-1]; at.StatusCode != 0 {
				last = strconv.Itoa(at.StatusCode)
			} else {
				last = "no answer"
			}
		}
		l.rows = append(l.rows, []string{d.ID, d.Resource, d.ResourceID, d.ExtID, d.ResourceStatus, d.State, strconv.Itoa(len(d.Attempts)),
			last, a.when(d.CreatedAt), d.ResendOf})
	}
	if ds == nil {
		ds = []sandbox.Delivery{}
	}
	b, err := json.Marshal(ds)
	if err != nil {
		return err
	}
	return a.printList(b, l)
}
