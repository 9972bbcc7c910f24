package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

func terminalsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "terminals",
		Short:   "List the terminals with their USDT balances and fees",
		Example: "  paykit terminals\n  paykit terminals -o csv",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			ts, err := c.ListTerminals(ctx)
			if err != nil {
				return err
			}
			l := list{header: []string{"id", "name", "balance", "balance_frozen", "withdrawal_fee", "currency", "active"}}
			for _, t := range ts {
				l.rows = append(l.rows, []string{t.ID, t.Name, money(t.Balance), money(t.BalanceFrozen), money(t.WithdrawalFee), t.Currency, strconv.FormatBool(t.IsActive)})
			}
			return a.printList(a.cap.last(), l)
		},
	}
}

func balanceCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "balance",
		Short:   "Show the USDT balance over all terminals",
		Example: "  paykit balance",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			b, err := c.GetBalance(ctx)
			if err != nil {
				return err
			}
			var r record
			r.amount("balance", b.Balance, b.Currency, true)
			r.amount("balance_frozen", b.BalanceFrozen, b.Currency, true)
			r.csvOnly("currency", b.Currency)
			return a.printRecord(a.cap.last(), r)
		},
	}
}

func banksCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "banks",
		Short:   "List the banks payments can go through (their codes go into --bank)",
		Example: "  paykit banks -o csv",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			bs, err := c.ListBanks(ctx)
			if err != nil {
				return err
			}
			l := list{header: []string{"code", "name", "active"}}
			for _, b := range bs {
				l.rows = append(l.rows, []string{b.Code, b.Name, strconv.FormatBool(b.IsActive)})
			}
			return a.printList(a.cap.last(), l)
		},
	}
}

func transfersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "transfers", Short: "Move USDT between your terminals",
		Example: "  paykit transfers create --from term_main --to term_reserve --amount 100.00"}
	var p paykit.CreateTransferParams
	var amount string
	create := &cobra.Command{
		Use:     "create --from TERMINAL --to TERMINAL --amount USDT",
		Short:   "Move USDT between two terminals (asks for confirmation; --yes when not on a terminal)",
		Example: "  paykit transfers create --from term_main --to term_reserve --amount 100.00 --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := decimalArg("amount", amount, "USDT")
			if err != nil {
				return err
			}
			p.Amount = d
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := a.confirm(cmd.Context(), fmt.Sprintf("Transfer %s USDT from %s to %s", money(d), p.FromTerminalID, p.ToTerminalID), money(d)); err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			t, err := c.CreateTransfer(ctx, p)
			if err != nil {
				// A transfer has no id to read back: the balances tell.
				return settle(err, "paykit terminals")
			}
			var r record
			r.add("from", t.FromTerminalID)
			r.add("to", t.ToTerminalID)
			r.amount("amount", t.Amount, t.Currency, true)
			r.csvOnly("currency", t.Currency)
			r.add("success", strconv.FormatBool(t.Success))
			return a.printRecord(a.cap.last(), r)
		},
	}
	f := create.Flags()
	f.StringVar(&p.FromTerminalID, "from", "", "terminal to debit (required)")
	f.StringVar(&p.ToTerminalID, "to", "", "terminal to credit (required)")
	f.StringVar(&amount, "amount", "", "USDT to move (required)")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation")
	for _, n := range []string{"from", "to", "amount"} {
		_ = create.MarkFlagRequired(n)
	}
	cmd.AddCommand(create)
	return cmd
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
	var p paykit.CreateWithdrawalParams
	var amount string
	create := &cobra.Command{
		Use:     "create --terminal ID --amount USDT --address WALLET",
		Short:   "Withdraw USDT (asks for confirmation; --yes when not on a terminal)",
		Example: "  paykit withdrawals create --terminal term_main --amount 50.00 --address TXYZ... --subtract-fee --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := decimalArg("amount", amount, "USDT")
			if err != nil {
				return err
			}
			p.Amount = d
			c, err := a.client()
			if err != nil {
				return err
			}
			fee := "fee on top"
			if p.SubtractFeeFromAmount {
				fee = "fee subtracted"
			}
			if err := a.confirm(cmd.Context(), fmt.Sprintf("Withdraw %s USDT (%s) from %s to %s", money(d), fee, p.TerminalID, p.Address), money(d)); err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			w, err := c.CreateWithdrawal(ctx, p)
			if err != nil {
				// No ext_id: the terminal's frozen balance shows a
				// withdrawal in flight.
				return settle(err, "paykit terminals")
			}
			return a.printRecord(a.cap.last(), withdrawalRecord(a, w))
		},
	}
	f := create.Flags()
	f.StringVar(&p.TerminalID, "terminal", "", "terminal that pays (required)")
	f.StringVar(&amount, "amount", "", "USDT (required)")
	f.StringVar(&p.Address, "address", "", "TRC-20 wallet (required)")
	f.BoolVar(&p.SubtractFeeFromAmount, "subtract-fee", false, "take the fee out of the amount instead of on top")
	f.BoolVarP(&a.yes, "yes", "y", false, "do not ask for confirmation")
	for _, n := range []string{"terminal", "amount", "address"} {
		_ = create.MarkFlagRequired(n)
	}
	get := &cobra.Command{
		Use:     "get ID",
		Short:   "Show a withdrawal",
		Example: "  paykit withdrawals get 7b1e...",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			w, err := c.GetWithdrawal(ctx, args[0])
			if err != nil {
				return err
			}
			return a.printRecord(a.cap.last(), withdrawalRecord(a, w))
		},
	}
	fee := &cobra.Command{
		Use:     "fee",
		Short:   "Show the current withdrawal fee",
		Example: "  paykit withdrawals fee",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			f, err := c.GetWithdrawalFee(ctx)
			if err != nil {
				return err
			}
			var r record
			r.amount("fee", f.Fee, f.Currency, true)
			r.csvOnly("currency", f.Currency)
			return a.printRecord(a.cap.last(), r)
		},
	}
	cmd.AddCommand(create, get, fee)
	return cmd
}
