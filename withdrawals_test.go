package paykit

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 16. POST /v1/withdrawals, 17. GET /v1/withdrawals/{id}, 18. GET /v1/withdrawals/fee

const (
	tronAddress = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
	txHash      = "a3f1c9e2b7d4058e6f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"
)

const withdrawalPendingJSON = `{
  "id": "9a8b7c6d-5e4f-4321-8765-43210fedcba9",
  "amount": 100.00,
  "fee": 2.50,
  "currency": "USDT",
  "address": "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
  "tx_hash": null,
  "status": "pending",
  "created_at": "2024-05-02T08:30:00Z",
  "updated_at": "2024-05-02T08:30:00Z"
}`

const withdrawalCompletedJSON = `{
  "id": "9a8b7c6d-5e4f-4321-8765-43210fedcba9",
  "amount": "97.50",
  "fee": "2.50",
  "currency": "USDT",
  "address": "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
  "tx_hash": "a3f1c9e2b7d4058e6f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
  "status": "completed",
  "created_at": "2024-05-02T08:30:00Z",
  "updated_at": "2024-05-02T08:41:17.5Z",
  "network": "TRC-20"
}`

func TestCreateWithdrawalRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		amount   string
		subtract bool
		body     string
	}{
		{"fee on top: flag omitted", "100.00", false,
			`{"terminal_id":"term-main","amount":100.00,"address":"` + tronAddress + `"}`},
		{"fee subtracted: flag true", "100.00", true,
			`{"terminal_id":"term-main","amount":100.00,"address":"` + tronAddress + `","subtract_fee_from_amount":true}`},
		{"digits kept", "12.345678", false,
			`{"terminal_id":"term-main","amount":12.345678,"address":"` + tronAddress + `"}`},
		{"integer", "250", true,
			`{"terminal_id":"term-main","amount":250,"address":"` + tronAddress + `","subtract_fee_from_amount":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := echoClient(t, http.StatusOK, withdrawalPendingJSON)
			_, err := c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
				TerminalID: "term-main", Amount: dec(tt.amount), Address: tronAddress, SubtractFeeFromAmount: tt.subtract})
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodPost, "/v1/withdrawals", "application/json", tt.body)
		})
	}
}

func TestCreateWithdrawalDecodesResponse(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusCreated, withdrawalPendingJSON)
	w, err := c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
		TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress})
	require.NoError(t, err)
	require.NotNil(t, w)
	assert.Equal(t, withdrawID, w.ID)
	assertDec(t, "100.00", w.Amount, "amount")
	assertDec(t, "2.50", w.Fee, "fee")
	assert.Equal(t, "USDT", w.Currency)
	assert.Equal(t, tronAddress, w.Address)
	assert.Equal(t, "", w.TxHash, "tx_hash null")
	assert.Equal(t, WithdrawalStatusPending, w.Status)
	opAssertTime(t, time.Date(2024, 5, 2, 8, 30, 0, 0, time.UTC), w.CreatedAt, "created_at")
	opAssertTime(t, time.Date(2024, 5, 2, 8, 30, 0, 0, time.UTC), w.UpdatedAt, "updated_at")
}

func TestGetWithdrawalRequestAndDecode(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, withdrawalCompletedJSON)
	w, err := c.GetWithdrawal(context.Background(), withdrawID)
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/withdrawals/"+withdrawID, "", "")
	require.NotNil(t, w)
	assert.Equal(t, withdrawID, w.ID)
	assertDec(t, "97.50", w.Amount, "amount")
	assertDec(t, "2.50", w.Fee, "fee")
	assert.Equal(t, "USDT", w.Currency)
	assert.Equal(t, tronAddress, w.Address)
	assert.Equal(t, txHash, w.TxHash)
	assert.Equal(t, WithdrawalStatusCompleted, w.Status)
	opAssertTime(t, time.Date(2024, 5, 2, 8, 30, 0, 0, time.UTC), w.CreatedAt, "created_at")
	opAssertTime(t, time.Date(2024, 5, 2, 8, 41, 17, 500_000_000, time.UTC), w.UpdatedAt, "updated_at")
}

func TestWithdrawalDecodingEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, w *Withdrawal)
	}{
		{"unknown status kept", `{"id":"` + withdrawID + `","status":"on_chain","amount":1,"fee":1}`,
			func(t *testing.T, w *Withdrawal) { assert.Equal(t, WithdrawalStatus("on_chain"), w.Status) }},
		{"upper-case status normalised", `{"id":"` + withdrawID + `","status":"FAILED","amount":1,"fee":1}`,
			func(t *testing.T, w *Withdrawal) { assert.Equal(t, WithdrawalStatusFailed, w.Status) }},
		{"processing", `{"id":"` + withdrawID + `","status":"processing","amount":1,"fee":1}`,
			func(t *testing.T, w *Withdrawal) { assert.Equal(t, WithdrawalStatusProcessing, w.Status) }},
		{"absent tx_hash and times", `{"id":"` + withdrawID + `","amount":1,"fee":0}`,
			func(t *testing.T, w *Withdrawal) {
				assert.Equal(t, "", w.TxHash)
				assert.True(t, w.CreatedAt.IsZero())
				assert.True(t, w.UpdatedAt.IsZero())
				assertDec(t, "0", w.Fee, "fee")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, tt.body)
			w, err := c.GetWithdrawal(context.Background(), withdrawID)
			require.NoError(t, err)
			tt.check(t, w)
		})
	}
}

func TestWithdrawalDecodingRefusesBadBodies(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"huge fee":      `{"id":"` + withdrawID + `","amount":1,"fee":1e999999999}`,
		"bad timestamp": `{"id":"` + withdrawID + `","amount":1,"fee":1,"updated_at":"soon"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, body)
			w, err := c.GetWithdrawal(context.Background(), withdrawID)
			assert.Error(t, err)
			assert.Nil(t, w)
		})
	}
}

