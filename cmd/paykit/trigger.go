package main

// paykit trigger: one command that makes a notification happen. It
// creates a resource through the API and drives it with the sandbox's
// controls (as paykit sandbox verify, payout, ... do) to a final state, so
// every notification on the way fires: to the notify URL given, and to
// every `paykit listen` of the merchant.
//
// trigger is not a money command (no paykit/money annotation, not in the
// exit-code oracle): it runs only against a sandbox, where no money is
// real. It is marked paykit/sandbox-only instead; TestSandboxOnlyRefusesLive
// holds every such command to refusing a live profile with nothing sent,
// and the oracle's walk refuses a command carrying both marks.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// annSandboxOnly marks a command that acts only on a sandbox and refuses
// a live profile before sending anything.
const annSandboxOnly = "paykit/sandbox-only"

// TriggerOptions are trigger's arguments.
type TriggerOptions struct {
	app *app
	// Name is RESOURCE.STATUS, such as payment.completed.
	Name string
	// List prints the triggers instead.
	List bool
	// NotifyURL and Token are given to the payment or payout created.
	NotifyURL, Token string
}

// triggerStep is one move of a trigger: what it does, in words, and the
// call that does it, which returns the resource's status after it.
type triggerStep struct {
	what string
	do   func(ctx context.Context, t *triggerRun) (string, error)
}

// triggerPlan drives one kind of resource to one final state.
type triggerPlan struct {
	name  string // RESOURCE.STATUS
	kind  string // payment, payout or withdrawal: what is created
	final string // the status it ends in, as the API writes it
	steps []triggerStep
}

// triggerRun is one run of a plan: the clients and the resource made.
type triggerRun struct {
	opts *TriggerOptions
	c    *paykit.Client
	r    *sandbox.Remote
	ext  string
	id   string
}

// Steps shared by the plans.
var (
	createPayment = triggerStep{"create a payment", func(ctx context.Context, t *triggerRun) (string, error) {
		p, err := t.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: t.ext, Amount: decimal.RequireFromString("1000.00"),
			Method: paykit.MethodSBP, NotifyURL: t.opts.NotifyURL, NotificationToken: t.opts.Token})
		if err != nil {
			return "", err
		}
		t.id = p.ID
		return string(p.Status), nil
	}}
	confirmPayment = triggerStep{"confirm it (the payer paid)", func(ctx context.Context, t *triggerRun) (string, error) {
		p, err := t.c.ConfirmPayment(ctx, t.id, nil)
		return paymentStatus(p, err)
	}}
	cancelPayment = triggerStep{"cancel it", func(ctx context.Context, t *triggerRun) (string, error) {
		p, err := t.c.CancelPayment(ctx, t.id)
		return paymentStatus(p, err)
	}}
	openDispute = triggerStep{"open a dispute", func(ctx context.Context, t *triggerRun) (string, error) {
		p, err := t.c.OpenDispute(ctx, t.id, paykit.OpenDisputeParams{ReceiptURL: "https://example.com/receipt.png", Comment: "paykit trigger"})
		return paymentStatus(p, err)
	}}
	createPayout = triggerStep{"create a payout", func(ctx context.Context, t *triggerRun) (string, error) {
		p, err := t.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: t.ext, Amount: decimal.RequireFromString("100.00"),
			Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "Trigger Test", NotifyURL: t.opts.NotifyURL})
		if err != nil {
			return "", err
		}
		t.id = p.ID
		return string(p.Status), nil
	}}
	createWithdrawal = triggerStep{"create a withdrawal of 1 USDT", func(ctx context.Context, t *triggerRun) (string, error) {
		ts, err := t.c.ListTerminals(ctx)
		if err != nil {
			return "", err
		}
		one := decimal.NewFromInt(1)
		i := slices.IndexFunc(ts, func(x paykit.Terminal) bool {
			return x.IsActive && x.Balance.GreaterThanOrEqual(one.Add(x.WithdrawalFee))
		})
		if i < 0 {
			return "", errors.New("no active terminal holds 1 USDT and its fee: top one up (paykit transfers create) first")
		}
		w, err := t.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: ts[i].ID, Amount: one, Address: triggerAddress})
		if err != nil {
			return "", err
		}
		t.id = w.ID
		return string(w.Status), nil
	}}
)

