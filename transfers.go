package paykit

import (
	"context"
	"encoding/json"

	"github.com/shopspring/decimal"
)

// Transfer is the result of moving USDT between two of the merchant's
// terminals. The move is atomic and free of fees.
type Transfer struct {
	Success        bool            `json:"success"`
	FromTerminalID string          `json:"from_terminal_id"`
	ToTerminalID   string          `json:"to_terminal_id"`
	Amount         decimal.Decimal `json:"amount"`
	Currency       string          `json:"currency"`
}

// UnmarshalJSON accepts numeric terminal ids and checks the amount.
func (t *Transfer) UnmarshalJSON(b []byte) error {
	type plain Transfer
	aux := struct {
		*plain
		From flexString `json:"from_terminal_id"`
		To   flexString `json:"to_terminal_id"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	t.FromTerminalID, t.ToTerminalID = string(aux.From), string(aux.To)
	return checkAmounts(t.Amount)
}

// CreateTransferParams are the inputs of CreateTransfer. Terminal ids are
// opaque strings; the amount is USDT and must be positive.
type CreateTransferParams struct {
	FromTerminalID string
	ToTerminalID   string
	Amount         decimal.Decimal
}

type createTransferBody struct {
	FromTerminalID string `json:"from_terminal_id"`
	ToTerminalID   string `json:"to_terminal_id"`
	Amount         amount `json:"amount"`
}

// CreateTransfer moves USDT between two terminals of the merchant.
//
// The API has no idempotency key for transfers, so the SDK re-sends one only
// when the failed attempt provably sent nothing (no connection was made).
// If the request may have arrived and no answer came back (a dropped
// connection, a timeout, a 5xx), the error matches ErrUnknownOutcome: read
// both terminals' balances before deciding to transfer again.
func (c *Client) CreateTransfer(ctx context.Context, params CreateTransferParams) (*Transfer, error) {
	if err := firstError(
		checkRequired("from_terminal_id", params.FromTerminalID),
		checkRequired("to_terminal_id", params.ToTerminalID),
		checkPositive("amount", params.Amount)); err != nil {
		return nil, err
	}
	t := new(Transfer)
	err := c.doJSON(ctx, request{op: opCreateTransfer, path: "/v1/transfers", out: t},
		createTransferBody{FromTerminalID: params.FromTerminalID, ToTerminalID: params.ToTerminalID, Amount: amount(params.Amount)})
	if err != nil {
		return nil, err
	}
	return t, nil
}
