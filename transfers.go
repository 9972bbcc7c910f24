package paykit

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/shopspring/decimal"
)

// Transfer is the result of moving USDT between two of the merchant's
// terminals. The move is atomic and free of fees.
type Transfer struct {
	// Success is always true in a Transfer that CreateTransfer returns: an
	// answer saying false is an error matching ErrUnknownOutcome, since the
	// spec does not say what false means.
	Success bool `json:"success"`
	// FromTerminalID is the terminal that was debited.
	FromTerminalID string `json:"from_terminal_id"`
	// ToTerminalID is the terminal that was credited.
	ToTerminalID string `json:"to_terminal_id"`
	// Amount is the USDT moved; transfers carry no fee, so both sides
	// changed by exactly this much.
	Amount decimal.Decimal `json:"amount"`
	// Currency is "USDT".
	Currency string `json:"currency"`
}

// UnmarshalJSON accepts numeric terminal ids and checks the amount.
func (t *Transfer) UnmarshalJSON(b []byte) error {
	type plain Transfer
	aux := struct {
		*plain
		From   flexString `json:"from_terminal_id"`
		To     flexString `json:"to_terminal_id"`
		Amount wireDec    `json:"amount"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	t.FromTerminalID, t.ToTerminalID = string(aux.From), string(aux.To)
	t.Amount = decimal.Decimal(aux.Amount)
	return nil
}

func (t *Transfer) facts() facts { return facts{amount: t.Amount} }

// errTransferNotSuccess: "success": false, which the spec never explains,
// is neither a success nor a refusal.
var errTransferNotSuccess = errors.New(`the API answered "success": false, which the spec does not explain`)

// CreateTransferParams are the inputs of CreateTransfer. Terminal ids are
// opaque strings; the amount is USDT and must be positive.
type CreateTransferParams struct {
	// FromTerminalID is the terminal to debit; it must hold Amount.
	FromTerminalID string
	// ToTerminalID is the terminal to credit, of the same merchant.
	ToTerminalID string
	// Amount is in USDT, positive, with at most six decimals; the spec
	// gives no upper bound.
	Amount decimal.Decimal
}

type createTransferBody struct {
	FromTerminalID string      `json:"from_terminal_id"`
	ToTerminalID   string      `json:"to_terminal_id"`
	Amount         json.Number `json:"amount"`
}

// CreateTransfer moves USDT between two terminals of the merchant.
//
// Transfers have no idempotency key: one is re-sent only after a failure
// known to come before sending (a failed dial, DNS lookup, TLS handshake
// or proxy connection). Any other failure (a dropped connection, a
// timeout, a 5xx, an unreadable 2xx, "success": false, other terminals or
// another amount) matches ErrUnknownOutcome beside its cause: read both
// terminals' balances (ListTerminals) before transferring again. TRF_001,
// TRF_002 and TRF_003 are definite: nothing moved. A context that ended
// before any connection was obtained is a plain context error.
func (c *Client) CreateTransfer(ctx context.Context, params CreateTransferParams) (*Transfer, error) {
	if err := firstError(
		checkRequired("from_terminal_id", params.FromTerminalID),
		checkRequired("to_terminal_id", params.ToTerminalID),
		checkPositive("amount", params.Amount),
		checkUSDT("amount", params.Amount)); err != nil {
		return nil, err
	}
	in := createTransferBody{FromTerminalID: params.FromTerminalID, ToTerminalID: params.ToTerminalID, Amount: amount(params.Amount)}
	return send(ctx, c, &call{op: opCreateTransfer, path: "/v1/transfers", in: in},
		func(_ context.Context, got *Transfer, _ seenIn) (sameness, error) {
			if !got.Success {
				return cannotTell, errTransferNotSuccess
			}
			var v comparison
			v.add(sameAmount("transfer", got.Amount, params.Amount))
			v.add(sameExact("transfer's source terminal", got.FromTerminalID, params.FromTerminalID))
			v.add(sameExact("transfer's destination terminal", got.ToTerminalID, params.ToTerminalID))
			return v.result()
		})
}
