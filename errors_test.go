package paykit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorTable drives one row of the spec's error table per case through
// the operation that raises it, and checks that exactly the right sentinel
// matches.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	pay := func(c *Client) error {
		_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "o-1", Amount: dec("1000")})
		return err
	}
	get := func(c *Client) error { _, err := c.GetPayment(ctx, paymentID); return err }
	confirm := func(c *Client) error { _, err := c.ConfirmPayment(ctx, paymentID, nil); return err }
	cancel := func(c *Client) error { _, err := c.CancelPayment(ctx, paymentID); return err }
	dispute := func(c *Client) error { _, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{}); return err }
	undispute := func(c *Client) error { _, err := c.CancelDispute(ctx, paymentID); return err }
	payout := func(c *Client) error {
		_, err := c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec("10"), Method: PayoutMethodSBP,
			Requisites: "+79001234567", HolderName: "I. I."})
		return err
	}
	getPayout := func(c *Client) error { _, err := c.GetPayout(ctx, payoutID); return err }
	getPayoutExt := func(c *Client) error { _, err := c.GetPayoutByExtID(ctx, "po-1"); return err }
	withdraw := func(c *Client) error {
		_, err := c.CreateWithdrawal(ctx, CreateWithdrawalParams{TerminalID: "t1", Amount: dec("5"), Address: "TXyz"})
		return err
	}
	getWithdrawal := func(c *Client) error { _, err := c.GetWithdrawal(ctx, withdrawID); return err }
	transfer := func(c *Client) error {
		_, err := c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "t1", ToTerminalID: "t2", Amount: dec("1")})
		return err
	}

	cases := []struct {
		code   string
		status int
		call   func(*Client) error
		want   error
	}{
		{"PAY_001", 500, pay, ErrInternal},
		{"PAY_001", 500, confirm, ErrInternal},
		{"PAY_001", 404, getPayout, ErrPayoutNotFound},
		{"PAY_001", 404, getPayoutExt, ErrPayoutNotFound},
		{"PAY_002", 400, pay, ErrInvalidParameters},
		{"PAY_002", 400, payout, ErrInvalidParameters},
		{"PAY_002", 400, dispute, ErrInvalidParameters},
		{"PAY_003", 409, pay, ErrDuplicateExtID},
		{"PAY_003", 409, payout, ErrDuplicateExtID},
		{"PAY_004", 503, pay, ErrNoRequisites},
		{"PAY_005", 429, pay, ErrTooManySameAmount},
		{"PAY_006", 404, get, ErrPaymentNotFound},
		{"PAY_006", 404, confirm, ErrPaymentNotFound},
		{"PAY_006", 404, cancel, ErrPaymentNotFound},
		{"PAY_006", 404, dispute, ErrPaymentNotFound},
		{"PAY_006", 404, undispute, ErrPaymentNotFound},
		{"PAY_007", 400, cancel, ErrPaymentNotCancellable},
		{"PAY_008", 400, confirm, ErrPaymentNotConfirmable},
		{"DIS_001", 400, dispute, ErrDisputeNotAllowed},
		{"DIS_002", 409, dispute, ErrDisputeExists},
		{"DIS_003", 400, undispute, ErrDisputeNotActive},
		{"SYS_001", 500, payout, ErrInternal},
		{"SYS_001", 500, undispute, ErrInternal},
		{"WDR_001", 400, withdraw, ErrInvalidParameters},
		{"WDR_002", 400, withdraw, ErrInsufficientFunds},
		{"WDR_003", 404, getWithdrawal, ErrWithdrawalNotFound},
		{"TRF_001", 400, transfer, ErrInvalidParameters},
		{"TRF_002", 404, transfer, ErrTerminalNotFound},
		{"TRF_003", 400, transfer, ErrInsufficientFunds},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s_%d_%p", tc.code, tc.status, tc.call), func(t *testing.T) {
			t.Parallel()
			body := fmt.Sprintf(`{"error":%q,"message":"text of %s","data":{"ext_id":"o-1"}}`, tc.code, tc.code)
			c, rec := mockClient(t, tc.status, body)
			err := tc.call(c)
			require.Error(t, err)
			assert.Equal(t, 1, rec.count(), "a business error is answered once")
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.Equal(t, tc.status, apiErr.HTTPStatus)
			assert.Equal(t, "text of "+tc.code, apiErr.Message)
			assert.JSONEq(t, `{"ext_id":"o-1"}`, string(apiErr.Data))
			for _, s := range allSentinels {
				want := s == tc.want
				// A 5xx (but PAY_004) to a call that changes something may
				// have been applied: its outcome is unknown, beside its cause.
				if s == ErrUnknownOutcome && tc.status >= 500 && tc.code != "PAY_004" &&
					rec.only(t).Method == http.MethodPost {
					want = true
				}
				assert.Equal(t, want, errors.Is(err, s), "errors.Is(%v)", s)
			}
		})
	}
}

