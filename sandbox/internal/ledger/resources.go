package ledger

import (
	"time"

	"github.com/shopspring/decimal"
)

// The resources the rules move and the store keeps. They carry no
// behaviour of HTTP or of storage: the API renders them as wire views, the
// store saves and loads them, and only the Move functions change a status.
// A store hands out copies (see package store): a rule that changes one
// saves it back within the same transaction, or the change is lost.

// Merchant is one account: who X-Identity names and the terminals that
// hold its USDT. How its requests are authenticated (the signer) is the
// API's business, not the rules'.
type Merchant struct {
	// APIKey is what X-Identity carries: the merchant's identity, unique.
	APIKey string
	// Name is the display name the payer page and the dashboard show.
	Name string
	// Terminals are the merchant's terminals in their configured order;
	// the first active one serves payments.
	Terminals []*Terminal
	// Transfers counts the transfers that succeeded (Stats).
	Transfers int
}

// Terminal finds one of m's terminals by id: terminal ids are scoped to
// their merchant, so another merchant's terminal is not found.
func (m *Merchant) Terminal(id string) *Terminal {
	for _, t := range m.Terminals {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Terminal holds a merchant's USDT.
type Terminal struct {
	// ID is the terminal id of the API, unique within its merchant.
	ID string
	// Name is the display name GET /v1/terminals returns.
	Name string
	// Balance is its money: available and frozen.
	Balance
	// Fee is the USDT charged per withdrawal from it.
	Fee decimal.Decimal
	// Active: it serves payments and withdrawals (an inactive one still
	// holds money and takes transfers).
	Active bool
}

// Bank is one bank a payment's requisites can come from.
type Bank struct {
	// Code is what a create request's bank field names.
	Code string
	// Name is the display name shown as the requisites' bank.
	Name string
	// IsActive: an inactive bank has no requisites to offer (PAY_004).
	IsActive bool
	// Country is "RU", or the country of a cross-border bank.
	Country string
}

// Payment is one payment: what was asked, the requisites offered, and
// where it stands.
type Payment struct {
	// Merchant owns it; another merchant's lookups do not find it.
	Merchant *Merchant
	// Terminal is credited with USDT when it completes.
	Terminal *Terminal
	// ID is the service's id, ExtID the merchant's (unique per merchant).
	ID, ExtID string
	// Amount is what the payment asks for, in RUB.
	Amount decimal.Decimal
	// Method is SBP, CARD, SIM or CROSS_BORDER.
	Method string
	// Bank is the bank of the requisites offered.
	Bank Bank
	// ReqType and ReqValue are the requisites: card, sbp, sim or phone,
	// and the number.
	ReqType, ReqValue string
	// Holder is the requisites' holder name.
	Holder string
	// Country, Currency and AmountLocal are a CROSS_BORDER payment's
	// country, its currency and the amount in it.
	Country, Currency string
	AmountLocal       decimal.Decimal
	// ClientID is the merchant's id of its customer, as given.
	ClientID string
	// NotifyURL and Token are where its webhooks go and the token they
	// carry; empty NotifyURL sends none.
	NotifyURL, Token string
	// Status is one of the Payment* statuses; MovePayment changes it.
	Status string
	// ValidUntil is when a PENDING payment expires.
	ValidUntil time.Time
	// CreatedAt is when it was created, to the second.
	CreatedAt time.Time
	// USDTRate is RUB per USDT, fixed when the payment was created.
	USDTRate decimal.Decimal
	// PaymentURL is the payer page's address.
	PaymentURL string
	// Dispute is the open (or last) dispute, nil when none was opened.
	Dispute *Dispute
	// Receipt is the size of the last confirm's attachment, for the page.
	Receipt int
}

// Copy is p with its own dispute, so that a change to the copy's dispute
// cannot reach p's; the merchant and terminal stay shared (they are the
// Server's). Both the stores and the API keep payments this way.
func (p *Payment) Copy() Payment {
	c := *p
	if p.Dispute != nil {
		d := *p.Dispute
		if d.Amount != nil {
			a := *d.Amount
			d.Amount = &a
		}
		c.Dispute = &d
	}
	return c
}

// Dispute is what a merchant said when opening a dispute.
type Dispute struct {
	// Amount is what the payer says was paid, when given: an approved
	// dispute credits that instead of the payment's amount.
	Amount *decimal.Decimal
	// ReceiptURL and Comment are the evidence, as given.
	ReceiptURL, Comment string
	// CreatedAt is when it was opened, to the second.
	CreatedAt time.Time
}

// Payout is one RUB payout to a card or phone.
type Payout struct {
	// Merchant owns it.
	Merchant *Merchant
	// ID is the service's id, ExtID the merchant's (unique per merchant).
	ID, ExtID string
	// Amount is what is paid out, in RUB.
	Amount decimal.Decimal
	// Method, Requisites, HolderName and Bank say where it goes.
	Method, Requisites, HolderName, Bank string
	// NotifyURL is where its webhooks go; empty sends none.
	NotifyURL string
	// Status is one of the Payout* statuses; MovePayout changes it.
	Status string
	// ProviderOrderID is the provider's reference, set once the payout
	// reaches it (processing, or completed directly).
	ProviderOrderID string
	// CreatedAt is when it was created; CompletedAt when it was paid, zero
	// until then.
	CreatedAt, CompletedAt time.Time
}

// Withdrawal is one USDT withdrawal from a terminal to a wallet.
type Withdrawal struct {
	// Merchant owns it; Terminal is where its money is held.
	Merchant *Merchant
	Terminal *Terminal
	// ID is the service's id.
	ID string
	// Amount is as requested; Fee is the terminal's fee.
	Amount, Fee decimal.Decimal
	// Held is what its creation froze on the terminal: amount+fee, or the
	// amount when the fee is subtracted from it.
	Held decimal.Decimal
	// Address is the TRC-20 wallet; TxHash the chain's transaction, once
	// sent.
	Address, TxHash string
	// Status is one of the Withdrawal* statuses; MoveWithdrawal changes it.
	Status string
	// CreatedAt and UpdatedAt are when it was made and last moved.
	CreatedAt, UpdatedAt time.Time
}
