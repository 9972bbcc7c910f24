package main

// A transfer or a withdrawal has no id of the merchant's to read back:
// when its answer is lost, only the terminals' balances can tell whether
// it was made. So the balances it starts from are read just before it is
// sent and printed on stderr, and the unknown outcome says which balances
// to compare with them and what each result means.

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// startingBalances are the merchant's terminals by id, as read just
// before a transfer or a withdrawal was sent.
type startingBalances map[string]paykit.Terminal

// readStartingBalances reads the terminals before a move (what: "the
// transfer", "the withdrawal") and prints the balances of those with the
// given ids on stderr, where a script's log keeps them. When they cannot
// be read nothing is sent: a lost answer could not be settled then, and
// the move can be run again once the service answers.
func (a *app) readStartingBalances(ctx context.Context, c *paykit.Client, what string, ids ...string) (startingBalances, error) {
	ts, err := c.ListTerminals(ctx)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: the balances %s starts from could not be read (paykit terminals), and without them a lost answer could not be settled: %w", what, err)
	}
	bs := startingBalances{}
	for _, t := range ts {
		bs[t.ID] = t
	}
	var parts []string
	for i, id := range ids {
		if i > 0 && id == ids[i-1] {
			continue
		}
		t, ok := bs[id]
		if !ok {
			parts = append(parts, safeCell(id)+" is not among your terminals")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s %s (frozen %s)", safeCell(id), money(t.Balance), safeCell(t.Currency), money(t.BalanceFrozen)))
	}
	fmt.Fprintf(a.env.stderr, "paykit: balances before %s: %s\n", what, strings.Join(parts, ", "))
	return bs, nil
}

// notAppliedYet is what an unchanged balance cannot rule out: a request
// still on its way to the service.
const notAppliedYet = "read once more in a minute, in case the request was still on its way, before sending it again"

// settleTransfer says how paykit terminals settles a transfer of amount
// from one terminal to another whose answer was lost: which BALANCE
// values mean made, which not made, and that anything else cannot tell.
func (bs startingBalances) settleTransfer(from, to string, amount decimal.Decimal) string {
	f, okF := bs[from]
	t, okT := bs[to]
	var b strings.Builder
	switch {
	case !okF || !okT:
		missing := from
		if okF {
			missing = to
		}
		fmt.Fprintf(&b, "%s was not among your terminals before the transfer: the balances cannot tell whether it was made.\n", safeCell(missing))
	case from == to:
		b.WriteString("A transfer from a terminal to itself changes no balance: the balances cannot tell whether it was made.\n")
	default:
		from, to := safeCell(from), safeCell(to)
		fmt.Fprintf(&b, "Compare the BALANCE column it shows with the balances before the transfer, above:\n")
		fmt.Fprintf(&b, "  %s %s and %s %s (%s moved): the transfer was made; do not send it again\n",
			from, money(f.Balance.Sub(amount)), to, money(t.Balance.Add(amount)), money(amount))
		fmt.Fprintf(&b, "  %s %s and %s %s (as before): it was not made; %s\n", from, money(f.Balance), to, money(t.Balance), notAppliedYet)
		b.WriteString("  anything else: other activity on these terminals (a payment credited, a withdrawal) changed them too; " +
			"the balances cannot tell whether the transfer was made\n")
	}
	return b.String()
}

// settleWithdrawal says the same of a withdrawal of amount from terminal
// id: what leaves the terminal's BALANCE is the amount and the
// terminal's fee as read before (the amount alone when the fee is
// subtracted from it), held in BALANCE_FROZEN until the withdrawal
// completes or fails (failed gives it back).
func (bs startingBalances) settleWithdrawal(id string, amount decimal.Decimal, subtractFee bool) string {
	t, ok := bs[id]
	if !ok {
		return fmt.Sprintf("%s was not among your terminals before the withdrawal: the balances cannot tell whether it was made.\n", safeCell(id))
	}
	held, why := amount.Add(t.WithdrawalFee), fmt.Sprintf("%s less: %s and the fee of %s", money(amount.Add(t.WithdrawalFee)), money(amount), money(t.WithdrawalFee))
	if subtractFee {
		held, why = amount, money(amount)+" less, the fee taken out of it"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Compare the BALANCE it shows for %s with the one before the withdrawal, above:\n", safeCell(id))
	fmt.Fprintf(&b, "  %s (%s): the withdrawal was made (BALANCE_FROZEN holds it while it is pending, until it completes); do not send it again\n",
		money(t.Balance.Sub(held)), why)
	fmt.Fprintf(&b, "  %s (as before): it was not made, or it failed and the money came back; %s\n", money(t.Balance), notAppliedYet)
	b.WriteString("  anything else: other activity on the terminal (a payment credited, a transfer) changed it too; " +
		"the balance cannot tell whether the withdrawal was made\n")
	return b.String()
}
