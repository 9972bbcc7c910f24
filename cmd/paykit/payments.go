package main

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/internal/spec"
)

func paymentRecord(a *app, p *paykit.Payment) record {
	var r record
	r.add("id", p.ID)
	r.add("ext_id", p.ExtID)
	r.add("status", string(p.Status))
	// The dispute-cancel answer carries no amount: say nothing rather
	// than 0.00.
	r.amount("amount", p.Amount, p.Currency, p.Currency != "" || !p.Amount.IsZero())
	r.csvOnly("currency", p.Currency)
	r.opt("method", string(p.Method))
	req := ""
	if p.Requisites.Value != "" {
		req = string(p.Requisites.Type) + " " + a.mask(p.Requisites.Value)
	}
	r.opt("requisites", req)
	bank := p.Requisites.BankName
	if bank == "" {
		bank = p.Requisites.BankCode
	}
	r.opt("bank", bank)
	r.opt("country", string(p.Requisites.Country))
	r.amount("amount_local", p.Requisites.AmountLocal, p.Requisites.Currency, p.Requisites.Country != "")
	r.csvOnly("currency_local", p.Requisites.Currency)
	r.amount("usdt_rate", p.USDTRate, "", !p.USDTRate.IsZero())
	r.opt("payment_url", p.PaymentURL)
	r.opt("created_at", a.when(p.CreatedAt))
	r.opt("valid_until", a.when(p.ValidUntil))
	r.opt("message", p.Message)
	d := p.Dispute
	if d == nil {
		d = &paykit.Dispute{}
	}
	r.amount("dispute_amount", d.Amount.Decimal, p.Currency, d.Amount.Valid)
	r.opt("dispute_receipt_url", d.ReceiptURL)
	r.opt("dispute_comment", d.Comment)
	reconciled := ""
	if p.Reconciled {
		reconciled = "yes (the answer was lost; read back)"
	}
	r.opt("reconciled", reconciled)
	return r
}

// plainDecimal is the amount syntax the CLI takes: digits with an optional
// fraction, both bounded. decimal.NewFromString alone would take
// "1e999999999", whose two-decimal rendering in the confirmation prompt is
// a gigabyte of zeros. The currency's own scale is checked after (see
// decimalArg): 1.500 RUB is fine, 1.505 is not.
var plainDecimal = regexp.MustCompile(`^[0-9]{1,15}(\.[0-9]{1,18})?$`)

// decimalArg parses an amount given on the command line, before any call,
// in currency cur (RUB or USDT), refusing a fraction finer than the
// currency has: 100.005 RUB would be sent as asked and rounded by nobody
// knows whom.
func decimalArg(flag, s, cur string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err != nil || !plainDecimal.MatchString(s) {
		return decimal.Decimal{}, usagef("--%s: want a decimal amount such as 1500.00, not %q", flag, s)
	}
	// The scales are the SDK's (internal/spec); trailing zeros do not
	// count: 1500.500 RUB is 1500.50.
	places, unit := int32(spec.RUBScale), "kopecks: two decimals"
	if cur == "USDT" {
		places, unit = spec.USDTScale, "six decimals"
	}
	if !d.Equal(d.Truncate(places)) {
		return decimal.Decimal{}, usagef("--%s: %s %s is finer than %s moves (%s at most); nothing was sent", flag, s, cur, cur, unit)
	}
	return d, nil
}

func paymentsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "payments", Short: "Create, read, confirm and cancel RUB payments",
		Example: "  paykit payments create --ext-id order-1001 --amount 1500.00 --method SBP\n  paykit payments get --ext-id order-1001"}
	cmd.AddCommand(newCmdPaymentsCreate(a, nil), newCmdPaymentsGet(a, nil), newCmdPaymentsConfirm(a, nil), newCmdPaymentsCancel(a, nil))
	return cmd
}

// PaymentsCreateOptions are payments create's flags.
type PaymentsCreateOptions struct {
	app    *app
	Params paykit.CreatePaymentParams
	// Amount, Method and Country are the flags as typed.
	Amount, Method, Country string
}