func TestGetWithdrawalFeeRequestAndDecode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, body, fee string }{
		{"number", `{"fee":2.50,"currency":"USDT"}`, "2.50"},
		{"numeric string, unknown field", `{"fee":"1.75","currency":"USDT","network":"TRC-20"}`, "1.75"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, tt.body)
			f, err := c.GetWithdrawalFee(context.Background())
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodGet, "/v1/withdrawals/fee", "", "")
			require.NotNil(t, f)
			assertDec(t, tt.fee, f.Fee, "fee")
			assert.Equal(t, "USDT", f.Currency)
		})
	}
}

func TestGetWithdrawalFeeRefusesBadFee(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"fee":1e-999999999,"currency":"USDT"}`)
	f, err := c.GetWithdrawalFee(context.Background())
	assert.Error(t, err)
	assert.Nil(t, f)
}

func TestWithdrawalErrors(t *testing.T) {
	t.Parallel()
	create := func(c *Client) error {
		_, err := c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
			TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress})
		return err
	}
	get := func(c *Client) error { _, err := c.GetWithdrawal(context.Background(), withdrawID); return err }
	fee := func(c *Client) error { _, err := c.GetWithdrawalFee(context.Background()); return err }
	tests := []struct {
		name      string
		call      func(*Client) error
		status    int
		body      string
		code      string
		sentinels []string
	}{
		{"create WDR_001", create, 400, opErrBody("WDR_001", "invalid address"), "WDR_001", []string{"ErrInvalidParameters"}},
		{"create WDR_002", create, 400, opErrBody("WDR_002", "insufficient funds"), "WDR_002", []string{"ErrInsufficientFunds"}},
		{"create 500", create, 500, opErrBody("SYS_001", "internal"), "SYS_001", []string{"ErrUnknownOutcome", "ErrInternal"}},
		{"create 504 HTML", create, 504, "<html>Gateway Timeout</html>", "", []string{"ErrUnknownOutcome", "ErrInternal"}},
		{"get WDR_003", get, 404, opErrBody("WDR_003", "withdrawal not found"), "WDR_003", []string{"ErrWithdrawalNotFound"}},
		{"get 500 is not unknown outcome", get, 500, opErrBody("SYS_001", "internal"), "SYS_001", []string{"ErrInternal"}},
		{"fee 401", fee, 401, opErrBody("AUTH", "bad key"), "AUTH", []string{"ErrUnauthorized"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, tt.status, tt.body)
			err := tt.call(c)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinels...)
			assert.Equal(t, 1, rec.count())
		})
	}
}

// A withdrawal that got a 5xx is never re-sent, while the fee (a read) is.
func TestWithdrawalRetryClasses(t *testing.T) {
	t.Parallel()
	opts := []Option{WithMaxRetries(2), WithRetryWait(time.Millisecond, 2*time.Millisecond)}

	c, rec := mockClient(t, http.StatusServiceUnavailable, opErrBody("SYS_001", "busy"), opts...)
	_, err := c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
		TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress})
	assert.ErrorIs(t, err, ErrUnknownOutcome)
	var apiErr *Error
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.HTTPStatus)
	assert.Equal(t, 1, rec.count(), "withdrawal sent once")

	c, rec = mockClient(t, http.StatusServiceUnavailable, opErrBody("SYS_001", "busy"), opts...)
	_, err = c.GetWithdrawalFee(context.Background())
	assert.ErrorIs(t, err, ErrInternal)
	assert.NotErrorIs(t, err, ErrUnknownOutcome)
	assert.Equal(t, 3, rec.count(), "a read is retried")

	c, rec = mockClient(t, http.StatusBadRequest, opErrBody("WDR_002", "insufficient funds"), opts...)
	_, err = c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
		TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress})
	assert.ErrorIs(t, err, ErrInsufficientFunds)
	assert.NotErrorIs(t, err, ErrUnknownOutcome)
	assert.Equal(t, 1, rec.count(), "business errors are not retried")
}

// With the fee taken off the amount, an answer whose amount is the one
// asked less its fee is the withdrawal asked for (the spec does not say
// which of the two the service shows); without that flag it is not.
func TestCreateWithdrawalFeeTakenOffIsTheSame(t *testing.T) {
	t.Parallel()
	for _, subtract := range []bool{true, false} {
		c, _ := mockClient(t, http.StatusOK, withdrawalCompletedJSON) // amount 97.50, fee 2.50
		w, err := c.CreateWithdrawal(context.Background(), CreateWithdrawalParams{
			TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress, SubtractFeeFromAmount: subtract})
		if subtract {
			require.NoError(t, err)
			assertDec(t, "97.50", w.Amount, "amount")
			continue
		}
		require.Error(t, err, "an answer 2.50 short without the fee taken off")
		assert.Nil(t, w)
	}
}
