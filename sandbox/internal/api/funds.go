package api

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// TerminalBody is a terminal on the wire (GET /v1/terminals and the
// sandbox's state).
type TerminalBody struct {
	// ID is the terminal id.
	ID string `json:"id"`
	// Name is its display name.
	Name string `json:"name"`
	// Balance is available USDT.
	Balance USDT `json:"balance"`
	// BalanceFrozen is USDT held by withdrawals in flight.
	BalanceFrozen USDT `json:"balance_frozen"`
	// WithdrawalFee is USDT charged per withdrawal.
	WithdrawalFee USDT `json:"withdrawal_fee"`
	// Currency is always USDT.
	Currency string `json:"currency"`
	// IsActive is it serves payments and withdrawals.
	IsActive bool `json:"is_active"`
}

// TerminalView renders a terminal.
func TerminalView(t *ledger.Terminal) TerminalBody {
	return TerminalBody{ID: t.ID, Name: t.Name, Balance: USDT(t.Available), BalanceFrozen: USDT(t.Frozen),
		WithdrawalFee: USDT(t.Fee), Currency: "USDT", IsActive: t.Active}
}

func (a *API) listTerminals(_ *http.Request, key string, _ []byte) (any, *Error) {
	ts := a.b.Terminals(key)
	out := make([]TerminalBody, 0, len(ts))
	for i := range ts {
		out = append(out, TerminalView(&ts[i]))
	}
	return map[string]any{"terminals": out}, nil
}

type fundsBalanceBody struct {
	Balance       USDT   `json:"balance"`
	BalanceFrozen USDT   `json:"balance_frozen"`
	Currency      string `json:"currency"`
}

// getBalance sums every terminal of the merchant, inactive ones included:
// their money is still the merchant's.
func (a *API) getBalance(_ *http.Request, key string, _ []byte) (any, *Error) {
	var bal, frozen decimal.Decimal
	for _, t := range a.b.Terminals(key) {
		bal = bal.Add(t.Available)
		frozen = frozen.Add(t.Frozen)
	}
	return fundsBalanceBody{Balance: USDT(bal), BalanceFrozen: USDT(frozen), Currency: "USDT"}, nil
}

type fundsFeeBody struct {
	Fee      USDT   `json:"fee"`
	Currency string `json:"currency"`
}

// getWithdrawalFee answers the fee of the merchant's first active terminal
// (the endpoint takes no terminal); each terminal's own fee is in
// GET /v1/terminals.
func (a *API) getWithdrawalFee(_ *http.Request, key string, _ []byte) (any, *Error) {
	fee := decimal.Zero
	// Which terminal is "the first active" is the ledger's rule (the one
	// that serves payments), asked of the copies.
	ts := a.b.Terminals(key)
	m := ledger.Merchant{Terminals: make([]*ledger.Terminal, len(ts))}
	for i := range ts {
		m.Terminals[i] = &ts[i]
	}
	if t := m.ActiveTerminal(); t != nil {
		fee = t.Fee
	}
	return fundsFeeBody{Fee: USDT(fee), Currency: "USDT"}, nil
}

// usdtScaleMessage is the TRF_001 and WDR_001 message of a finer USDT
// amount.
var usdtScaleMessage = fmt.Sprintf("USDT amounts have at most %d decimal places (TRC-20 precision)", spec.USDTScale)

type fundsTransferReq struct {
	FromTerminalID string `json:"from_terminal_id"`
	ToTerminalID   string `json:"to_terminal_id"`
	Amount         Amount `json:"amount"`
}

type fundsTransferBody struct {
	Success        bool   `json:"success"`
	FromTerminalID string `json:"from_terminal_id"`
	ToTerminalID   string `json:"to_terminal_id"`
	Amount         USDT   `json:"amount"`
	Currency       string `json:"currency"`
}

