package paykit

import (
	"context"
	"encoding/json"

	"github.com/shopspring/decimal"
)

// Terminal is one of the merchant's terminals, with its own USDT balance.
// Payments credit the terminal that served them.
type Terminal struct {
	// ID is opaque: the spec types it as a plain string, not a UUID.
	ID string `json:"id"`
	// Name is the merchant's label for the terminal, for people.
	Name string `json:"name"`
	// Balance is available USDT.
	Balance decimal.Decimal `json:"balance"`
	// BalanceFrozen is USDT held by withdrawals not yet completed or
	// failed: a withdrawal whose outcome is unknown shows up here.
	BalanceFrozen decimal.Decimal `json:"balance_frozen"`
	// WithdrawalFee is charged per withdrawal from this terminal, in USDT.
	WithdrawalFee decimal.Decimal `json:"withdrawal_fee"`
	// Currency is "USDT" for every terminal of this API.
	Currency string `json:"currency"`
	// IsActive is false for a terminal that cannot be used (the sandbox
	// refuses an inactive one as a withdrawal's source, WDR_001).
	IsActive bool `json:"is_active"`
}

// UnmarshalJSON accepts a numeric id as well as a string one.
func (t *Terminal) UnmarshalJSON(b []byte) error {
	type plain Terminal
	aux := struct {
		*plain
		ID            flexString `json:"id"`
		Balance       wireDec    `json:"balance"`
		BalanceFrozen wireDec    `json:"balance_frozen"`
		WithdrawalFee wireDec    `json:"withdrawal_fee"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	t.ID = string(aux.ID)
	t.Balance, t.BalanceFrozen = decimal.Decimal(aux.Balance), decimal.Decimal(aux.BalanceFrozen)
	t.WithdrawalFee = decimal.Decimal(aux.WithdrawalFee)
	return nil
}

// Balance is the total over all of the merchant's terminals.
type Balance struct {
	// Balance is the sum of the terminals' available USDT.
	Balance decimal.Decimal `json:"balance"`
	// BalanceFrozen is the sum held by withdrawals in flight, not
	// available to spend.
	BalanceFrozen decimal.Decimal `json:"balance_frozen"`
	// Currency is "USDT".
	Currency string `json:"currency"`
}

// UnmarshalJSON decodes a balance and checks its amounts.
func (b *Balance) UnmarshalJSON(data []byte) error {
	type plain Balance
	aux := struct {
		*plain
		Balance       wireDec `json:"balance"`
		BalanceFrozen wireDec `json:"balance_frozen"`
	}{plain: (*plain)(b)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	b.Balance, b.BalanceFrozen = decimal.Decimal(aux.Balance), decimal.Decimal(aux.BalanceFrozen)
	return nil
}

// ListTerminals returns the merchant's terminals.
func (c *Client) ListTerminals(ctx context.Context) ([]Terminal, error) {
	out, err := send[terminalList](ctx, c, &call{op: opListTerminals, path: "/v1/terminals"}, nil)
	if err != nil {
		return nil, err
	}
	return out.Terminals, nil
}

// GetBalance returns the total balance over all terminals.
func (c *Client) GetBalance(ctx context.Context) (*Balance, error) {
	return send[Balance](ctx, c, &call{op: opGetBalance, path: "/v1/balance"}, nil)
}

// terminalList is GET /v1/terminals's envelope.
type terminalList struct {
	Terminals []Terminal `json:"terminals"`
}
