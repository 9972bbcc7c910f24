package paykit

// Tests of the input checks (validate.go and the checks each method makes
// with its helpers): every refusal is a *ValidationError naming the field,
// matching ErrInvalidParameters, with nothing sent.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPaymentValidationSendsNothing(t *testing.T) {
	t.Parallel()
	valid := CreatePaymentParams{ExtID: "o-1", Amount: dec("100")}
	with := func(f func(*CreatePaymentParams)) CreatePaymentParams { p := valid; f(&p); return p }
	bigImage := append(pngBytes(t), make([]byte, MaxAttachmentSize)...)
	cases := []struct {
		name  string
		field string
		call  func(c *Client) error
	}{
		{"amount below 100", "amount", createWith(with(func(p *CreatePaymentParams) { p.Amount = dec("99.99") }))},
		{"amount above 300000", "amount", createWith(with(func(p *CreatePaymentParams) { p.Amount = dec("300000.01") }))},
		{"zero amount", "amount", createWith(with(func(p *CreatePaymentParams) { p.Amount = dec("0") }))},
		{"empty ext_id", "ext_id", createWith(with(func(p *CreatePaymentParams) { p.ExtID = "" }))},
		{"256-character ext_id", "ext_id", createWith(with(func(p *CreatePaymentParams) { p.ExtID = strings.Repeat("я", 256) }))},
		{"invalid UTF-8 ext_id", "ext_id", createWith(with(func(p *CreatePaymentParams) { p.ExtID = "a\xffb" }))},
		{"unknown method", "method", createWith(with(func(p *CreatePaymentParams) { p.Method = "card" }))},
		{"unknown country", "country", createWith(with(func(p *CreatePaymentParams) { p.Method, p.Country = MethodCrossBorder, "RU" }))},
		{"country without cross-border", "country", createWith(with(func(p *CreatePaymentParams) { p.Country = CountryKZ }))},
		{"relative notify_url", "notify_url", createWith(with(func(p *CreatePaymentParams) { p.NotifyURL = "/hook" }))},
		{"get: not a UUID", "id", func(c *Client) error { _, err := c.GetPayment(ctx, "../balance"); return err }},
		{"get: braces UUID", "id", func(c *Client) error { _, err := c.GetPayment(ctx, "{"+paymentID+"}"); return err }},
		{"get: bare hex UUID", "id", func(c *Client) error {
			_, err := c.GetPayment(ctx, strings.ReplaceAll(paymentID, "-", ""))
			return err
		}},
		{"by ext id: empty", "ext_id", func(c *Client) error { _, err := c.GetPaymentByExtID(ctx, ""); return err }},
		{"confirm: bad id", "id", func(c *Client) error { _, err := c.ConfirmPayment(ctx, "x", nil); return err }},
		{"confirm: not an image", "attachment", func(c *Client) error {
			_, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Filename: "r.png", Content: strings.NewReader("%PDF-1.7 not an image")})
			return err
		}},
		{"confirm: over 10 MiB", "attachment", func(c *Client) error {
			_, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Content: bytes.NewReader(bigImage)})
			return err
		}},
		{"confirm: empty file", "attachment", func(c *Client) error {
			_, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Content: strings.NewReader("")})
			return err
		}},
		{"confirm: nil content", "attachment", func(c *Client) error {
			_, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Filename: "x.png"})
			return err
		}},
		{"cancel: bad id", "id", func(c *Client) error { _, err := c.CancelPayment(ctx, "1"); return err }},
		{"dispute: bad id", "id", func(c *Client) error { _, err := c.OpenDispute(ctx, "1", OpenDisputeParams{}); return err }},
		{"dispute: negative amount", "amount", func(c *Client) error {
			_, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec("-1")})
			return err
		}},
		// The sandbox's bounds (the payment's): the SDK refuses what it
		// would answer PAY_002 to, so both agree.
		{"dispute: amount under the payment minimum", "amount", func(c *Client) error {
			_, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec("99.99")})
			return err
		}},
		{"dispute: amount over the payment maximum", "amount", func(c *Client) error {
			_, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec("300000.01")})
			return err
		}},
		{"dispute: bad receipt_url", "receipt_url", func(c *Client) error {
			_, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{ReceiptURL: "ftp://x/y"})
			return err
		}},
		{"cancel dispute: bad id", "id", func(c *Client) error { _, err := c.CancelDispute(ctx, ""); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, cardPaymentJSON)
			err := tc.call(c)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Field)
			assert.ErrorIs(t, err, ErrInvalidParameters)
			assert.Equal(t, 0, rec.count(), "nothing may be sent")
		})
	}
}

