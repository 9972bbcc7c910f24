package paykit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paykit-dev/paykit-go/internal/mask"
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
		e := decodeError(tc.status, []byte(tc.body), secrets{})
		assert.Equal(t, tc.want, e.Message)
		assert.Empty(t, e.Code)
	}
	e := decodeError(400, []byte(`{"error":"PAY_002","message":{"field":"amount"},"data":null}`), secrets{})
	assert.Equal(t, `{"field":"amount"}`, e.Message, "a non-string message is kept raw")
	assert.Nil(t, e.Data)
	assert.NotErrorIs(t, decodeError(418, nil, secrets{}), ErrInternal)
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
	assert.Equal(t, "order 12345", mask.Text("order 12345"))
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
	e := decodeError(409, []byte(big), secrets{})
	assert.LessOrEqual(t, len(e.Data), MaxErrorDataBytes)
	assert.Equal(t, "o-1", e.ExtID(), "what ExtID reads is kept")
	e = decodeError(500, []byte(`{"error":"SYS_001","data":{"junk":"`+strings.Repeat("x", 200_000)+`"}}`), secrets{})
	assert.Nil(t, e.Data)
	small := decodeError(409, []byte(`{"error":"PAY_003","data":{"ext_id":"o-2","n":1}}`), secrets{})
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

// TestEchoedSignatureRedacted: a server (or a proxy's error page) that
// echoes the request's X-Signature back does not put it in the error, in
// any of fmt's forms, whether the body is the API's JSON or HTML.
func TestEchoedSignatureRedacted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   func(sig string) string
	}{
		{"JSON message", 400, func(sig string) string {
			return `{"error":"PAY_002","message":"bad signature ` + sig + `","data":{"signature":"` + sig + `"}}`
		}},
		{"JSON message, escaped", 400, func(sig string) string {
			return `{"error":"PAY_002","message":"bad signature \u0020` + `\u00` + fmt.Sprintf("%x", sig[0]) + sig[1:] + `"}`
		}},
		{"JSON code", 400, func(sig string) string { return `{"error":"` + sig[:30] + `","message":"x"}` }},
		{"HTML page", 502, func(sig string) string {
			return "<html><body><h1>502</h1><pre>X-Signature: " + sig + "</pre></body></html>"
		}},
		{"HTML page, far in", 403, func(sig string) string {
			return "<html><body>" + strings.Repeat("<p>", 40) + "X-Signature: " + sig + "</body></html>"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sent []string
			var mu sync.Mutex
			c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sig := r.Header.Get("X-Signature")
				mu.Lock()
				sent = append(sent, sig)
				mu.Unlock()
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body(sig))
			}), WithMaxRetries(0))
			_, err := c.GetPayment(ctx, paymentID)
			require.Error(t, err)
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr)
			mu.Lock()
			require.Len(t, sent, 1)
			sig := sent[0]
			mu.Unlock()
			require.Len(t, sig, 64)
			for i, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", apiErr), fmt.Sprintf("%+v", apiErr),
				apiErr.Message, apiErr.Code, string(apiErr.Data)} {
				// Not assert.NotContains, which would print the signature.
				assert.False(t, strings.Contains(text, sig[:16]), "form %d shows the signature, or its start", i)
				assert.False(t, strings.Contains(text, sig[48:]), "form %d shows the end of the signature", i)
			}
			if tc.name != "JSON code" {
				assert.Contains(t, apiErr.Message, "[signature]", "the message says what was there")
			}
		})
	}
}

// TestAPIKeyRedactedAcrossCuts: an echoed API key is redacted whole
// before the message (maxMessage) or the excerpt (maxExcerpt) is cut,
// whatever its offset around the cut, so no part of it is left.
func TestAPIKeyRedactedAcrossCuts(t *testing.T) {
	t.Parallel()
	const key = "QZX7pk_live_key_0123"
	for _, tc := range []struct {
		name string
		cut  int
		body func(pad string) string
	}{
		{"message", maxMessage, func(pad string) string {
			return `{"error":"PAY_002","message":"` + pad + key + strings.Repeat(".", 40) + `"}`
		}},
		{"excerpt", maxExcerpt, func(pad string) string { return "<p>" + pad[3:] + key + strings.Repeat(".", 40) + "</p>" }},
		{"non-string message", maxMessage, func(pad string) string {
			return `{"error":"PAY_002","message":["` + pad[2:] + key + strings.Repeat(".", 40) + `"]}`
		}},
	} {
		for start := tc.cut - len(key) - 2; start <= tc.cut+2; start++ {
			c, err := NewClient(testBase, key, HMACSigner(testSecret), WithMaxRetries(0),
				WithHTTPClient(mockHTTP(t, 400, tc.body(strings.Repeat(".", start)), nil)))
			require.NoError(t, err)
			_, err = c.GetPayment(ctx, paymentID)
			var e *Error
			require.ErrorAs(t, err, &e)
			for i := 4; i <= len(key); i++ {
				if strings.Contains(e.Message, key[:i]) || strings.Contains(e.Error(), key[:i]) {
					t.Errorf("%s, key at %d: its first %d bytes are left", tc.name, start, i)
					break
				}
			}
		}
	}
}

// TestEchoedSignatureInAnAnswerRedacted: a 2xx answer that echoes the
// request's X-Signature (or the API key) in a field the SDK quotes when
// the answer is not the resource asked for does not put it in the error.
func TestEchoedSignatureInAnAnswerRedacted(t *testing.T) {
	t.Parallel()
	for _, body := range []func(sig string) string{
		func(sig string) string { return paymentBody(sig, "o-1", "100", "PENDING") },
		func(sig string) string { // a timestamp's error quotes it, cut to 40 bytes
			return strings.Replace(paymentBody(paymentID, "o-1", "100", "PENDING"), "2026-11-22T10:20:00Z", sig, 1)
		},
		func(string) string { return paymentBody(testKey, "o-1", "100", "PENDING") },
	} {
		var mu sync.Mutex
		var sig string
		c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sig = r.Header.Get("X-Signature")
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body(r.Header.Get("X-Signature")))
		}), WithMaxRetries(0))
		_, err := c.GetPayment(ctx, paymentID)
		require.Error(t, err)
		mu.Lock()
		require.Len(t, sig, 64)
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			assert.False(t, strings.Contains(text, sig[:minCutPrefix]) || strings.Contains(text, sig[48:]), "the error shows the signature")
			assert.False(t, strings.Contains(text, testKey), "the error shows the API key")
		}
		mu.Unlock()
	}
}
