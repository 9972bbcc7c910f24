package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// ReadOptions are the options of a read with no flags of its own
// (terminals, balance, banks, withdrawals fee, withdrawals get).
type ReadOptions struct {
	app *app
	// ID is withdrawals get's argument.
	ID string
}

// newCmdRead builds a read command: use, short and example as cobra has
// them, run the read itself.
func newCmdRead(a *app, use, short, example string, args cobra.PositionalArgs, run func(context.Context, *ReadOptions) error,
	runF func(context.Context, *ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{app: a}
	return &cobra.Command{
		Use: use, Short: short, Example: example, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			return runBounded(a, cmd, opts, runF, run)
		},
	}
}

// read gets the client and makes one read with it: call is a method
// expression such as (*paykit.Client).ListBanks, or a closure for a read
// that takes more than ctx.
func read[T any](ctx context.Context, a *app, call func(*paykit.Client, context.Context) (T, error)) (T, error) {
	c, err := a.client()
	if err != nil {
		var zero T
		return zero, err
	}
	return call(c, ctx)
}

// show reads one resource with get and prints it as rec makes its record.
func show[T any](ctx context.Context, a *app, get func(*paykit.Client, context.Context) (*T, error), rec func(*app, *T) record) error {
	v, err := read(ctx, a, get)
	if err != nil {
		return err
	}
	return a.printRecord(a.cap.last(), rec(a, v))
}

func terminalsCmd(a *app) *cobra.Command {
	return newCmdRead(a, "terminals", "List the terminals with their USDT balances and fees", "  paykit terminals\n  paykit terminals -o csv",
		cobra.NoArgs, runTerminals, nil)
}

func runTerminals(ctx context.Context, opts *ReadOptions) error {
	a := opts.app
	ts, err := read(ctx, a, (*paykit.Client).ListTerminals)
	if err != nil {
		return err
	}
	l := list{header: []string{"id", "name", "balance", "balance_frozen", "withdrawal_fee", "currency", "active"}}
	for _, t := range ts {
		l.rows = append(l.rows, []string{t.ID, t.Name, money(t.Balance), money(t.BalanceFrozen), money(t.WithdrawalFee), t.Currency, strconv.FormatBool(t.IsActive)})
	}
	return a.printList(a.cap.last(), l)
}

func balanceCmd(a *app) *cobra.Command {
	return newCmdRead(a, "balance", "Show the USDT balance over all terminals", "  paykit balance", cobra.NoArgs, runBalance, nil)
}

func runBalance(ctx context.Context, opts *ReadOptions) error {
	a := opts.app
	b, err := read(ctx, a, (*paykit.Client).GetBalance)
	if err != nil {
		return err
	}
	var r record
	r.amount("balance", b.Balance, b.Currency, true)
	r.amount("balance_frozen", b.BalanceFrozen, b.Currency, true)
	r.csvOnly("currency", b.Currency)
	return a.printRecord(a.cap.last(), r)
}

func banksCmd(a *app) *cobra.Command {
	return newCmdRead(a, "banks", "List the banks payments can go through (their codes go into --bank)", "  paykit banks -o csv",
		cobra.NoArgs, runBanks, nil)
}

func runBanks(ctx context.Context, opts *ReadOptions) error {
	a := opts.app
	bs, err := read(ctx, a, (*paykit.Client).ListBanks)
	if err != nil {
		return err
	}
	l := list{header: []string{"code", "name", "active"}}
	for _, b := range bs {
		l.rows = append(l.rows, []string{b.Code, b.Name, strconv.FormatBool(b.IsActive)})
	}
	return a.printList(a.cap.last(), l)
}

func transfersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "transfers", Short: "Move USDT between your terminals",
		Example: "  paykit transfers create --from term_main --to term_reserve --amount 100.00"}
	cmd.AddCommand(newCmdTransfersCreate(a, nil))
	return cmd
}

// TransfersCreateOptions are transfers create's flags.
type TransfersCreateOptions struct {
	app    *app
	Params paykit.CreateTransferParams
	// Amount is --amount as typed.
	Amount string
}