func createWith(p CreatePaymentParams) func(c *Client) error {
	return func(c *Client) error { _, err := c.CreatePayment(ctx, p); return err }
}

func TestPaymentBoundsAccepted(t *testing.T) {
	t.Parallel()
	for _, p := range []CreatePaymentParams{
		{ExtID: "a", Amount: dec("100.00")},
		{ExtID: strings.Repeat("я", 255), Amount: dec("300000")},
		{ExtID: "cb", Amount: dec("150"), Method: MethodCrossBorder},
	} {
		c, rec := echoClient(t, http.StatusOK, cardPaymentJSON)
		_, err := c.CreatePayment(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, 1, rec.count())
	}
}

func TestCreatePayoutValidation(t *testing.T) {
	t.Parallel()
	valid := CreatePayoutParams{ExtID: "po-1", Amount: dec("2500.00"), Method: PayoutMethodCard,
		Requisites: "4111111111111111", HolderName: "IVAN IVANOV"}
	tests := []struct {
		name   string
		mutate func(p *CreatePayoutParams)
		field  string
	}{
		{"empty ext_id", func(p *CreatePayoutParams) { p.ExtID = "" }, "ext_id"},
		{"ext_id not UTF-8", func(p *CreatePayoutParams) { p.ExtID = "po-\xff" }, "ext_id"},
		{"zero amount", func(p *CreatePayoutParams) { p.Amount = dec("0") }, "amount"},
		{"zero amount with decimals", func(p *CreatePayoutParams) { p.Amount = dec("0.00") }, "amount"},
		{"unset amount", func(p *CreatePayoutParams) { p.Amount = decimal.Decimal{} }, "amount"},
		{"negative amount", func(p *CreatePayoutParams) { p.Amount = dec("-1.00") }, "amount"},
		{"empty method", func(p *CreatePayoutParams) { p.Method = "" }, "method"},
		{"unknown method", func(p *CreatePayoutParams) { p.Method = "crypto" }, "method"},
		{"upper-case method", func(p *CreatePayoutParams) { p.Method = "CARD" }, "method"},
		{"empty requisites", func(p *CreatePayoutParams) { p.Requisites = "" }, "requisites"},
		{"blank requisites", func(p *CreatePayoutParams) { p.Requisites = "   " }, "requisites"},
		{"empty holder_name", func(p *CreatePayoutParams) { p.HolderName = "" }, "holder_name"},
		{"blank holder_name", func(p *CreatePayoutParams) { p.HolderName = "\t " }, "holder_name"},
		{"notify_url without scheme", func(p *CreatePayoutParams) { p.NotifyURL = "shop.example/cb" }, "notify_url"},
		{"notify_url relative", func(p *CreatePayoutParams) { p.NotifyURL = "/hooks/payout" }, "notify_url"},
		{"notify_url ftp", func(p *CreatePayoutParams) { p.NotifyURL = "ftp://shop.example/cb" }, "notify_url"},
		{"notify_url without host", func(p *CreatePayoutParams) { p.NotifyURL = "https://" }, "notify_url"},
		{"notify_url malformed", func(p *CreatePayoutParams) { p.NotifyURL = "http://[::1" }, "notify_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, payoutPendingJSON)
			p := valid
			tt.mutate(&p)
			got, err := c.CreatePayout(context.Background(), p)
			assert.Nil(t, got)
			opRequireValidation(t, err, rec, tt.field)
		})
	}
}

func TestGetPayoutByExtIDValidation(t *testing.T) {
	t.Parallel()
	for _, extID := range []string{"", "bad-\xc3"} {
		c, rec := mockClient(t, http.StatusOK, payoutCompletedJSON)
		p, err := c.GetPayoutByExtID(context.Background(), extID)
		assert.Nil(t, p)
		opRequireValidation(t, err, rec, "ext_id")
	}
}