// triggerAddress is the TRC-20 address trigger's withdrawals go to: the
// sandbox sends nothing anywhere.
const triggerAddress = "TXYZpaykitTriggerSandboxAddress123"

func paymentStatus(p *paykit.Payment, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return string(p.Status), nil
}

// verify, review, payoutTo and withdrawalTo are the sandbox's controls
// as steps; each reads the resource back for its status.
func verify(outcome string) triggerStep {
	return triggerStep{"verify it: " + outcome + " (sandbox control)", func(ctx context.Context, t *triggerRun) (string, error) {
		if err := t.r.VerifyPayment(ctx, t.id, outcome); err != nil {
			return "", err
		}
		return t.paymentNow(ctx)
	}}
}

func review(outcome string) triggerStep {
	return triggerStep{"review the dispute: " + outcome + " (sandbox control)", func(ctx context.Context, t *triggerRun) (string, error) {
		if err := t.r.ReviewDispute(ctx, t.id, outcome); err != nil {
			return "", err
		}
		return t.paymentNow(ctx)
	}}
}

func (t *triggerRun) paymentNow(ctx context.Context) (string, error) {
	p, err := t.c.GetPayment(ctx, t.id)
	return paymentStatus(p, err)
}

func payoutTo(status string) triggerStep {
	return triggerStep{"move it to " + status + " (sandbox control)", func(ctx context.Context, t *triggerRun) (string, error) {
		if err := t.r.SetPayoutStatus(ctx, t.id, status); err != nil {
			return "", err
		}
		p, err := t.c.GetPayout(ctx, t.id)
		if err != nil {
			return "", err
		}
		return string(p.Status), nil
	}}
}

func withdrawalTo(status string) triggerStep {
	return triggerStep{"move it to " + status + " (sandbox control)", func(ctx context.Context, t *triggerRun) (string, error) {
		if err := t.r.SetWithdrawalStatus(ctx, t.id, status, ""); err != nil {
			return "", err
		}
		w, err := t.c.GetWithdrawal(ctx, t.id)
		if err != nil {
			return "", err
		}
		return string(w.Status), nil
	}}
}

// triggerPlans are every final state the spec gives payments (disputes
// included), payouts and withdrawals, each with the shortest way there.
// TestTriggerEveryFinalState checks this list against the status enums
// of openapi.yaml and the dispute outcomes, and runs each plan.
var triggerPlans = []triggerPlan{
	{"payment.completed", "payment", string(paykit.PaymentStatusCompleted), []triggerStep{createPayment, confirmPayment, verify(sandbox.OutcomeCompleted)}},
	{"payment.cancelled", "payment", string(paykit.PaymentStatusCancelled), []triggerStep{createPayment, cancelPayment}},
	{"dispute.approved", "payment", string(paykit.PaymentStatusCompleted), []triggerStep{createPayment, cancelPayment, openDispute, review(sandbox.OutcomeApproved)}},
	{"dispute.rejected", "payment", string(paykit.PaymentStatusCancelled), []triggerStep{createPayment, cancelPayment, openDispute, review(sandbox.OutcomeRejected)}},
	{"dispute.cancelled", "payment", string(paykit.PaymentStatusCancelledAppeal), []triggerStep{createPayment, cancelPayment, openDispute,
		{"cancel the dispute", func(ctx context.Context, t *triggerRun) (string, error) {
			p, err := t.c.CancelDispute(ctx, t.id)
			return paymentStatus(p, err)
		}}}},
	{"payout.completed", "payout", string(paykit.PayoutStatusCompleted), []triggerStep{createPayout, payoutTo("processing"), payoutTo("completed")}},
	{"payout.failed", "payout", string(paykit.PayoutStatusFailed), []triggerStep{createPayout, payoutTo("processing"), payoutTo("failed")}},
	{"payout.cancelled", "payout", string(paykit.PayoutStatusCancelled), []triggerStep{createPayout, payoutTo("cancelled")}},
	{"withdrawal.completed", "withdrawal", string(paykit.WithdrawalStatusCompleted), []triggerStep{createWithdrawal, withdrawalTo("processing"), withdrawalTo("completed")}},
	{"withdrawal.failed", "withdrawal", string(paykit.WithdrawalStatusFailed), []triggerStep{createWithdrawal, withdrawalTo("processing"), withdrawalTo("failed")}},
}