func newCmdTransfersCreate(a *app, runF func(context.Context, *TransfersCreateOptions) error) *cobra.Command {
	opts := &TransfersCreateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "create --from TERMINAL --to TERMINAL --amount USDT",
		Short: "Move USDT between two terminals (asks for confirmation; --yes when not on a terminal)",
		Long: "create moves USDT from one terminal to another. Just before sending it reads the two terminals\n" +
			"and prints their balances on stderr: a transfer has no id to read back, so if its answer is\n" +
			"lost (exit 3), paykit terminals compared with them tells whether it was made.",
		Example: "  paykit transfers create --from term_main --to term_reserve --amount 100.00 --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd.Context(), opts, runF, runTransfersCreate)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Params.FromTerminalID, "from", "", "terminal to debit (required)")
	f.StringVar(&opts.Params.ToTerminalID, "to", "", "terminal to credit (required)")
	f.StringVar(&opts.Amount, "amount", "", "USDT to move, at most six decimals (required)")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation")
	for _, n := range []string{"from", "to", "amount"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return moneyCommand(cmd, "always", "transfer")
}

// runTransfersCreate is given the command's context unbounded, as
// runPayoutsCreate is.
func runTransfersCreate(ctx context.Context, opts *TransfersCreateOptions) error {
	a, p := opts.app, opts.Params
	d, err := decimalArg("amount", opts.Amount, "USDT")
	if err != nil {
		return err
	}
	p.Amount = d
	var before startingBalances
	t, err := moveMoney(ctx, a, fmt.Sprintf("Transfer %s USDT from %s to %s", money(d), p.FromTerminalID, p.ToTerminalID), d,
		func(c *paykit.Client, ctx context.Context) (*paykit.Transfer, error) {
			var err error
			if before, err = a.readStartingBalances(ctx, c, "the transfer", p.FromTerminalID, p.ToTerminalID); err != nil {
				return nil, err
			}
			return c.CreateTransfer(ctx, p)
		})
	if err != nil {
		// A transfer has no id to read back: the balances tell.
		if uo, ok := settle(err, "paykit terminals").(*unknownError); ok {
			uo.how = before.settleTransfer(p.FromTerminalID, p.ToTerminalID, d)
			return uo
		}
		return err
	}
	var r record
	r.add("from", t.FromTerminalID)
	r.add("to", t.ToTerminalID)
	r.amount("amount", t.Amount, t.Currency, true)
	r.csvOnly("currency", t.Currency)
	r.add("success", strconv.FormatBool(t.Success))
	return doneOutput(a.printRecord(a.cap.last(), r),
		safeCell(fmt.Sprintf("transfer of %s %s from %s to %s (success %t)", money(t.Amount), t.Currency, t.FromTerminalID, t.ToTerminalID, t.Success)),
		"paykit terminals")
}

func withdrawalRecord(a *app, w *paykit.Withdrawal) record {
	var r record
	r.add("id", w.ID)
	r.add("status", string(w.Status))
	r.amount("amount", w.Amount, w.Currency, true)
	r.amount("fee", w.Fee, w.Currency, true)
	r.csvOnly("currency", w.Currency)
	r.add("address", w.Address)
	r.opt("tx_hash", w.TxHash)
	r.add("created_at", a.when(w.CreatedAt))
	r.add("updated_at", a.when(w.UpdatedAt))
	return r
}

func withdrawalsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "withdrawals", Short: "Withdraw USDT to a TRC-20 wallet, and read withdrawals and the fee",
		Example: "  paykit withdrawals fee\n  paykit withdrawals create --terminal term_main --amount 50.00 --address TXYZ..."}
	get := newCmdRead(a, "get ID", "Show a withdrawal", "  paykit withdrawals get 7b1e...\n  paykit wait withdrawal 7b1e...",
		cobra.ExactArgs(1), runWithdrawalsGet, nil)
	fee := newCmdRead(a, "fee", "Show the current withdrawal fee", "  paykit withdrawals fee", cobra.NoArgs, runWithdrawalsFee, nil)
	cmd.AddCommand(newCmdWithdrawalsCreate(a, nil), get, fee)
	return cmd
}