func TestGetPayoutIDValidation(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"empty":             "",
		"braces":            "{" + payoutID + "}",
		"32 hex no hyphens": "0b7d3c2a1e4f4a5b8c6d7e8f9a0b1c2d",
		"urn":               "urn:uuid:" + payoutID,
		"too short":         payoutID[:35],
		"non-hex":           "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2g",
		"hyphens misplaced": "0b7d3c2a1-e4f-4a5b-8c6d-7e8f9a0b1c2d",
		"path traversal":    "../../v1/balance",
		"ext id":            "po-1",
		"trailing space":    payoutID + " ",
	}
	for name, id := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, payoutCompletedJSON)
			p, err := c.GetPayout(context.Background(), id)
			assert.Nil(t, p)
			opRequireValidation(t, err, rec, "id")
		})
	}
	// The canonical 36-character form is accepted in either case and sent as given.
	for _, id := range []string{payoutID, "0B7D3C2A-1E4F-4A5B-8C6D-7E8F9A0B1C2D"} {
		c, rec := mockClient(t, http.StatusOK, payoutCompletedJSON)
		_, err := c.GetPayout(context.Background(), id)
		require.NoError(t, err, id)
		assertWire(t, rec.only(t), http.MethodGet, "/v1/payouts/"+id, "", "")
	}
}

func TestListPayoutsValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		params ListPayoutsParams
		field  string
	}{
		{"negative limit", ListPayoutsParams{Limit: -1}, "limit"},
		{"negative offset", ListPayoutsParams{Offset: -5}, "offset"},
		{"to before from", ListPayoutsParams{From: time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC),
			To: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, "to"},
		{"to before from across zones", ListPayoutsParams{From: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
			To: time.Date(2024, 5, 1, 14, 0, 0, 0, time.FixedZone("MSK", 3*60*60))}, "to"},
		{"unknown status", ListPayoutsParams{Status: "on_hold"}, "status"},
		{"upper-case status", ListPayoutsParams{Status: "PENDING"}, "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, payoutListJSON)
			l, err := c.ListPayouts(context.Background(), tt.params)
			assert.Nil(t, l)
			opRequireValidation(t, err, rec, tt.field)
		})
	}
}

func TestCreateTransferValidation(t *testing.T) {
	t.Parallel()
	valid := CreateTransferParams{FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec("150.25")}
	tests := []struct {
		name   string
		mutate func(*CreateTransferParams)
		field  string
	}{
		{"empty from", func(p *CreateTransferParams) { p.FromTerminalID = "" }, "from_terminal_id"},
		{"blank from", func(p *CreateTransferParams) { p.FromTerminalID = "  " }, "from_terminal_id"},
		{"empty to", func(p *CreateTransferParams) { p.ToTerminalID = "" }, "to_terminal_id"},
		{"blank to", func(p *CreateTransferParams) { p.ToTerminalID = "\n" }, "to_terminal_id"},
		{"unset amount", func(p *CreateTransferParams) { p.Amount = decimal.Decimal{} }, "amount"},
		{"zero amount", func(p *CreateTransferParams) { p.Amount = dec("0.00") }, "amount"},
		{"negative amount", func(p *CreateTransferParams) { p.Amount = dec("-10") }, "amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, transferJSON)
			p := valid
			tt.mutate(&p)
			tr, err := c.CreateTransfer(context.Background(), p)
			assert.Nil(t, tr)
			opRequireValidation(t, err, rec, tt.field)
		})
	}
}

func TestCreateWithdrawalValidation(t *testing.T) {
	t.Parallel()
	valid := CreateWithdrawalParams{TerminalID: "term-main", Amount: dec("100.00"), Address: tronAddress}
	tests := []struct {
		name   string
		mutate func(*CreateWithdrawalParams)
		field  string
	}{
		{"empty terminal", func(p *CreateWithdrawalParams) { p.TerminalID = "" }, "terminal_id"},
		{"blank terminal", func(p *CreateWithdrawalParams) { p.TerminalID = " " }, "terminal_id"},
		{"unset amount", func(p *CreateWithdrawalParams) { p.Amount = decimal.Decimal{} }, "amount"},
		{"zero amount", func(p *CreateWithdrawalParams) { p.Amount = dec("0.000") }, "amount"},
		{"negative amount", func(p *CreateWithdrawalParams) { p.Amount = dec("-0.01") }, "amount"},
		{"empty address", func(p *CreateWithdrawalParams) { p.Address = "" }, "address"},
		{"blank address", func(p *CreateWithdrawalParams) { p.Address = "\t" }, "address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, withdrawalPendingJSON)
			p := valid
			tt.mutate(&p)
			w, err := c.CreateWithdrawal(context.Background(), p)
			assert.Nil(t, w)
			opRequireValidation(t, err, rec, tt.field)
		})
	}
}

