package paykit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// WithdrawalStatus is the state of a withdrawal.
type WithdrawalStatus string

// Withdrawal statuses.
const (
	WithdrawalStatusPending    WithdrawalStatus = "pending"
	WithdrawalStatusProcessing WithdrawalStatus = "processing"
	WithdrawalStatusCompleted  WithdrawalStatus = "completed"
	WithdrawalStatusFailed     WithdrawalStatus = "failed"
)

// UnmarshalJSON normalises known statuses and keeps an unknown one as sent.
func (s *WithdrawalStatus) UnmarshalJSON(b []byte) (err error) {
	*s, err = decodeEnum(b, WithdrawalStatusPending, WithdrawalStatusProcessing,
		WithdrawalStatusCompleted, WithdrawalStatusFailed)
	return err
}

// Withdrawal is a USDT withdrawal from a terminal to a TRC-20 wallet.
type Withdrawal struct {
	// ID is the service's UUID of the withdrawal, the key of GetWithdrawal.
	ID string `json:"id"`
	// Amount is the USDT requested. With SubtractFeeFromAmount the wallet
	// receives Amount - Fee; otherwise Amount + Fee leaves the terminal.
	Amount decimal.Decimal `json:"amount"`
	// Fee is the USDT fee charged for this withdrawal.
	Fee decimal.Decimal `json:"fee"`
	// Currency is "USDT".
	Currency string `json:"currency"`
	// Address is the TRC-20 wallet.
	Address string `json:"address"`
	// TxHash is "" until the transaction is sent.
	TxHash string `json:"tx_hash"`
	// Status is kept as sent, unknown values included; the SDK enforces no
	// transitions. completed and failed are final.
	Status WithdrawalStatus `json:"status"`
	// CreatedAt is the service's creation time, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is the time of the last status change, in UTC.
	UpdatedAt time.Time `json:"updated_at"`
}

// UnmarshalJSON decodes a withdrawal leniently.
func (w *Withdrawal) UnmarshalJSON(b []byte) error {
	type plain Withdrawal
	aux := struct {
		*plain
		Amount    wireDec `json:"amount"`
		Fee       wireDec `json:"fee"`
		CreatedAt apiTime `json:"created_at"`
		UpdatedAt apiTime `json:"updated_at"`
	}{plain: (*plain)(w)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	w.Amount, w.Fee = decimal.Decimal(aux.Amount), decimal.Decimal(aux.Fee)
	w.CreatedAt, w.UpdatedAt = time.Time(aux.CreatedAt), time.Time(aux.UpdatedAt)
	return nil
}

func (w *Withdrawal) facts() facts {
	return facts{id: w.ID, status: string(w.Status), amount: w.Amount}
}

// WithdrawalFee is the current withdrawal fee.
type WithdrawalFee struct {
	// Fee is the current fee per withdrawal; it can change, so read it
	// close to the withdrawal it prices.
	Fee decimal.Decimal `json:"fee"`
	// Currency is "USDT".
	Currency string `json:"currency"`
}

// UnmarshalJSON decodes a fee and checks it.
func (f *WithdrawalFee) UnmarshalJSON(b []byte) error {
	type plain WithdrawalFee
	aux := struct {
		*plain
		Fee wireDec `json:"fee"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	f.Fee = decimal.Decimal(aux.Fee)
	return nil
}

// CreateWithdrawalParams are the inputs of CreateWithdrawal.
type CreateWithdrawalParams struct {
	// TerminalID is the terminal whose balance pays, an opaque string.
	TerminalID string
	// Amount in USDT, positive, with at most six decimals.
	Amount decimal.Decimal
	// Address is the TRC-20 wallet. The spec gives no format, so the SDK
	// only checks that it is present; the service validates it (WDR_001).
	Address string
	// SubtractFeeFromAmount deducts the fee from Amount, so the wallet
	// receives Amount minus the fee; by default the fee comes on top.
	SubtractFeeFromAmount bool
}

type createWithdrawalBody struct {
	TerminalID            string      `json:"terminal_id"`
	Amount                json.Number `json:"amount"`
	Address               string      `json:"address"`
	SubtractFeeFromAmount bool        `json:"subtract_fee_from_amount,omitempty"`
}

// CreateWithdrawal withdraws USDT from a terminal; the amount is frozen on
// the terminal until the withdrawal settles.
//
// Like CreateTransfer it is re-sent only when the failed attempt provably
// sent nothing. The answer must carry an id, a status, this call's address
// and amount (or the amount less the fee, with SubtractFeeFromAmount); any
// other 2xx is an unknown outcome. ErrUnknownOutcome means the withdrawal
// may exist: check the terminal's frozen balance before withdrawing again.
func (c *Client) CreateWithdrawal(ctx context.Context, params CreateWithdrawalParams) (*Withdrawal, error) {
	if err := firstError(
		checkRequired("terminal_id", params.TerminalID),
		checkPositive("amount", params.Amount),
		checkUSDT("amount", params.Amount),
		checkRequired("address", params.Address)); err != nil {
		return nil, err
	}
	in := createWithdrawalBody{TerminalID: params.TerminalID, Amount: amount(params.Amount),
		Address: params.Address, SubtractFeeFromAmount: params.SubtractFeeFromAmount}
	return send(ctx, c, &call{op: opCreateWithdrawal, path: "/v1/withdrawals", in: in},
		func(_ context.Context, got *Withdrawal, _ seenIn) (sameness, error) {
			var v comparison
			// The spec does not say whether a fee taken off shows in it.
			amt, err := sameAmount("withdrawal", got.Amount, params.Amount)
			if amt == different && params.SubtractFeeFromAmount && got.Amount.Equal(params.Amount.Sub(got.Fee)) {
				amt, err = same, nil
			}
			v.add(amt, err)
			v.add(sameExact("withdrawal's address", got.Address, params.Address))
			return v.result()
		})
}

// GetWithdrawal returns the withdrawal with the given id (a UUID).
func (c *Client) GetWithdrawal(ctx context.Context, id string) (*Withdrawal, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return send[Withdrawal](ctx, c, &call{op: opGetWithdrawal, path: "/v1/withdrawals/" + id, id: id}, nil)
}

// GetWithdrawalFee returns the current withdrawal fee.
func (c *Client) GetWithdrawalFee(ctx context.Context) (*WithdrawalFee, error) {
	return send[WithdrawalFee](ctx, c, &call{op: opGetWithdrawalFee, path: "/v1/withdrawals/fee"}, nil)
}
