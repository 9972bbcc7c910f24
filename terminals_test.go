package paykit

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 12. GET /v1/terminals and 13. GET /v1/balance

const terminalsJSON = `{
  "terminals": [
    {"id":"term-main","name":"Main shop","balance":1250.75,"balance_frozen":100.00,
     "withdrawal_fee":2.50,"currency":"USDT","is_active":true},
    {"id":"term-2","name":"Second shop","balance":"12.50","balance_frozen":"0.00",
     "withdrawal_fee":"1.5","currency":"USDT","is_active":false,"created_at":"2024-01-01T00:00:00Z"},
    {"id":42,"name":"Legacy","balance":0,"balance_frozen":0,"withdrawal_fee":2.5,"currency":"USDT","is_active":true}
  ],
  "next_cursor": null
}`

func TestListTerminalsRequestAndDecode(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, terminalsJSON)
	ts, err := c.ListTerminals(context.Background())
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/terminals", "", "")
	require.Len(t, ts, 3)

	assert.Equal(t, "term-main", ts[0].ID)
	assert.Equal(t, "Main shop", ts[0].Name)
	assertDec(t, "1250.75", ts[0].Balance, "balance")
	assertDec(t, "100.00", ts[0].BalanceFrozen, "balance_frozen")
	assertDec(t, "2.50", ts[0].WithdrawalFee, "withdrawal_fee")
	assert.Equal(t, "USDT", ts[0].Currency)
	assert.True(t, ts[0].IsActive)

	// Numeric strings are amounts too; unknown fields are ignored.
	assert.Equal(t, "term-2", ts[1].ID)
	assert.Equal(t, "Second shop", ts[1].Name)
	assertDec(t, "12.50", ts[1].Balance, "balance")
	assertDec(t, "0", ts[1].BalanceFrozen, "balance_frozen")
	assertDec(t, "1.5", ts[1].WithdrawalFee, "withdrawal_fee")
	assert.Equal(t, "USDT", ts[1].Currency)
	assert.False(t, ts[1].IsActive)

	// A numeric id is kept as written.
	assert.Equal(t, "42", ts[2].ID)
	assertDec(t, "0", ts[2].Balance, "balance")
	assertDec(t, "2.5", ts[2].WithdrawalFee, "withdrawal_fee")
	assert.True(t, ts[2].IsActive)
}

func TestListTerminalsEmpty(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"terminals":[]}`, `{}`} {
		c, _ := mockClient(t, http.StatusOK, body)
		ts, err := c.ListTerminals(context.Background())
		require.NoError(t, err, body)
		assert.Empty(t, ts, body)
	}
}

func TestListTerminalsRefusesBadAmounts(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"huge exponent":        `{"terminals":[{"id":"t","balance":1e999999999}]}`,
		"tiny exponent":        `{"terminals":[{"id":"t","balance_frozen":1e-999999999}]}`,
		"non-numeric string":   `{"terminals":[{"id":"t","withdrawal_fee":"free"}]}`,
		"terminals not a list": `{"terminals":{"id":"t"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, body)
			ts, err := c.ListTerminals(context.Background())
			assert.Error(t, err)
			assert.Nil(t, ts)
		})
	}
}

func TestGetBalanceRequestAndDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, balance, frozen string
	}{
		{"numbers", `{"balance":1263.25,"balance_frozen":100.00,"currency":"USDT"}`, "1263.25", "100.00"},
		{"numeric strings", `{"balance":"1263.25","balance_frozen":"0.00","currency":"USDT","updated_at":"2024-05-01T00:00:00Z"}`, "1263.25", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, tt.body)
			b, err := c.GetBalance(context.Background())
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodGet, "/v1/balance", "", "")
			require.NotNil(t, b)
			assertDec(t, tt.balance, b.Balance, "balance")
			assertDec(t, tt.frozen, b.BalanceFrozen, "balance_frozen")
			assert.Equal(t, "USDT", b.Currency)
		})
	}
}

func TestGetBalanceRefusesBadAmounts(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"balance":1e999999999,"balance_frozen":0,"currency":"USDT"}`)
	b, err := c.GetBalance(context.Background())
	assert.Error(t, err)
	assert.Nil(t, b)
}

func TestTerminalAndBalanceErrors(t *testing.T) {
	t.Parallel()
	list := func(c *Client) error { _, err := c.ListTerminals(context.Background()); return err }
	balance := func(c *Client) error { _, err := c.GetBalance(context.Background()); return err }
	tests := []struct {
		name     string
		call     func(*Client) error
		status   int
		body     string
		code     string
		sentinel string
	}{
		{"terminals 500", list, 500, opErrBody("SYS_001", "internal"), "SYS_001", "ErrInternal"},
		{"terminals 401", list, 401, `{"error":"AUTH_001","message":"bad signature"}`, "AUTH_001", "ErrUnauthorized"},
		{"balance 403", balance, 403, `forbidden`, "", "ErrUnauthorized"},
		{"balance proxy 502", balance, 502, `<html><body>Bad Gateway</body></html>`, "", "ErrInternal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, tt.status, tt.body)
			err := tt.call(c)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinel)
			assert.Equal(t, 1, rec.count())
		})
	}
}