func TestPAY001ToldApartByStatusNotText(t *testing.T) {
	t.Parallel()
	e404 := &Error{Code: "PAY_001", HTTPStatus: 404, Message: "Internal error"}
	e500 := &Error{Code: "PAY_001", HTTPStatus: 500, Message: "Payout not found"}
	assert.ErrorIs(t, e404, ErrPayoutNotFound)
	assert.NotErrorIs(t, e404, ErrInternal)
	assert.ErrorIs(t, e500, ErrInternal)
	assert.NotErrorIs(t, e500, ErrPayoutNotFound)
}

func TestDuplicateExtIDFromData(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, 409, `{"error":"PAY_003","message":"Payment with ext_id order-7 already exists","data":{"ext_id":"order-7"}}`)
	_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-7", Amount: dec("500")})
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "order-7", apiErr.ExtID())
	assert.ErrorIs(t, err, ErrDuplicateExtID)
	assert.Equal(t, "paykit: PAY_003 (HTTP 409): Payment with ext_id order-7 already exists", err.Error())

	assert.Equal(t, "", (&Error{}).ExtID())
	assert.Equal(t, "", (&Error{Data: json.RawMessage(`[1]`)}).ExtID())
	assert.Equal(t, "42", (&Error{Data: json.RawMessage(`{"ext_id":42}`)}).ExtID())
}

func TestUnauthorizedWhateverTheBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
	}{
		{401, `{"error":"AUTH_001","message":"bad signature"}`},
		{403, `<html>Forbidden</html>`},
		{401, ``},
		{403, `{"error":"PAY_006","message":"?"}`},
	} {
		c, _ := mockClient(t, tc.status, tc.body)
		_, err := c.ListBanks(ctx)
		assert.ErrorIs(t, err, ErrUnauthorized, "%d %s", tc.status, tc.body)
		assert.NotErrorIs(t, err, ErrPaymentNotFound)
		var apiErr *Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, tc.status, apiErr.HTTPStatus)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	t.Parallel()
	html := "<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>\t<center><h1>502 Bad Gateway</h1></center>" +
		strings.Repeat("<!-- padding -->", 500) + "</body></html>"
	c, _ := mockClient(t, 502, html)
	_, err := c.GetBalance(ctx)
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 502, apiErr.HTTPStatus)
	assert.Empty(t, apiErr.Code)
	assert.ErrorIs(t, err, ErrInternal)
	assert.True(t, strings.HasPrefix(apiErr.Message, "<html> <head><title>502 Bad Gateway</title></head> <body> <center>"), apiErr.Message)
	assert.LessOrEqual(t, len(apiErr.Message), maxExcerpt+len("…"))
	assert.True(t, strings.HasSuffix(apiErr.Message, "…"))

	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{503, "", "Service Unavailable"},
		{500, "\x00\x01\xff\xfe", "Internal Server Error"},
		{418, "short text", "short text"},
		{400, `{"message":"no code"}`, `{"message":"no code"}`},
		{400, `{"error":"","message":"empty code"}`, `{"error":"","message":"empty code"}`},
	} {
		e := decodeError(tc.status, []byte(tc.body))
		assert.Equal(t, tc.want, e.Message)
		assert.Empty(t, e.Code)
	}
	e := decodeError(400, []byte(`{"error":"PAY_002","message":{"field":"amount"},"data":null}`))
	assert.Equal(t, `{"field":"amount"}`, e.Message, "a non-string message is kept raw")
	assert.Nil(t, e.Data)
	assert.NotErrorIs(t, decodeError(418, nil), ErrInternal)
}

func TestErrorStringMasksCardAndPhoneNumbers(t *testing.T) {
	t.Parallel()
	e := &Error{Code: "PAY_002", HTTPStatus: 400,
		Message: "card 4111111111111111 and phone +79001234567 refused for 6f1c2a5e-8d0b-4d7e-9b1a-200000000000 tx 0xabc1234567890123"}
	s := e.Error()
	assert.NotContains(t, s, "4111111111111111")
	assert.NotContains(t, s, "79001234567")
	assert.Contains(t, s, "************1111")
	assert.Contains(t, s, "+*******4567")
	assert.Contains(t, s, "6f1c2a5e-8d0b-4d7e-9b1a-200000000000", "UUIDs stay readable")
	assert.Contains(t, s, "0xabc1234567890123", "hashes stay readable")
	assert.Equal(t, "order 12345", maskDigits("order 12345"))
}