func triggerNames() []string {
	names := make([]string, len(triggerPlans))
	for i, p := range triggerPlans {
		names[i] = p.name
	}
	return names
}

func triggerCmd(a *app) *cobra.Command {
	opts := &TriggerOptions{app: a}
	cmd := &cobra.Command{
		Use:   "trigger RESOURCE.STATUS | --list",
		Short: "Make a notification happen: create a resource and drive it to a final state (sandbox only)",
		Long: "trigger creates a payment, payout or withdrawal through the API and drives it with the sandbox's\n" +
			"controls to the state named, printing each step, so every notification on the way fires: to\n" +
			"--notify-url when given, and to every 'paykit listen' of the merchant (run it in another terminal).\n" +
			"It runs only against a sandbox (the profile's base URL; in remote mode with the control token\n" +
			"from " + controlTokenEnv + "): a live profile is refused with nothing sent (exit 2), and a\n" +
			"service without the sandbox's controls is refused before anything is created.\n" +
			"A sandbox running its autopilot may move the resource first; trigger then stops with the error.\n\n" +
			"Triggers: " + strings.Join(triggerNames(), ", ") + ".",
		Example: "  paykit --profile sandbox trigger payment.completed\n" +
			"  paykit --profile sandbox trigger payout.failed -o json\n" +
			"  paykit --profile sandbox trigger dispute.approved --notify-url http://127.0.0.1:8090/paykit/webhook --token demo-token\n" +
			"  paykit trigger --list",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cobra.FixedCompletions(triggerNames(), cobra.ShellCompDirectiveNoFileComp),
		Annotations:       map[string]string{annSandboxOnly: "true"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.List && len(args) > 0:
				return usagef("trigger takes a RESOURCE.STATUS or --list, not both")
			case !opts.List && len(args) == 0:
				return usagef("trigger needs a RESOURCE.STATUS (paykit trigger --list lists them)")
			case len(args) == 1:
				opts.Name = args[0]
			}
			return runBounded(a, cmd, opts, nil, runTrigger)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.List, "list", false, "list the triggers: the state each ends in and its steps")
	f.StringVar(&opts.NotifyURL, "notify-url", "", "notify_url of the payment or payout created (default: none; 'paykit listen' gets the notifications anyway)")
	f.StringVar(&opts.Token, "token", "", "notification_token of the payment created (default: none; 'paykit listen' adds its session's)")
	return cmd
}

// triggerStepOut is one step as trigger prints it.
type triggerStepOut struct {
	Step   int    `json:"step"`
	What   string `json:"what"`
	Status string `json:"status"`
}

// triggerOut is trigger's JSON answer.
type triggerOut struct {
	Trigger  string           `json:"trigger"`
	Resource string           `json:"resource"`
	ID       string           `json:"id"`
	ExtID    string           `json:"ext_id,omitempty"`
	Status   string           `json:"status"`
	Steps    []triggerStepOut `json:"steps"`
}