func newCmdPaymentsCreate(a *app, runF func(context.Context, *PaymentsCreateOptions) error) *cobra.Command {
	opts := &PaymentsCreateOptions{app: a}
	cmd := &cobra.Command{
		Use:     "create --ext-id ID --amount RUB",
		Short:   "Create a payment and print the requisites the payer transfers to",
		Example: "  paykit payments create --ext-id order-1001 --amount 1500.00 --method SBP --bank sber",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBounded(a, cmd, opts, runF, runPaymentsCreate)
		},
	}
	p := &opts.Params
	f := cmd.Flags()
	f.StringVar(&p.ExtID, "ext-id", "", "your order id, unique (required)")
	f.StringVar(&opts.Amount, "amount", "", fmt.Sprintf("amount in RUB, %d to %d, at most two decimals (required)", spec.MinPaymentAmount, spec.MaxPaymentAmount))
	f.StringVar(&opts.Method, "method", "", "CARD, SBP, SIM or CROSS_BORDER (default: the service's, CARD)")
	f.StringVar(&p.Bank, "bank", "", "bank code (see paykit banks)")
	f.StringVar(&opts.Country, "country", "", "TJ, KZ, UZ or KG, for CROSS_BORDER")
	f.StringVar(&p.ClientID, "client-id", "", "the payer's id in your system")
	f.StringVar(&p.NotifyURL, "notify-url", "", "webhook URL for this payment")
	f.StringVar(&p.NotificationToken, "notification-token", "", "secret the service sends back in X-Notification-Token with each webhook of this payment (never printed)")
	_ = cmd.MarkFlagRequired("ext-id")
	_ = cmd.MarkFlagRequired("amount")
	_ = cmd.RegisterFlagCompletionFunc("method", cobra.FixedCompletions(spec.PaymentMethods, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("country", cobra.FixedCompletions(spec.Countries, cobra.ShellCompDirectiveNoFileComp))
	return moneyCommand(cmd, "always", "payment")
}

func runPaymentsCreate(ctx context.Context, opts *PaymentsCreateOptions) error {
	a, p := opts.app, opts.Params
	d, err := decimalArg("amount", opts.Amount, "RUB")
	if err != nil {
		return err
	}
	p.Amount, p.Method, p.Country = d, paykit.PaymentMethod(opts.Method), paykit.Country(opts.Country)
	c, err := a.client()
	if err != nil {
		return err
	}
	got, err := c.CreatePayment(ctx, p)
	if err != nil {
		show := "paykit payments get --ext-id " + shellQuote(p.ExtID)
		return duplicate(settle(err, show), show)
	}
	return a.printPaymentDone(got)
}

// paymentRef names a payment by the service's id or by the merchant's
// ext_id: support starts from the order number the customer quotes.
type paymentRef struct {
	ID, ExtID string
}

// bindExtID adds --ext-id to cmd.
func (r *paymentRef) bindExtID(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.ExtID, "ext-id", "", "your order id instead of the payment id")
}

// fromArgs takes the id from args, refusing both or neither.
func (r *paymentRef) fromArgs(args []string) error {
	return idOrExtID("payment", args, r.ExtID, &r.ID)
}

// idOrExtID sets *id from args (at most one), refusing both it and an
// ext_id, or neither; kind names the resource in the refusal.
func idOrExtID(kind string, args []string, extID string, id *string) error {
	if (len(args) == 1) == (extID != "") {
		return usagef("give a %s id or --ext-id, not both or neither", kind)
	}
	if len(args) == 1 {
		*id = args[0]
	}
	return nil
}

// getCommand is the paykit command that shows the payment.
func (r paymentRef) getCommand() string {
	if r.ExtID != "" {
		return "paykit payments get --ext-id " + shellQuote(r.ExtID)
	}
	return "paykit payments get " + shellQuote(r.ID)
}

// resolve returns the payment's id, reading it by ext_id when that is
// what was given.
func (r paymentRef) resolve(ctx context.Context, c *paykit.Client) (string, error) {
	if r.ExtID == "" {
		return r.ID, nil
	}
	p, err := c.GetPaymentByExtID(ctx, r.ExtID)
	if err != nil {
		return "", fmt.Errorf("payment with ext_id %s: %w", shellQuote(r.ExtID), err)
	}
	return p.ID, nil
}

// PaymentsGetOptions are payments get's flags and arguments.
type PaymentsGetOptions struct {
	app *app
	Ref paymentRef
}