// createTransfer moves USDT between two terminals of the merchant in one
// change, so no reader ever sees the debit without the credit.
func (a *API) createTransfer(_ *http.Request, key string, body []byte) (any, *Error) {
	var req fundsTransferReq
	if err := decodeJSON(body, &req, false); err != nil {
		return nil, Invalid(spec.CodeTRF001, "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.FromTerminalID == "" || req.ToTerminalID == "":
		return nil, Invalid(spec.CodeTRF001, "terminal_id", "from_terminal_id and to_terminal_id are required")
	case req.FromTerminalID == req.ToTerminalID:
		return nil, Invalid(spec.CodeTRF001, "to_terminal_id", "source and destination terminals must differ")
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return nil, Invalid(spec.CodeTRF001, "amount", "amount must be positive")
	case !ledger.USDTPrecise(req.Amount.D):
		return nil, Invalid(spec.CodeTRF001, "amount", usdtScaleMessage)
	}
	if lerr := a.b.Transfer(key, req.FromTerminalID, req.ToTerminalID, req.Amount.D); lerr != nil {
		return nil, FromLedger(lerr)
	}
	return fundsTransferBody{Success: true, FromTerminalID: req.FromTerminalID, ToTerminalID: req.ToTerminalID,
		Amount: USDT(req.Amount.D), Currency: "USDT"}, nil
}

// WithdrawalBody is a withdrawal on the wire.
type WithdrawalBody struct {
	// ID is the service's id.
	ID string `json:"id"`
	// Amount is the USDT asked for.
	Amount USDT `json:"amount"`
	// Fee is the terminal's fee.
	Fee USDT `json:"fee"`
	// Currency is always USDT.
	Currency string `json:"currency"`
	// Address is the TRC-20 wallet.
	Address string `json:"address"`
	// TxHash is the chain transaction; null until there is one.
	TxHash *string `json:"tx_hash"`
	// Status is lower case, as the spec writes it.
	Status string `json:"status"`
	// CreatedAt is when it was created.
	CreatedAt string `json:"created_at"`
	// UpdatedAt is when its status last changed.
	UpdatedAt string `json:"updated_at"`
}

// WithdrawalView renders a withdrawal.
func WithdrawalView(w *ledger.Withdrawal) WithdrawalBody {
	v := WithdrawalBody{ID: w.ID, Amount: USDT(w.Amount), Fee: USDT(w.Fee), Currency: "USDT",
		Address: w.Address, Status: w.Status, CreatedAt: Timestamp(w.CreatedAt), UpdatedAt: Timestamp(w.UpdatedAt)}
	if w.TxHash != "" {
		h := w.TxHash
		v.TxHash = &h
	}
	return v
}

type withdrawalCreateReq struct {
	TerminalID            string `json:"terminal_id"`
	Amount                Amount `json:"amount"`
	Address               string `json:"address"`
	SubtractFeeFromAmount bool   `json:"subtract_fee_from_amount"`
}

// createWithdrawal checks the request; the sandbox freezes amount+fee on
// the terminal (amount alone when subtract_fee_from_amount is true, the
// wallet then receiving amount-fee). The response's amount is always the
// requested amount and fee the terminal's fee.
func (a *API) createWithdrawal(_ *http.Request, key string, body []byte) (any, *Error) {
	var req withdrawalCreateReq
	if err := decodeJSON(body, &req, false); err != nil {
		return nil, Invalid(spec.CodeWDR001, "body", "request body is not valid JSON: "+err.Error())
	}
	switch {
	case req.TerminalID == "":
		return nil, Invalid(spec.CodeWDR001, "terminal_id", "terminal_id is required")
	case !req.Amount.Set || !req.Amount.D.IsPositive():
		return nil, Invalid(spec.CodeWDR001, "amount", "amount must be positive")
	case !ledger.USDTPrecise(req.Amount.D):
		return nil, Invalid(spec.CodeWDR001, "amount", usdtScaleMessage)
	case strings.TrimSpace(req.Address) == "":
		return nil, Invalid(spec.CodeWDR001, "address", "address is required")
	case utf8.RuneCountInString(req.Address) > MaxAddressLength:
		return nil, Invalid(spec.CodeWDR001, "address", fmt.Sprintf(MaxLengthMessageFormat, "address", MaxAddressLength))
	}
	w, lerr := a.b.CreateWithdrawal(key, NewWithdrawal{TerminalID: req.TerminalID, Amount: req.Amount.D,
		Address: req.Address, SubtractFee: req.SubtractFeeFromAmount})
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return WithdrawalView(&w), nil
}

func (a *API) getWithdrawal(r *http.Request, key string, _ []byte) (any, *Error) {
	w, lerr := a.b.Withdrawal(key, r.PathValue("id"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return WithdrawalView(&w), nil
}
