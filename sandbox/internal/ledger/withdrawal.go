package ledger

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Withdrawal statuses.
const (
	WithdrawalPending    = "pending"
	WithdrawalProcessing = "processing"
	WithdrawalCompleted  = "completed"
	WithdrawalFailed     = "failed"
)

// settle is what a change of a withdrawal's status does to its
// terminal's money (nil: nothing).
type settle func(b *Balance, held decimal.Decimal)

// Settling: completed takes the held sum off the terminal for good, failed
// gives it back to the available balance.
func paidOut(b *Balance, held decimal.Decimal) { b.Frozen = b.Frozen.Sub(held) }
func refunded(b *Balance, held decimal.Decimal) {
	b.Frozen = b.Frozen.Sub(held)
	b.Available = b.Available.Add(held)
}

// withdrawalMoves is every change of a withdrawal's status there is: the
// controls, the dashboard and the autopilot move a withdrawal only along
// these rows.
var withdrawalMoves = []statusMove[settle]{
	{WithdrawalPending, WithdrawalProcessing, nil},
	{WithdrawalPending, WithdrawalCompleted, paidOut},
	{WithdrawalPending, WithdrawalFailed, refunded},
	{WithdrawalProcessing, WithdrawalCompleted, paidOut},
	{WithdrawalProcessing, WithdrawalFailed, refunded},
}

// WithdrawalMoves lists the statuses a withdrawal in status from may move
// to, in the table's order (the dashboard's buttons).
func WithdrawalMoves(from string) []string { return targets(withdrawalMoves, from) }

// HoldWithdrawal checks a withdrawal of amount from a terminal with fee
// and freezes what it needs: amount+fee, or amount alone when
// subtractFee (the wallet then receives amount-fee). It returns what was
// held. An inactive terminal is WDR_001 (the spec has no
// terminal-not-found code for withdrawals), too little money WDR_002.
func HoldWithdrawal(b *Balance, active bool, fee, amount decimal.Decimal, subtractFee bool) (decimal.Decimal, *Error) {
	if !active {
		return decimal.Decimal{}, &Error{Kind: Invalid, Code: spec.CodeWDR001, Field: "terminal_id", Message: "terminal not found or not active"}
	}
	held := amount.Add(fee)
	if subtractFee {
		if !amount.GreaterThan(fee) {
			return decimal.Decimal{}, &Error{Kind: Invalid, Code: spec.CodeWDR001, Field: "amount",
				Message: "amount must exceed the fee when the fee is subtracted from it"}
		}
		held = amount
	}
	if b.Available.LessThan(held) {
		return decimal.Decimal{}, &Error{Kind: Refused, Code: spec.CodeWDR002, Message: "insufficient funds"}
	}
	b.Available = b.Available.Sub(held)
	b.Frozen = b.Frozen.Add(held)
	return held, nil
}

// CheckWithdrawalTarget refuses a status no withdrawal can be moved to
// (pending is where one starts), before the withdrawal is looked up.
func CheckWithdrawalTarget(to string) *Error {
	switch to {
	case WithdrawalProcessing, WithdrawalCompleted, WithdrawalFailed:
		return nil
	}
	return &Error{Kind: Invalid, Field: "status", Message: "withdrawal status must be processing, completed or failed"}
}

// MoveWithdrawal changes w's status to to, settling its held money on b
// as the table says: the one place a withdrawal's status changes. An
// unknown target is Invalid, a change the table lacks WrongState; neither
// touches w or b.
func MoveWithdrawal(w *Withdrawal, b *Balance, to string) *Error {
	if err := CheckWithdrawalTarget(to); err != nil {
		return err
	}
	m, ok := findMove(withdrawalMoves, w.Status, to)
	if !ok {
		return &Error{Kind: WrongState, Message: fmt.Sprintf("withdrawal %s is %s, cannot become %s", w.ID, w.Status, to)}
	}
	if m.effect != nil {
		m.effect(b, w.Held)
	}
	w.Status = to
	return nil
}
