package ledger

import (
	"time"
)

// TxnRead is what a rule reads within a transaction (etcd's mvcc
// TxnRead): lookups hand out the transaction's copy of a resource (two
// lookups of one id within it share one copy).
//
// The merchants, their terminals' balances and their transfer counters
// are resources too: Merchant hands out the transaction's copy (its
// terminals copied with it), and the resources a transaction loads point
// at that copy (their Merchant and Terminal), so a credit through a
// payment's terminal is the change a read of the merchant's terminals
// sees.
type TxnRead interface {
	// Merchant is the transaction's copy of the configured merchant of
	// apiKey with its terminals (nil: none), as the store keeps them.
	Merchant(apiKey string) *Merchant

	// Payment finds a payment by id (nil: none).
	Payment(id string) *Payment
	// PaymentByExt finds m's payment by its ext_id (nil: none).
	PaymentByExt(m *Merchant, extID string) *Payment
	// PendingWithAmount counts m's PENDING payments of one AmountKey; a
	// store may stop counting at the configured cap.
	PendingWithAmount(m *Merchant, key string) int
	// NextExpiry is no later than the earliest ValidUntil of a PENDING
	// payment (false: none is PENDING). It may be early, never late: a
	// timer armed at it finds nothing due at worst and asks again.
	NextExpiry() (time.Time, bool)
	// RecentPayments returns the newest payments, at most limit.
	RecentPayments(limit int) []*Payment

	// Payout finds a payout by id (nil: none).
	Payout(id string) *Payout
	// PayoutByExt finds m's payout by its ext_id (nil: none).
	PayoutByExt(m *Merchant, extID string) *Payout
	// ListPayouts returns one page of m's payouts matching f, in creation
	// order, and how many match in all.
	ListPayouts(m *Merchant, f PayoutFilter, limit, offset int) ([]*Payout, int)
	// RecentPayouts returns the newest payouts, at most limit.
	RecentPayouts(limit int) []*Payout

	// Withdrawal finds a withdrawal by id (nil: none).
	Withdrawal(id string) *Withdrawal
	// RecentWithdrawals returns the newest withdrawals, at most limit.
	RecentWithdrawals(limit int) []*Withdrawal

	// Counts tells m's resources by status.
	Counts(m *Merchant) (payments, payouts, withdrawals map[string]int)
	// InFlight returns what may still move: PENDING, PROCESSING and
	// DISPUTE payments, pending and processing payouts and withdrawals.
	InFlight() ([]*Payment, []*Payout, []*Withdrawal)
}

// TxnWrite is what a rule changes within a transaction (etcd's mvcc
// TxnWrite): a rule that changes a resource calls the matching Save, or
// the change is lost when the transaction ends. Nothing else is kept: the
// counters of PENDING payments and the expiry follow what was saved.
type TxnWrite interface {
	TxnRead

	// AddPayment keeps a new payment; p is the transaction's copy from
	// then on.
	AddPayment(p *Payment)
	// SavePayment writes back what the rules change after creation: the
	// status, the receipt's size and the dispute. Nothing else of a payment
	// changes once it is added, so a store keeps nothing else.
	SavePayment(p *Payment)
	// DueExpiry returns at most limit PENDING payments whose ValidUntil is
	// not after now, earliest first. The caller moves them: a store may
	// not return them again.
	DueExpiry(now time.Time, limit int) []*Payment

	// AddPayout keeps a new payout; p is the transaction's copy.
	AddPayout(p *Payout)
	// SavePayout writes back what the rules change after creation: the
	// status, the provider's order id and the completion time.
	SavePayout(p *Payout)

	// AddWithdrawal keeps a new withdrawal; w is the transaction's copy.
	AddWithdrawal(w *Withdrawal)
	// SaveWithdrawal writes back what the rules change after creation: the
	// status, the transaction hash and the update time.
	SaveWithdrawal(w *Withdrawal)

	// SaveTerminal keeps t's balances as they are now (t is one of m's
	// terminals, from the transaction's copy) with the transaction.
	SaveTerminal(m *Merchant, t *Terminal)
	// SaveMerchant keeps m's transfer counter as it is now with the
	// transaction.
	SaveMerchant(m *Merchant)

	// Reset drops every resource and puts the merchants back to their
	// configured start.
	Reset()
}

// Txn is one transaction of a store: what its rules read and write, kept
// together or not at all. The rules are written once against its views
// and run on memory or on a database alike (package store holds both,
// whose Begin opens it).
type Txn interface {
	TxnWrite
	// Commit ends the transaction and keeps its changes.
	Commit() error
	// Rollback ends the transaction without keeping it (after a failed
	// Commit too): nothing it saved is visible after. A store in memory,
	// whose Commit never fails, cannot undo the payments, payouts and
	// withdrawals it saved (the sandbox stops at once when a commit fails).
	Rollback()
}

// PayoutFilter is a query of payouts: by status and creation time.
type PayoutFilter struct {
	// Status matches one status ("" any).
	Status string
	// From and To bound CreatedAt, both included (zero: unbounded).
	From, To time.Time
}

// Match reports whether p passes the filter.
func (f PayoutFilter) Match(p *Payout) bool {
	return (f.Status == "" || p.Status == f.Status) &&
		(f.From.IsZero() || !p.CreatedAt.Before(f.From)) &&
		(f.To.IsZero() || !p.CreatedAt.After(f.To))
}