func TestGetWithdrawalIDValidation(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"empty":             "",
		"braces":            "{" + withdrawID + "}",
		"32 hex no hyphens": "9a8b7c6d5e4f4321876543210fedcba9",
		"urn":               "urn:uuid:" + withdrawID,
		"fee keyword":       "fee",
		"path traversal":    "../payouts",
		"non-hex":           "9a8b7c6d-5e4f-4321-8765-43210fedcbaz",
	}
	for name, id := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := mockClient(t, http.StatusOK, withdrawalCompletedJSON)
			w, err := c.GetWithdrawal(context.Background(), id)
			assert.Nil(t, w)
			opRequireValidation(t, err, rec, "id")
		})
	}
	upper := "9A8B7C6D-5E4F-4321-8765-43210FEDCBA9"
	c, rec := mockClient(t, http.StatusOK, withdrawalCompletedJSON)
	_, err := c.GetWithdrawal(context.Background(), upper)
	require.NoError(t, err)
	assertWire(t, rec.only(t), http.MethodGet, "/v1/withdrawals/"+upper, "", "")
}

// Money at its currency's scale: a RUB amount (payment, payout, dispute)
// finer than a kopeck and a USDT amount (transfer, withdrawal) finer than
// six decimals are refused before sending; the value counts, not how many
// zeros it is written with, and answers decode at any scale.
func TestAmountScale(t *testing.T) {
	t.Parallel()
	payment := func(a string) func(*Client) error {
		return func(c *Client) error {
			_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "o-1", Amount: dec(a)})
			return err
		}
	}
	payout := func(a string) func(*Client) error {
		return func(c *Client) error {
			_, err := c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec(a), Method: PayoutMethodCard,
				Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
			return err
		}
	}
	dispute := func(a string) func(*Client) error {
		return func(c *Client) error {
			_, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec(a)})
			return err
		}
	}
	transfer := func(a string) func(*Client) error {
		return func(c *Client) error {
			_, err := c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "term-main", ToTerminalID: "term-2", Amount: dec(a)})
			return err
		}
	}
	withdrawal := func(a string) func(*Client) error {
		return func(c *Client) error {
			_, err := c.CreateWithdrawal(ctx, CreateWithdrawalParams{TerminalID: "term-main", Amount: dec(a), Address: tronAddress})
			return err
		}
	}

	refused := map[string]func(*Client) error{
		"payment 1500.505":             payment("1500.505"),
		"payment 300.00000000000004":   payment("300.00000000000004"),
		"payment 100.001":              payment("100.001"),
		"payout 2500.001":              payout("2500.001"),
		"payout 0.001":                 payout("0.001"),
		"dispute 1400.005":             dispute("1400.005"),
		"transfer 150.1234567":         transfer("150.1234567"),
		"transfer 0.00000000000000001": transfer("0.00000000000000001"),
		"withdrawal 100.0000001":       withdrawal("100.0000001"),
	}
	for name, call := range refused {
		c, rec := mockClient(t, http.StatusOK, cardPaymentJSON)
		err := call(c)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, name)
		assert.Equal(t, "amount", ve.Field, name)
		assert.ErrorIs(t, err, ErrInvalidParameters, name)
		assert.Equal(t, 0, rec.count(), "%s: nothing sent", name)
	}

	accepted := []struct {
		name   string
		call   func(*Client) error
		body   string
		uri    string
		answer string
	}{
		{"payment 1500.500 is two decimals", payment("1500.500"), `{"ext_id":"o-1","amount":1500.500}`, "/v1/payments", cardPaymentJSON},
		{"payment 300.10", payment("300.10"), `{"ext_id":"o-1","amount":300.10}`, "/v1/payments", cardPaymentJSON},
		{"payout 2500.01", payout("2500.01"), `{"ext_id":"po-1","amount":2500.01,"method":"card","requisites":"4111111111111111","holder_name":"IVAN IVANOV"}`,
			"/v1/payouts", payoutPendingJSON},
		{"transfer 150.123456", transfer("150.123456"), `{"from_terminal_id":"term-main","to_terminal_id":"term-2","amount":150.123456}`,
			"/v1/transfers", transferJSON},
		{"withdrawal 100.0000010", withdrawal("100.0000010"), `{"terminal_id":"term-main","amount":100.0000010,"address":"` + tronAddress + `"}`,
			"/v1/withdrawals", withdrawalPendingJSON},
	}
	for _, tc := range accepted {
		c, rec := echoClient(t, http.StatusOK, tc.answer)
		require.NoError(t, tc.call(c), tc.name)
		assertWire(t, rec.only(t), "POST", tc.uri, "application/json", tc.body)
	}
	c, rec := mockClient(t, http.StatusOK, `{"id":"`+paymentID+`","ext_id":"order-1001","amount":1500.50,"status":"dispute",`+
		`"dispute":{"amount":1400.05,"created_at":"2026-11-22T11:00:00Z"}}`)
	require.NoError(t, dispute("1400.050")(c))
	assertWire(t, rec.only(t), "POST", "/v1/payments/"+paymentID+"/dispute", "application/json", `{"amount":1400.050}`)

	// Answers are the service's word, whatever their scale.
	c, _ = mockClient(t, http.StatusOK, paymentBody(paymentID, "order-A", "1500.505", "PENDING"))
	p, err := c.GetPayment(ctx, paymentID)
	require.NoError(t, err)
	assertDec(t, "1500.505", p.Amount, "amount")
	c, _ = mockClient(t, http.StatusOK, `{"id":"`+withdrawID+`","amount":100.12345678,"fee":2.123456789,"status":"pending"}`)
	w, err := c.GetWithdrawal(ctx, withdrawID)
	require.NoError(t, err)
	assertDec(t, "100.12345678", w.Amount, "amount")
	assertDec(t, "2.123456789", w.Fee, "fee")
}

