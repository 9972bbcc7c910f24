package store

import (
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Txn is the ledger's transaction (ledger.Txn) with what the sandbox
// keeps beside the resources in it: the outbox of webhook deliveries, a
// delivery recorded in the same transaction as the change it reports (so
// a restart sends what was committed and nothing else), and the
// sandbox's own state (Value). Memory and SQL implement it with the same
// copy semantics (see ledger.TxnRead): a change not saved is lost in both.
type Txn interface {
	ledger.Txn
	// Outbox records a webhook delivery before it is sent, within the
	// transaction of the change it reports.
	Outbox(key string, o webhook.Outgoing)
	// Value is the sandbox's own state kept under key beside the
	// resources (the clock offset, the armed faults), as the transaction
	// sees it: what the last commit kept or what the transaction set (nil:
	// never set).
	Value(key string) any
	// SetValue sets it with the transaction: kept when the transaction
	// commits, dropped when it is rolled back or its commit fails. x is
	// not changed afterwards (a change sets a new value).
	SetValue(key string, x any)
}

// Store keeps the resources, the merchants and the sandbox's own state,
// and owns the transaction they are changed in.
type Store interface {
	// Begin returns the store's transaction: the open one, or a new one.
	// Transactions are serialised by the caller (one section at a time,
	// under the sandbox's lock), and one that was not committed is
	// continued by the next Begin: the group commit leaves a transaction
	// open for the sections already waiting, and the last of them commits
	// it for all.
	Begin() Txn
	// Ping tells whether the store can still be used.
	Ping() error
	// Close keeps what is pending and releases the store.
	Close() error
}

var (
	_ Store = (*Memory)(nil)
	_ Store = (*SQL)(nil)
	_ Txn   = (*Memory)(nil)
	_ Txn   = (*SQL)(nil)
)

// The ledger's types, by the names the stores were written with.
type (
	merchant   = ledger.Merchant
	terminal   = ledger.Terminal
	payment    = ledger.Payment
	dispute    = ledger.Dispute
	payout     = ledger.Payout
	withdrawal = ledger.Withdrawal
)

const (
	statusPending    = ledger.PaymentPending
	statusProcessing = ledger.PaymentProcessing
	statusDispute    = ledger.PaymentDispute
)

// byKey indexes merchants by API key.
func byKey(ms []*ledger.Merchant) map[string]*ledger.Merchant {
	out := make(map[string]*ledger.Merchant, len(ms))
	for _, m := range ms {
		out[m.APIKey] = m
	}
	return out
}

// findBank is the configured bank of code.
func findBank(banks []ledger.Bank, code string) (ledger.Bank, bool) {
	for _, b := range banks {
		if b.Code == code {
			return b, true
		}
	}
	return ledger.Bank{}, false
}

// sectionCopy returns the section's copy of the resource id, keeping the
// first one: a resource read twice in one section is changed in one place,
// and the commit drops every copy.
func sectionCopy[T any](copies *map[string]*T, id string, v *T) *T {
	if *copies == nil {
		*copies = map[string]*T{}
	}
	if c := (*copies)[id]; c != nil {
		return c
	}
	(*copies)[id] = v
	return v
}

// firstOf is the first resource a query found, or nil.
func firstOf[T any](s []*T) *T {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}