func newCmdPaymentsGet(a *app, runF func(context.Context, *PaymentsGetOptions) error) *cobra.Command {
	opts := &PaymentsGetOptions{app: a}
	cmd := &cobra.Command{
		Use:     "get (ID | --ext-id EXT_ID)",
		Short:   "Show a payment by its id or by your order id",
		Example: "  paykit payments get 3f0c...\n  paykit payments get --ext-id order-1001 -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Ref.fromArgs(args); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runPaymentsGet)
		},
	}
	opts.Ref.bindExtID(cmd)
	return cmd
}

func runPaymentsGet(ctx context.Context, opts *PaymentsGetOptions) error {
	return show(ctx, opts.app, func(c *paykit.Client, ctx context.Context) (*paykit.Payment, error) {
		if opts.Ref.ExtID != "" {
			return c.GetPaymentByExtID(ctx, opts.Ref.ExtID)
		}
		return c.GetPayment(ctx, opts.Ref.ID)
	}, paymentRecord)
}

// PaymentsConfirmOptions are payments confirm's flags and arguments.
type PaymentsConfirmOptions struct {
	app *app
	Ref paymentRef
	// Receipt is the image file to attach, "" for none.
	Receipt string
}

func newCmdPaymentsConfirm(a *app, runF func(context.Context, *PaymentsConfirmOptions) error) *cobra.Command {
	opts := &PaymentsConfirmOptions{app: a}
	cmd := &cobra.Command{
		Use:     "confirm (ID | --ext-id EXT_ID) [--receipt FILE]",
		Short:   "Tell the service the payer has paid, optionally with a receipt image",
		Example: "  paykit payments confirm 3f0c... --receipt receipt.png\n  paykit payments confirm --ext-id order-1001",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Ref.fromArgs(args); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runPaymentsConfirm)
		},
	}
	opts.Ref.bindExtID(cmd)
	cmd.Flags().StringVar(&opts.Receipt, "receipt", "", "image of the transfer receipt (at most 10,000,000 bytes)")
	return moneyCommand(cmd, "always", "payment")
}

func runPaymentsConfirm(ctx context.Context, opts *PaymentsConfirmOptions) error {
	var att *paykit.Attachment
	if opts.Receipt != "" {
		fh, err := os.Open(opts.Receipt)
		if err != nil {
			return usagef("--receipt: %v", err)
		}
		defer fh.Close()
		st, err := fh.Stat()
		switch {
		case err != nil:
			return usagef("--receipt: %v", err)
		case st.IsDir():
			// Opening a directory succeeds; reading it fails only once
			// the request has started.
			return usagef("--receipt: %s is a directory, not an image file; nothing was sent", opts.Receipt)
		case st.Size() > paykit.MaxAttachmentSize:
			return usagef("--receipt: %s is %d bytes, over the API's %d", opts.Receipt, st.Size(), paykit.MaxAttachmentSize)
		}
		att = &paykit.Attachment{Filename: opts.Receipt, Content: fh}
	}
	return opts.app.paymentChange(ctx, opts.Ref, func(c *paykit.Client, ctx context.Context, id string) (*paykit.Payment, error) {
		return c.ConfirmPayment(ctx, id, att)
	})
}

// PaymentsCancelOptions are payments cancel's flags and arguments.
type PaymentsCancelOptions struct {
	app *app
	Ref paymentRef
}

func newCmdPaymentsCancel(a *app, runF func(context.Context, *PaymentsCancelOptions) error) *cobra.Command {
	opts := &PaymentsCancelOptions{app: a}
	cmd := &cobra.Command{
		Use:     "cancel (ID | --ext-id EXT_ID)",
		Short:   "Cancel a PENDING payment",
		Example: "  paykit payments cancel 3f0c...\n  paykit payments cancel --ext-id order-1001",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Ref.fromArgs(args); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runPaymentsCancel)
		},
	}
	opts.Ref.bindExtID(cmd)
	return moneyCommand(cmd, "always", "payment")
}

func runPaymentsCancel(ctx context.Context, opts *PaymentsCancelOptions) error {
	return opts.app.paymentChange(ctx, opts.Ref, (*paykit.Client).CancelPayment)
}