// WithdrawalsCreateOptions are withdrawals create's flags.
type WithdrawalsCreateOptions struct {
	app    *app
	Params paykit.CreateWithdrawalParams
	// Amount is --amount as typed.
	Amount string
}

func newCmdWithdrawalsCreate(a *app, runF func(context.Context, *WithdrawalsCreateOptions) error) *cobra.Command {
	opts := &WithdrawalsCreateOptions{app: a}
	cmd := &cobra.Command{
		Use:   "create --terminal ID --amount USDT --address WALLET",
		Short: "Withdraw USDT (asks for confirmation; --yes when not on a terminal)",
		Long: "create withdraws USDT from a terminal to a TRC-20 wallet. Just before sending it reads the\n" +
			"terminal and prints its balance on stderr: if the answer is lost (exit 3), there is no id to\n" +
			"read back, and paykit terminals compared with it tells whether the withdrawal was made.",
		Example: "  paykit withdrawals create --terminal term_main --amount 50.00 --address TXYZ... --subtract-fee --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOr(cmd.Context(), opts, runF, runWithdrawalsCreate)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Params.TerminalID, "terminal", "", "terminal that pays (required)")
	f.StringVar(&opts.Amount, "amount", "", "USDT, at most six decimals (required)")
	f.StringVar(&opts.Params.Address, "address", "", "TRC-20 wallet (required)")
	f.BoolVar(&opts.Params.SubtractFeeFromAmount, "subtract-fee", false, "take the fee out of the amount instead of on top")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation")
	for _, n := range []string{"terminal", "amount", "address"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return moneyCommand(cmd, "always", "withdrawal")
}

// runWithdrawalsCreate is given the command's context unbounded, as
// runPayoutsCreate is.
func runWithdrawalsCreate(ctx context.Context, opts *WithdrawalsCreateOptions) error {
	a, p := opts.app, opts.Params
	d, err := decimalArg("amount", opts.Amount, "USDT")
	if err != nil {
		return err
	}
	p.Amount = d
	fee := "fee on top"
	if p.SubtractFeeFromAmount {
		fee = "fee subtracted"
	}
	var before startingBalances
	w, err := moveMoney(ctx, a, fmt.Sprintf("Withdraw %s USDT (%s) from %s to %s", money(d), fee, p.TerminalID, p.Address), d,
		func(c *paykit.Client, ctx context.Context) (*paykit.Withdrawal, error) {
			var err error
			if before, err = a.readStartingBalances(ctx, c, "the withdrawal", p.TerminalID); err != nil {
				return nil, err
			}
			return c.CreateWithdrawal(ctx, p)
		})
	if err != nil {
		// No ext_id and no id yet: the terminal's balance tells.
		if uo, ok := settle(err, "paykit terminals").(*unknownError); ok {
			uo.how = before.settleWithdrawal(p.TerminalID, d, p.SubtractFeeFromAmount)
			return uo
		}
		return err
	}
	return doneResource(a.printRecord(a.cap.last(), withdrawalRecord(a, w)), "withdrawal", w.ID, "", string(w.Status))
}

func runWithdrawalsGet(ctx context.Context, opts *ReadOptions) error {
	return show(ctx, opts.app, func(c *paykit.Client, ctx context.Context) (*paykit.Withdrawal, error) {
		return c.GetWithdrawal(ctx, opts.ID)
	}, withdrawalRecord)
}

func runWithdrawalsFee(ctx context.Context, opts *ReadOptions) error {
	a := opts.app
	f, err := read(ctx, a, (*paykit.Client).GetWithdrawalFee)
	if err != nil {
		return err
	}
	var r record
	r.amount("fee", f.Fee, f.Currency, true)
	r.csvOnly("currency", f.Currency)
	return a.printRecord(a.cap.last(), r)
}