func TestValidationError(t *testing.T) {
	t.Parallel()
	err := invalid("amount", "must be greater than zero")
	assert.Equal(t, "paykit: invalid amount: must be greater than zero", err.Error())
	assert.ErrorIs(t, err, ErrInvalidParameters)
	assert.NotErrorIs(t, err, ErrInternal)
}

func TestUnknownOutcomeError(t *testing.T) {
	t.Parallel()
	cause := &Error{Code: "", HTTPStatus: 504, Message: "Gateway Timeout"}
	err := error(&unknownOutcomeError{op: "CreateTransfer", check: opCreateTransfer.advice, cause: cause})
	assert.ErrorIs(t, err, ErrUnknownOutcome)
	assert.ErrorIs(t, err, ErrInternal)
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 504, apiErr.HTTPStatus)
	assert.Contains(t, err.Error(), "not re-sent")
	assert.Contains(t, err.Error(), "ListTerminals")
}

func TestMoneyMove5xxIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, 500, `{"error":"SYS_001","message":"boom"}`, WithMaxRetries(3))
	_, err := c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	assert.ErrorIs(t, err, ErrUnknownOutcome)
	assert.ErrorIs(t, err, ErrInternal)
	assert.Equal(t, 1, rec.count(), "never re-sent")

	c, _ = mockClient(t, 400, `{"error":"TRF_003","message":"low"}`)
	_, err = c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b", Amount: dec("1")})
	assert.NotErrorIs(t, err, ErrUnknownOutcome, "a business refusal is a known outcome")
	assert.ErrorIs(t, err, ErrInsufficientFunds)
}

func TestSentinelMessages(t *testing.T) {
	for _, s := range allSentinels {
		assert.True(t, strings.HasPrefix(s.Error(), "paykit: "), s.Error())
	}
}

func TestErrorDataIsBounded(t *testing.T) {
	t.Parallel()
	big := `{"error":"PAY_003","message":"dup","data":{"ext_id":"o-1","junk":"` + strings.Repeat("x", 200_000) + `"}}`
	e := decodeError(409, []byte(big))
	assert.LessOrEqual(t, len(e.Data), MaxErrorDataBytes)
	assert.Equal(t, "o-1", e.ExtID(), "what ExtID reads is kept")
	e = decodeError(500, []byte(`{"error":"SYS_001","data":{"junk":"`+strings.Repeat("x", 200_000)+`"}}`))
	assert.Nil(t, e.Data)
	small := decodeError(409, []byte(`{"error":"PAY_003","data":{"ext_id":"o-2","n":1}}`))
	assert.JSONEq(t, `{"ext_id":"o-2","n":1}`, string(small.Data), "small data is kept whole")
}

func TestSanitizeCode(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"PAY_001", "PAY_004", "SYS_001", "DIS_003", "WDR_002", "TRF_001", "AUTH", "rate_limited", "E1234567"[:7]} {
		assert.Equal(t, ok, sanitizeCode(ok))
	}
	for _, bad := range []string{"", "4111111111111111", "79001234567", "_PAY", "1PAY", "PAY 004", "PAY-004", "PAY_0041234",
		strings.Repeat("A", 33), "карта", "PAY_004\n", `PAY"`} {
		assert.Equal(t, invalidCode, sanitizeCode(bad), bad)
	}
}

// The API key and card numbers never reach an error's code.
func TestErrorCodeIsSanitized(t *testing.T) {
	t.Parallel()
	for _, code := range []string{testKey, "4111111111111111", "4111111111111111 x", strings.Repeat("A", 33), "PAY 004"} {
		rt := newRoutes(map[string]func() (int, string){
			"GET /v1/payments/" + paymentID: fixed(400, `{"error":"`+code+`","message":"x"}`),
		})
		c, _ := serverClient(t, rt)
		_, err := c.GetPayment(ctx, paymentID)
		var apiErr *Error
		require.ErrorAs(t, err, &apiErr, code)
		assert.Equal(t, invalidCode, apiErr.Code, code)
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			assert.NotContains(t, fmt.Sprintf(verb, err), testKey)
			assert.NotContains(t, fmt.Sprintf(verb, err), "4111111111111111")
		}
	}
}