// echoMoney is a service that applies every write and echoes the amount
// it was sent, digit for digit, as the real one does: what the SDK sends,
// it must be able to read back.
type echoMoney struct {
	mu    sync.Mutex
	posts []string // the bodies received
}

func (s *echoMoney) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.posts = append(s.posts, string(body))
	s.mu.Unlock()
	var in map[string]json.RawMessage
	json.Unmarshal(body, &in)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/transfers":
		fmt.Fprintf(w, `{"success":true,"from_terminal_id":%s,"to_terminal_id":%s,"amount":%s,"currency":"USDT"}`,
			in["from_terminal_id"], in["to_terminal_id"], in["amount"])
	case "/v1/payouts":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%q,"ext_id":%s,"amount":%s,"currency":"RUB","method":%s,"requisites":%s,"holder_name":%s,`+
			`"bank":"","status":"pending","created_at":"2026-11-22T10:00:00Z"}`,
			payoutID, in["ext_id"], in["amount"], in["method"], in["requisites"], in["holder_name"])
	}
}

func (s *echoMoney) bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.posts...)
}

// Issue 35 §3: an amount written with more than 40 digits (the most the
// decoder reads) is refused before sending; one of 40 is sent and its
// echo read back, so a confirmed move never reads as unknown for its own
// amount.
func TestAmountWrittenWithMoreDigitsThanReadBack(t *testing.T) {
	t.Parallel()
	usdt40 := strings.Repeat("9", 34) + ".123456" // 40 digits
	usdt41 := "9" + usdt40
	rub40 := strings.Repeat("9", 38) + ".50"
	transfer := func(c *Client, amount string) (decimal.Decimal, error) {
		tr, err := c.CreateTransfer(ctx, CreateTransferParams{FromTerminalID: "term-a", ToTerminalID: "term-b", Amount: dec(amount)})
		if err != nil {
			return decimal.Decimal{}, err
		}
		return tr.Amount, nil
	}
	payout := func(c *Client, amount string) (decimal.Decimal, error) {
		p, err := c.CreatePayout(ctx, CreatePayoutParams{ExtID: "po-1", Amount: dec(amount), Method: PayoutMethodCard,
			Requisites: "2200000000000004", HolderName: "Ivan Ivanov"})
		if err != nil {
			return decimal.Decimal{}, err
		}
		return p.Amount, nil
	}
	for _, tc := range []struct {
		name   string
		call   func(*Client, string) (decimal.Decimal, error)
		amount string
		sent   bool
	}{
		{"transfer of 40 digits", transfer, usdt40, true},
		{"transfer of 41 digits", transfer, usdt41, false},
		{"transfer of 10.5 with 40 trailing zeros", transfer, "10.5" + strings.Repeat("0", 40), false},
		{"payout of 40 digits", payout, rub40, true},
		{"payout of 41 digits", payout, "1" + rub40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &echoMoney{}
			c, _ := serverClient(t, srv)
			got, err := tc.call(c, tc.amount)
			if !tc.sent {
				var ve *ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, "amount", ve.Field)
				assert.ErrorIs(t, err, ErrInvalidParameters)
				assert.NotErrorIs(t, err, ErrUnknownOutcome)
				assert.EqualError(t, err, "paykit: invalid amount: is written with more than 40 digits, more than the SDK reads back")
				assert.Empty(t, srv.bodies(), "nothing sent")
				return
			}
			require.NoError(t, err, "the echo of what was sent is read back")
			require.Len(t, srv.bodies(), 1)
			body := srv.bodies()[0]
			i := strings.Index(body, `"amount":`+tc.amount)
			require.GreaterOrEqual(t, i, 0, "sent digit for digit")
			assert.Contains(t, ",}", body[i+len(`"amount":`+tc.amount):][:1], "sent digit for digit, no more")
			assertDec(t, tc.amount, got, "amount")
		})
	}
	err := CreatePaymentParams{ExtID: "o-1", Amount: dec("1500.50" + strings.Repeat("0", 40))}.validate()
	assert.ErrorIs(t, err, ErrInvalidParameters, "a payment amount in bounds, written with too many digits")
}

// Issue 35 §3: Do refuses, before any network call, an out encoding/json
// cannot decode into (a func, a channel, a complex number, a map with keys
// it cannot take, or a pointer, slice, array or map of one), which a POST
// would otherwise report as an unknown outcome once applied; every out it
// can decode into is still taken.
func TestDoRefusesAnOutOfATypeJSONCannotDecode(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	c, _ := serverClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	var (
		fn     func()
		ch     chan int
		fnPtr  *func()
		cplx   complex128
		fns    []func()
		chans  map[string]chan int
		boolKm map[bool]int
		arr    [2]func()
	)
	for name, out := range map[string]any{"*func()": &fn, "*chan int": &ch, "**func()": &fnPtr, "*complex128": &cplx,
		"*[]func()": &fns, "*map[string]chan int": &chans, "*map[bool]int": &boolKm, "*[2]func()": &arr} {
		err := c.Do(ctx, http.MethodPost, "/v1/transfers", map[string]string{"amount": "1"}, out)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, name)
		assert.Equal(t, "out", ve.Field, name)
		assert.NotErrorIs(t, err, ErrUnknownOutcome, name)
	}
	assert.Equal(t, int32(0), requests.Load(), "nothing sent")

	var (
		raw     json.RawMessage
		m       map[string]any
		intKeys map[int]string
		when    time.Time
		withFn  struct{ F func() } // a field the answer does not name is never decoded
		anyV    any
	)
	for name, out := range map[string]any{"*json.RawMessage": &raw, "*map[string]any": &m, "*map[int]string": &intKeys,
		"*time.Time (decodes itself)": &when, "*struct{F func()}": &withFn, "*any": &anyV} {
		err := c.Do(ctx, http.MethodPost, "/v1/transfers", nil, out)
		if name == "*time.Time (decodes itself)" {
			assert.ErrorIs(t, err, ErrUnknownOutcome, "sent; its answer is no time")
			continue
		}
		assert.NoError(t, err, name)
	}
	assert.Equal(t, int32(6), requests.Load(), "each decodable out sent once")
}
