package paykit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 15. POST /v1/transfers

const transferJSON = `{"success":true,"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":150.25,"currency":"USDT"}`

func TestCreateTransferRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		amount string
		body   string
	}{
		{"two decimals", "150.25", `{"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":150.25}`},
		{"trailing zeros kept", "100.00", `{"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":100.00}`},
		{"integer", "5", `{"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":5}`},
		{"six decimals", "0.000001", `{"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":0.000001}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := echoClient(t, http.StatusOK, transferJSON)
			_, err := c.CreateTransfer(context.Background(), CreateTransferParams{
				FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec(tt.amount)})
			require.NoError(t, err)
			assertWire(t, rec.only(t), http.MethodPost, "/v1/transfers", "application/json", tt.body)
		})
	}
}

func TestCreateTransferDecodesResult(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, from, to, amount string }{
		{"spec shape", transferJSON, "term-main", "term-2", "150.25"},
		{"numeric ids and string amount, unknown field", `{"success":true,"from_terminal_id":1,"to_terminal_id":2,"amount":"150.25","currency":"USDT","tx":"x"}`, "1", "2", "150.25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := mockClient(t, http.StatusOK, tt.body)
			tr, err := c.CreateTransfer(context.Background(), CreateTransferParams{
				FromTerminalID: tt.from, ToTerminalID: tt.to, Amount: dec("150.25")})
			require.NoError(t, err)
			require.NotNil(t, tr)
			assert.True(t, tr.Success)
			assert.Equal(t, tt.from, tr.FromTerminalID)
			assert.Equal(t, tt.to, tr.ToTerminalID)
			assertDec(t, tt.amount, tr.Amount, "amount")
			assert.Equal(t, "USDT", tr.Currency)
		})
	}
}

func TestCreateTransferRefusesBadAmountInResponse(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"success":true,"from_terminal_id":"a","to_terminal_id":"b","amount":1e999999999,"currency":"USDT"}`)
	tr, err := c.CreateTransfer(context.Background(), CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	assert.Error(t, err)
	assert.Nil(t, tr)
}

func TestCreateTransferErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		body      string
		code      string
		sentinels []string
	}{
		{"TRF_001", 400, opErrBody("TRF_001", "invalid parameters"), "TRF_001", []string{"ErrInvalidParameters"}},
		{"TRF_002", 404, opErrBody("TRF_002", "terminal not found"), "TRF_002", []string{"ErrTerminalNotFound"}},
		{"TRF_003", 400, opErrBody("TRF_003", "insufficient funds"), "TRF_003", []string{"ErrInsufficientFunds"}},
		{"401", 401, opErrBody("AUTH", "bad signature"), "AUTH", []string{"ErrUnauthorized"}},
		// A 5xx means the request reached the server: it may have moved money.
		{"500 with code", 500, opErrBody("SYS_001", "internal"), "SYS_001", []string{"ErrUnknownOutcome", "ErrInternal"}},
		{"502 HTML", 502, "<html>Bad Gateway</html>", "", []string{"ErrUnknownOutcome", "ErrInternal"}},
		{"503 empty", 503, "", "", []string{"ErrUnknownOutcome", "ErrInternal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Retries enabled: a money move must still be sent exactly once.
			c, rec := mockClient(t, tt.status, tt.body, WithMaxRetries(3), WithRetryWait(time.Millisecond, 2*time.Millisecond))
			tr, err := c.CreateTransfer(context.Background(), CreateTransferParams{
				FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec("150.25")})
			assert.Nil(t, tr)
			opRequireAPIError(t, err, tt.code, tt.status)
			opAssertOnlySentinels(t, err, tt.sentinels...)
			assert.Equal(t, 1, rec.count(), "a transfer is never re-sent")
		})
	}
}

// opCountingTransport counts the attempts that reach a real transport.
type opCountingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *opCountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

func TestCreateTransferDroppedConnectionIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the transfer arrived; the answer is lost
		}
	}), WithMaxRetries(3))
	tr, err := c.CreateTransfer(context.Background(), CreateTransferParams{
		FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec("150.25")})
	assert.Nil(t, tr)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrUnknownOutcome)
	var apiErr *Error
	assert.False(t, errors.As(err, &apiErr), "no response, so no *Error")
	assert.Equal(t, int32(1), hits.Load(), "a transfer that may have arrived is never re-sent")
}

func TestCreateTransferRefusedConnectionIsRetriedAndNotUnknown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens: the dial fails, so nothing was sent
	ct := &opCountingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := NewClient(url, testKey, HMACSigner(testSecret), WithHTTPClient(&http.Client{Transport: ct}),
		WithMaxRetries(2), WithRetryWait(time.Millisecond, 2*time.Millisecond))
	require.NoError(t, err)
	tr, err := c.CreateTransfer(context.Background(), CreateTransferParams{
		FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec("150.25")})
	assert.Nil(t, tr)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrUnknownOutcome, "a refused dial proves nothing was sent")
	assert.Equal(t, int32(3), ct.n.Load(), "provably unsent attempts are retried")
}
