// Package ledger holds the sandbox's rules: what a change may do to a
// resource and to the money it moves, and what a refusal is. It speaks the
// domain only: a refusal is an *Error with the spec's code and a Kind,
// never an HTTP status (the API layer maps Kind to one, the Go controls to
// their sentinel errors), and the package imports no net/http, so the API
// handlers and the Go controls call the same rule and get the same error.
//
// It holds the resources (resources.go); the state machines of payments
// (payment.go), payouts (payout.go) and withdrawals (withdrawal.go), each
// a table of moves with their guards beside the one function that changes
// the status, and the money those moves and transfers put on a terminal's
// balance; the Store the rules read and save through (store.go), which
// package store implements in memory and on a file; and, over a Store
// within the caller's one transaction, the creation rules (CreatePayment,
// CreatePayout, CreateWithdrawal, TransferFunds), the saved moves
// (ChangePayment, ChangePayout, ChangeWithdrawal) and the expiry of unpaid
// payments (ExpireDue), in create.go.
package ledger

import (
	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Kind says what sort of refusal an Error is.
type Kind int

const (
	// Invalid: an argument breaks a rule of its own (an unknown status, a
	// field out of range).
	Invalid Kind = iota + 1
	// NotFound: the resource the change names does not exist.
	NotFound
	// WrongState: the change is not allowed from the resource's status.
	WrongState
	// Refused: the change is well formed and allowed, but the money is not
	// there (insufficient funds).
	Refused
	// Conflict: the change was already made in another form (a second
	// dispute of one payment, an ext_id already used).
	Conflict
	// Unavailable: the change is well formed, but the sandbox has nothing
	// to serve it with now (no requisites: no active terminal or bank).
	Unavailable
	// TooMany: the change would pass a limit on how many resources may be
	// in one state at once (pending payments of one amount).
	TooMany
	// NotKept: the store could not keep the change: its commit failed, or
	// the store had failed before it, and it was rolled back. It is
	// nowhere, in memory or in the file, now or after a restart, so the
	// change may be asked again.
	NotKept
	// MaybeKept: the change was committed, then the store failed before it
	// was durable (the sync of its commit failed): it may or may not be in
	// the file after a restart, so asking it again may make it twice. Read
	// it back after a restart to know.
	MaybeKept
)

// Error is a refusal of a rule.
type Error struct {
	// Kind is what sort of refusal it is.
	Kind Kind
	// Code is the spec's error code of the operation (TRF_003, WDR_002),
	// or empty for a refusal only the sandbox's controls can meet.
	Code string
	// Field names the argument at fault, when one is.
	Field string
	// Message explains it, for a person.
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// USDTPrecise reports whether d has at most spec.USDTScale decimal places
// (trailing zeros do not count: 1.5000000 is 1.5): a smaller amount of
// TRC-20 USDT cannot move on chain, so it must not enter a balance as
// sub-unit dust.
func USDTPrecise(d decimal.Decimal) bool {
	return d.Equal(d.Truncate(spec.USDTScale))
}

// Balance is the USDT of one terminal: what it can spend, and what pending
// or processing withdrawals hold.
type Balance struct {
	Available decimal.Decimal
	Frozen    decimal.Decimal
}

// Transfer moves amount (positive, checked by the caller's request rules)
// from one terminal's available balance to another's, both or neither:
// TRF_003 when the source has less than amount.
func Transfer(from, to *Balance, amount decimal.Decimal) *Error {
	if from.Available.LessThan(amount) {
		return &Error{Kind: Refused, Code: spec.CodeTRF003, Message: "insufficient funds on the source terminal"}
	}
	from.Available = from.Available.Sub(amount)
	to.Available = to.Available.Add(amount)
	return nil
}

// statusMove is one row of a status table (payouts', withdrawals'): an
// allowed change from one status to another, and what else it does, of
// the type each table needs (the zero value when nothing).
type statusMove[E any] struct {
	from, to string
	effect   E
}

// targets lists the statuses table lets a resource in status from move
// to, in the table's order (the dashboard's buttons).
func targets[E any](table []statusMove[E], from string) []string {
	var out []string
	for _, m := range table {
		if m.from == from {
			out = append(out, m.to)
		}
	}
	return out
}

// findMove is table's row from from to to, if the table has one.
func findMove[E any](table []statusMove[E], from, to string) (statusMove[E], bool) {
	for _, m := range table {
		if m.from == from && m.to == to {
			return m, true
		}
	}
	return statusMove[E]{}, false
}