// paymentChange runs a state change of the payment ref names and prints
// the result. call takes the client first, so that a change with no
// parameters is a method expression such as (*paykit.Client).CancelPayment.
func (a *app) paymentChange(ctx context.Context, ref paymentRef, call func(*paykit.Client, context.Context, string) (*paykit.Payment, error)) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	id, err := ref.resolve(ctx, c)
	if err != nil {
		return err
	}
	got, err := call(c, ctx, id)
	if err != nil {
		return settle(err, ref.getCommand())
	}
	return a.printPaymentDone(got)
}

// printPaymentDone prints a payment a money move answered with; when the
// output fails, the move was still done (exit 7).
func (a *app) printPaymentDone(p *paykit.Payment) error {
	return doneResource(a.printRecord(a.cap.last(), paymentRecord(a, p)), "payment", p.ID, p.ExtID, string(p.Status))
}

// settle marks an unknown outcome with the paykit command whose answer
// settles it: the CLI form of the read the SDK's error advises.
func settle(err error, command string) error {
	if errorsIsUnknown(err) {
		return &unknownError{err: err, settle: command}
	}
	return err
}

func disputesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "disputes", Short: "Open or cancel a dispute on a cancelled payment",
		Example: "  paykit disputes open 3f0c... --amount 1500.00 --comment 'paid late'\n  paykit disputes cancel --ext-id order-1001"}
	cmd.AddCommand(newCmdDisputesOpen(a, nil), newCmdDisputesCancel(a, nil))
	return cmd
}

// DisputesOpenOptions are disputes open's flags and arguments.
type DisputesOpenOptions struct {
	app *app
	Ref paymentRef
	// Amount is --amount as typed, "" when not given.
	Amount     string
	ReceiptURL string
	Comment    string
}

func newCmdDisputesOpen(a *app, runF func(context.Context, *DisputesOpenOptions) error) *cobra.Command {
	opts := &DisputesOpenOptions{app: a}
	cmd := &cobra.Command{
		Use:   "open (PAYMENT_ID | --ext-id EXT_ID)",
		Short: "Dispute a cancelled payment the payer did pay",
		Example: "  paykit disputes open 3f0c... --amount 1500.00 --receipt-url https://example.com/r.png --comment 'paid late'\n" +
			"  paykit disputes open --ext-id order-1001 --comment 'paid late'",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Ref.fromArgs(args); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runDisputesOpen)
		},
	}
	opts.Ref.bindExtID(cmd)
	cmd.Flags().StringVar(&opts.Amount, "amount", "", "what the payer actually paid, RUB, if it differs")
	cmd.Flags().StringVar(&opts.ReceiptURL, "receipt-url", "", "link to the receipt or a screenshot")
	cmd.Flags().StringVar(&opts.Comment, "comment", "", "text for the reviewer")
	return moneyCommand(cmd, "always", "payment")
}

func runDisputesOpen(ctx context.Context, opts *DisputesOpenOptions) error {
	p := paykit.OpenDisputeParams{ReceiptURL: opts.ReceiptURL, Comment: opts.Comment}
	if opts.Amount != "" {
		d, err := decimalArg("amount", opts.Amount, "RUB")
		if err != nil {
			return err
		}
		p.Amount = d
	}
	return opts.app.paymentChange(ctx, opts.Ref, func(c *paykit.Client, ctx context.Context, id string) (*paykit.Payment, error) {
		return c.OpenDispute(ctx, id, p)
	})
}

// DisputesCancelOptions are disputes cancel's flags and arguments.
type DisputesCancelOptions struct {
	app *app
	Ref paymentRef
}

func newCmdDisputesCancel(a *app, runF func(context.Context, *DisputesCancelOptions) error) *cobra.Command {
	opts := &DisputesCancelOptions{app: a}
	cmd := &cobra.Command{
		Use:     "cancel (PAYMENT_ID | --ext-id EXT_ID)",
		Short:   "Withdraw an open dispute",
		Example: "  paykit disputes cancel 3f0c...\n  paykit disputes cancel --ext-id order-1001",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Ref.fromArgs(args); err != nil {
				return err
			}
			return runBounded(a, cmd, opts, runF, runDisputesCancel)
		},
	}
	opts.Ref.bindExtID(cmd)
	return moneyCommand(cmd, "always", "payment")
}

func runDisputesCancel(ctx context.Context, opts *DisputesCancelOptions) error {
	return opts.app.paymentChange(ctx, opts.Ref, (*paykit.Client).CancelDispute)
}