func runTrigger(ctx context.Context, opts *TriggerOptions) error {
	a := opts.app
	if opts.List {
		return printTriggers(a)
	}
	i := slices.IndexFunc(triggerPlans, func(p triggerPlan) bool { return p.name == opts.Name })
	if i < 0 {
		return usagef("no trigger %q; the triggers: %s", opts.Name, strings.Join(triggerNames(), ", "))
	}
	plan := triggerPlans[i]
	if opts.NotifyURL != "" {
		if err := checkReceiverURL("--notify-url", opts.NotifyURL); err != nil {
			return err
		}
	}
	if opts.NotifyURL != "" && plan.kind == "withdrawal" {
		return usagef("--notify-url: a withdrawal has none (its notifications are in 'paykit listen' only)")
	}
	if opts.Token != "" && plan.kind != "payment" {
		return usagef("--token is a payment's notification_token: a %s has none", plan.kind)
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	if err := refuseLive(a, "trigger"); err != nil {
		return err
	}
	r, err := a.remote()
	if err != nil {
		return err
	}
	// A read first: a service without the sandbox's controls (or a
	// refused control token) is told before anything is created.
	if _, err := r.State(ctx); err != nil {
		var ce *sandbox.ControlError
		if errors.As(err, &ce) && ce.StatusCode == 404 {
			return usagef("%s has no sandbox controls (GET /sandbox/state answered 404): trigger runs only against a sandbox; nothing was sent", a.target())
		}
		return a.controlTokenError(err)
	}
	run := &triggerRun{opts: opts, c: c, r: r, ext: "trg-" + randomHex(4)}
	out := triggerOut{Trigger: plan.name, Resource: plan.kind, Steps: []triggerStepOut{}}
	if plan.kind != "withdrawal" {
		out.ExtID = run.ext
	}
	table := a.output == "table" && !a.quiet && !a.shape.active()
	for n, st := range plan.steps {
		status, err := st.do(ctx, run)
		if err != nil {
			return triggerStopped(a, plan, run, n, err)
		}
		out.Steps = append(out.Steps, triggerStepOut{Step: n + 1, What: st.what, Status: status})
		out.Status = status
		if table {
			if n == 0 {
				fmt.Fprintf(a.out, "%s %s\n", plan.kind, run.id)
			}
			if _, err := fmt.Fprintf(a.out, "  %d/%d  %s: %s\n", n+1, len(plan.steps), st.what, safeCell(status)); err != nil {
				return err
			}
		}
	}
	out.ID = run.id
	if out.Status != plan.final {
		return &exitError{code: exitAPI, msg: fmt.Sprintf("%s %s ended %s, not %s", plan.kind, run.id, out.Status, plan.final)}
	}
	if table {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	var rec record
	rec.add("trigger", out.Trigger)
	rec.add("resource", out.Resource)
	rec.add("id", out.ID)
	rec.add("status", out.Status)
	return a.printRecord(b, rec)
}

// triggerStopped says at which step a trigger stopped and what is left
// at the sandbox; an unknown outcome names the read that settles it.
func triggerStopped(a *app, plan triggerPlan, run *triggerRun, n int, err error) error {
	err = a.controlTokenError(err)
	where := fmt.Sprintf("trigger %s stopped at step %d/%d (%s)", plan.name, n+1, len(plan.steps), plan.steps[n].what)
	if run.id != "" {
		where += fmt.Sprintf("; %s %s was created", plan.kind, run.id)
	}
	if errors.Is(err, paykit.ErrUnknownOutcome) {
		return &unknownError{err: fmt.Errorf("%s: %w", where, err), settle: triggerSettle(plan.kind, run)}
	}
	var ce *credentialsError
	if errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%s: %w", where, err)
}

// triggerSettle is the read that settles a trigger step whose outcome is
// unknown: the resource by its id once created; before that, a payment or
// payout by the ext_id the trigger gave it; a withdrawal, which has no
// ext_id, by the terminals' balances (a withdrawal freezes its amount and
// fee).
func triggerSettle(kind string, run *triggerRun) string {
	switch {
	case run.id != "":
		return fmt.Sprintf("paykit %ss get %s", kind, shellQuote(run.id))
	case kind == "withdrawal":
		return "paykit terminals"
	}
	return fmt.Sprintf("paykit %ss get --ext-id %s", kind, shellQuote(run.ext))
}

// refuseLive refuses a sandbox-only command on a profile marked live,
// before anything is sent.
func refuseLive(a *app, what string) error {
	if a.cred != nil && a.cred.live {
		return usagef("%s runs only against a sandbox, and profile %q is marked live; nothing was sent", what, a.cred.profile)
	}
	return nil
}

func printTriggers(a *app) error {
	l := list{header: []string{"trigger", "resource", "ends_in", "steps"}}
	type item struct {
		Trigger  string   `json:"trigger"`
		Resource string   `json:"resource"`
		EndsIn   string   `json:"ends_in"`
		Steps    []string `json:"steps"`
	}
	var items []item
	for _, p := range triggerPlans {
		var steps []string
		for _, s := range p.steps {
			steps = append(steps, s.what)
		}
		items = append(items, item{p.name, p.kind, p.final, steps})
		l.rows = append(l.rows, []string{p.name, p.kind, p.final, strings.Join(steps, "; ")})
	}
	b, err := json.Marshal(items)
	if err != nil {
		return err
	}
	return a.printList(b, l)
}

// randomHex is n random bytes in hex: trigger's ext_ids, unique per run.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
