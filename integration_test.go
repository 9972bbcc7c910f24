package paykit_test

// Integration tests: the SDK driven against its own stateful sandbox over
// real loopback HTTP. Each test gets its own sandbox, httptest server and
// client, with the sandbox clock frozen at t0 (moved only by sb.Advance), so
// every timestamp is asserted exactly. Money is compared as decimal.Decimal
// (Equal / String), never as float64. Nothing here sleeps: webhook
// deliveries are awaited with sb.FlushWebhooks.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// t0 is the frozen base of every sandbox clock in this file.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// unknownID is a well-formed UUID that no sandbox ever issues.
const unknownID = "00000000-0000-4000-8000-000000000000"

type itEnv struct {
	sb  *sandbox.Server
	ts  *httptest.Server
	c   *paykit.Client
	key string
}

// newEnv serves a fresh sandbox on loopback and returns a client of it. The
// client retries quickly (1-5 ms) so that retry paths stay fast.
func newEnv(t *testing.T, cfg sandbox.Config, opts ...paykit.Option) *itEnv {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0 }
	}
	if cfg.WebhookRetryWait == 0 {
		cfg.WebhookRetryWait = time.Millisecond
	}
	sb := sandbox.New(cfg)
	ts := httptest.NewServer(sb)
	t.Cleanup(func() { ts.Close(); sb.Close() })
	key, secret := sandbox.DefaultAPIKey, sandbox.DefaultSecret
	if len(cfg.Merchants) > 0 {
		key, secret = cfg.Merchants[0].APIKey, cfg.Merchants[0].Secret
	}
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(ts.URL, key, paykit.HMACSigner(secret), opts...)
	require.NoError(t, err)
	return &itEnv{sb: sb, ts: ts, c: c, key: key}
}

// client returns another client of the same sandbox.
func (e *itEnv) client(t *testing.T, key, secret string, opts ...paykit.Option) *paykit.Client {
	t.Helper()
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(e.ts.URL, key, paykit.HMACSigner(secret), opts...)
	require.NoError(t, err)
	return c
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// assertDec checks a money value exactly, by decimal equality.
func assertDec(t *testing.T, want string, got decimal.Decimal, what string) {
	t.Helper()
	if !got.Equal(dec(want)) {
		t.Errorf("%s = %s, want %s", what, got.String(), want)
	}
}

// requireAPIError checks that err is an *paykit.Error with the given code
// and HTTP status that matches sentinel with errors.Is.
func requireAPIError(t *testing.T, err error, sentinel error, code string, status int) *paykit.Error {
	t.Helper()
	require.Error(t, err)
	assert.Truef(t, errors.Is(err, sentinel), "errors.Is(%q, %q) is false", err, sentinel)
	var apiErr *paykit.Error
	require.Truef(t, errors.As(err, &apiErr), "errors.As(%q, *paykit.Error) is false", err)
	assert.Equal(t, code, apiErr.Code, "Code")
	assert.Equal(t, status, apiErr.HTTPStatus, "HTTPStatus")
	return apiErr
}

// pngReceipt encodes a tiny real PNG image.
func pngReceipt(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 1, color.RGBA{B: 255, A: 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func (e *itEnv) pay(t *testing.T, extID, amount string) *paykit.Payment {
	t.Helper()
	p, err := e.c.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: extID, Amount: dec(amount)})
	require.NoError(t, err)
	require.Equal(t, paykit.PaymentStatusPending, p.Status)
	return p
}

func (e *itEnv) processing(t *testing.T, extID, amount string) *paykit.Payment {
	t.Helper()
	p := e.pay(t, extID, amount)
	got, err := e.c.ConfirmPayment(context.Background(), p.ID, nil)
	require.NoError(t, err)
	require.Equal(t, paykit.PaymentStatusProcessing, got.Status)
	return p
}

func (e *itEnv) cancelled(t *testing.T, extID, amount string) *paykit.Payment {
	t.Helper()
	p := e.pay(t, extID, amount)
	got, err := e.c.CancelPayment(context.Background(), p.ID)
	require.NoError(t, err)
	require.Equal(t, paykit.PaymentStatusCancelled, got.Status)
	return p
}

func (e *itEnv) disputed(t *testing.T, extID, amount string, params paykit.OpenDisputeParams) *paykit.Payment {
	t.Helper()
	p := e.cancelled(t, extID, amount)
	got, err := e.c.OpenDispute(context.Background(), p.ID, params)
	require.NoError(t, err)
	require.Equal(t, paykit.PaymentStatusDispute, got.Status)
	return p
}

func (e *itEnv) status(t *testing.T, id string) paykit.PaymentStatus {
	t.Helper()
	p, err := e.c.GetPayment(context.Background(), id)
	require.NoError(t, err)
	return p.Status
}

// terminal returns one terminal as the API reports it.
func (e *itEnv) terminal(t *testing.T, id string) paykit.Terminal {
	t.Helper()
	ts, err := e.c.ListTerminals(context.Background())
	require.NoError(t, err)
	for _, term := range ts {
		if term.ID == id {
			return term
		}
	}
	t.Fatalf("terminal %q not listed", id)
	return paykit.Terminal{}
}

func (e *itEnv) assertTerminal(t *testing.T, id, balance, frozen string) {
	t.Helper()
	term := e.terminal(t, id)
	assertDec(t, balance, term.Balance, id+" balance")
	assertDec(t, frozen, term.BalanceFrozen, id+" balance_frozen")
}

// ---------------------------------------------------------------- payments

func TestIntegrationCreatePaymentEveryMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{MaxSamePendingAmount: 100})
	ctx := context.Background()

	type want struct {
		reqType                      paykit.RequisitesType
		bankCode, bankName           string
		country                      paykit.Country
		currency, amountLocal, phone string
	}
	cases := []struct {
		name   string
		params paykit.CreatePaymentParams
		method paykit.PaymentMethod
		want   want
	}{
		{"default is CARD", paykit.CreatePaymentParams{}, paykit.MethodCard,
			want{reqType: paykit.RequisitesCard, bankCode: "sber", bankName: "Sberbank"}},
		{"CARD", paykit.CreatePaymentParams{Method: paykit.MethodCard, Bank: "vtb", ClientID: "client-7"}, paykit.MethodCard,
			want{reqType: paykit.RequisitesCard, bankCode: "vtb", bankName: "VTB"}},
		{"SBP", paykit.CreatePaymentParams{Method: paykit.MethodSBP, Bank: "tinkoff"}, paykit.MethodSBP,
			want{reqType: paykit.RequisitesSBP, bankCode: "tinkoff", bankName: "T-Bank", phone: "+7"}},
		{"SIM", paykit.CreatePaymentParams{Method: paykit.MethodSIM}, paykit.MethodSIM,
			want{reqType: paykit.RequisitesSIM, bankCode: "sber", bankName: "Sberbank", phone: "+7"}},
		{"CROSS_BORDER TJ", paykit.CreatePaymentParams{Method: paykit.MethodCrossBorder, Country: paykit.CountryTJ}, paykit.MethodCrossBorder,
			want{paykit.RequisitesPhone, "eskhata", "Bank Eskhata", paykit.CountryTJ, "TJS", "180.06", "+992"}},
		{"CROSS_BORDER KZ", paykit.CreatePaymentParams{Method: paykit.MethodCrossBorder, Country: paykit.CountryKZ}, paykit.MethodCrossBorder,
			want{paykit.RequisitesPhone, "kaspi", "Kaspi Bank", paykit.CountryKZ, "KZT", "8402.80", "+7"}},
		{"CROSS_BORDER UZ", paykit.CreatePaymentParams{Method: paykit.MethodCrossBorder, Country: paykit.CountryUZ}, paykit.MethodCrossBorder,
			want{paykit.RequisitesPhone, "kapitalbank", "Kapitalbank", paykit.CountryUZ, "UZS", "210820.25", "+998"}},
		{"CROSS_BORDER KG", paykit.CreatePaymentParams{Method: paykit.MethodCrossBorder, Country: paykit.CountryKG}, paykit.MethodCrossBorder,
			want{paykit.RequisitesPhone, "mbank", "MBank", paykit.CountryKG, "KGS", "1440.48", "+996"}},
		{"CROSS_BORDER KZ by bank", paykit.CreatePaymentParams{Method: paykit.MethodCrossBorder, Country: paykit.CountryKZ, Bank: "halyk"}, paykit.MethodCrossBorder,
			want{paykit.RequisitesPhone, "halyk", "Halyk Bank", paykit.CountryKZ, "KZT", "8402.80", "+7"}},
	}
	for _, tc := range cases {
		params := tc.params
		params.ExtID = "order-" + strings.ReplaceAll(tc.name, " ", "-")
		params.Amount = dec("1500.50")
		p, err := e.c.CreatePayment(ctx, params)
		require.NoError(t, err, tc.name)

		// The create response, field by field.
		assert.NoError(t, uuid.Validate(p.ID), tc.name)
		assert.Equal(t, params.ExtID, p.ExtID, tc.name)
		assertDec(t, "1500.50", p.Amount, tc.name+" amount")
		assert.Equal(t, "1500.50", p.Amount.StringFixed(2), tc.name)
		assert.Equal(t, "RUB", p.Currency, tc.name)
		assert.Equal(t, paykit.PaymentStatusPending, p.Status, tc.name)
		assert.Equal(t, tc.method, p.Method, tc.name)
		assert.Equal(t, e.ts.URL+"/pay/"+p.ID, p.PaymentURL, tc.name)
		assert.True(t, p.CreatedAt.Equal(t0), "%s created_at %v", tc.name, p.CreatedAt)
		assert.Equal(t, time.UTC, p.CreatedAt.Location(), tc.name)
		assert.Equal(t, time.UTC, p.ValidUntil.Location(), tc.name)
		assert.True(t, p.ValidUntil.Equal(t0.Add(sandbox.DefaultPaymentTTL)), "%s valid_until %v", tc.name, p.ValidUntil)
		assertDec(t, "92.50", p.USDTRate, tc.name+" usdt_rate")
		assert.Empty(t, p.Message, tc.name)
		assert.Nil(t, p.Dispute, tc.name)

		r := p.Requisites
		assert.Equal(t, tc.want.reqType, r.Type, tc.name)
		assert.Equal(t, tc.want.bankCode, r.BankCode, tc.name)
		assert.Equal(t, tc.want.bankName, r.BankName, tc.name)
		assert.NotEmpty(t, r.Holder, tc.name)
		assert.Equal(t, tc.want.country, r.Country, tc.name)
		assert.Equal(t, tc.want.currency, r.Currency, tc.name)
		if tc.want.amountLocal != "" {
			assertDec(t, tc.want.amountLocal, r.AmountLocal, tc.name+" amount_local")
		} else {
			assert.True(t, r.AmountLocal.IsZero(), tc.name)
		}
		if tc.want.reqType == paykit.RequisitesCard {
			assert.Len(t, r.Value, 16, tc.name)
		} else {
			assert.True(t, strings.HasPrefix(r.Value, tc.want.phone), "%s value %q", tc.name, r.Value)
		}

		// GET by id and by ext_id: same payment, requisites reduced to
		// type, value, bank and holder, usdt_rate still present.
		for _, get := range []func() (*paykit.Payment, error){
			func() (*paykit.Payment, error) { return e.c.GetPayment(ctx, p.ID) },
			func() (*paykit.Payment, error) { return e.c.GetPaymentByExtID(ctx, p.ExtID) },
		} {
			g, err := get()
			require.NoError(t, err, tc.name)
			assert.Equal(t, p.ID, g.ID, tc.name)
			assert.Equal(t, p.ExtID, g.ExtID, tc.name)
			assertDec(t, "1500.50", g.Amount, tc.name+" get amount")
			assert.Equal(t, "RUB", g.Currency, tc.name)
			assert.Equal(t, paykit.PaymentStatusPending, g.Status, tc.name)
			assert.Equal(t, tc.method, g.Method, tc.name)
			assert.Equal(t, p.PaymentURL, g.PaymentURL, tc.name)
			assert.True(t, g.CreatedAt.Equal(p.CreatedAt), tc.name)
			assert.True(t, g.ValidUntil.Equal(p.ValidUntil), tc.name)
			assertDec(t, "92.50", g.USDTRate, tc.name+" get usdt_rate")
			assert.Equal(t, r.Type, g.Requisites.Type, tc.name)
			assert.Equal(t, r.Value, g.Requisites.Value, tc.name)
			assert.Equal(t, r.Holder, g.Requisites.Holder, tc.name)
			if tc.method == paykit.MethodCrossBorder {
				// "bank" holds the code; no name, country or local amount.
				assert.Equal(t, tc.want.bankCode, g.Requisites.BankCode, tc.name)
				assert.Empty(t, g.Requisites.BankName, tc.name)
			} else {
				// "bank" holds the name; no bank_code outside create.
				assert.Equal(t, tc.want.bankName, g.Requisites.BankName, tc.name)
				assert.Empty(t, g.Requisites.BankCode, tc.name)
			}
			assert.Empty(t, g.Requisites.Country, tc.name)
			assert.True(t, g.Requisites.AmountLocal.IsZero(), tc.name)
		}
	}
	// amount_local is rounded half away from zero: 100.03 x 140.50 = 14054.215.
	uz, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "uz-round", Amount: dec("100.03"),
		Method: paykit.MethodCrossBorder, Country: paykit.CountryUZ, Bank: "ipakyuli"})
	require.NoError(t, err)
	assert.Equal(t, "14054.22", uz.Requisites.AmountLocal.StringFixed(2))
	assert.Equal(t, "ipakyuli", uz.Requisites.BankCode)
	assert.Equal(t, "Ipak Yuli Bank", uz.Requisites.BankName)
	assert.Equal(t, len(cases)+1, e.sb.Stats(e.key).Payments)
}

func TestIntegrationGetPaymentByExtIDEscaping(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	for i, extID := range []string{"a/b?c#d", "заказ №1", "100% off & more", "a+b c", "..", ".", "%2F", strings.Repeat("x", paykit.MaxExtIDLength)} {
		amount := decimal.NewFromInt(int64(100 + i))
		p, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: extID, Amount: amount})
		require.NoError(t, err, "%q", extID)
		assert.Equal(t, extID, p.ExtID)
		g, err := e.c.GetPaymentByExtID(ctx, extID)
		if !assert.NoError(t, err, "GetPaymentByExtID(%q)", extID) {
			continue
		}
		assert.Equal(t, p.ID, g.ID, "%q", extID)
		assert.Equal(t, extID, g.ExtID)
		assert.True(t, g.Amount.Equal(amount), "%q amount %s", extID, g.Amount)
	}
	// A prefix or a near miss is not found.
	_, err := e.c.GetPaymentByExtID(ctx, "a")
	requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
	_, err = e.c.GetPaymentByExtID(ctx, "a/b")
	requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
}

func TestIntegrationConfirmPayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		receipt *paykit.Attachment
	}{
		{"png receipt", &paykit.Attachment{Filename: "receipt.png", Content: bytes.NewReader(pngReceipt(t))}},
		{"png receipt without a name", &paykit.Attachment{Content: bytes.NewReader(pngReceipt(t))}},
		{"no receipt", nil},
	} {
		created, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "confirm-" + tc.name, Amount: dec("2500"), Method: paykit.MethodSBP})
		require.NoError(t, err)
		p, err := e.c.ConfirmPayment(ctx, created.ID, tc.receipt)
		require.NoError(t, err, tc.name)
		assert.Equal(t, created.ID, p.ID, tc.name)
		assert.Equal(t, created.ExtID, p.ExtID, tc.name)
		assertDec(t, "2500", p.Amount, tc.name)
		assert.Equal(t, "RUB", p.Currency, tc.name)
		assert.Equal(t, paykit.PaymentStatusProcessing, p.Status, tc.name)
		assert.Equal(t, paykit.MethodSBP, p.Method, tc.name)
		assert.Equal(t, paykit.RequisitesSBP, p.Requisites.Type, tc.name)
		assert.Equal(t, created.Requisites.Value, p.Requisites.Value, tc.name)
		assert.Equal(t, created.Requisites.BankName, p.Requisites.BankName, tc.name)
		assert.Equal(t, created.Requisites.Holder, p.Requisites.Holder, tc.name)
		assert.Equal(t, created.PaymentURL, p.PaymentURL, tc.name)
		assert.True(t, p.ValidUntil.Equal(created.ValidUntil), tc.name)
		assert.True(t, p.CreatedAt.Equal(t0), tc.name)
		assert.NotEmpty(t, p.Message, tc.name)
		assert.Equal(t, paykit.PaymentStatusProcessing, e.status(t, created.ID), tc.name)
	}
}

// TestIntegrationPaymentTransitions drives every row of the spec's payment
// state table and checks the terminal credit of each completion.
func TestIntegrationPaymentTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	main := sandbox.DefaultMainTerminalID

	t.Run("PENDING to PROCESSING by confirm", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.processing(t, "p1", "1000")
		assert.Equal(t, paykit.PaymentStatusProcessing, e.status(t, p.ID))
		e.assertTerminal(t, main, "1000.00", "0.00") // nothing credited yet
	})

	t.Run("PENDING to CANCELLED by cancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		created := e.pay(t, "p1", "1000")
		p, err := e.c.CancelPayment(ctx, created.ID)
		require.NoError(t, err)
		assert.Equal(t, created.ID, p.ID)
		assert.Equal(t, "p1", p.ExtID)
		assertDec(t, "1000", p.Amount, "amount")
		assert.Equal(t, "RUB", p.Currency)
		assert.Equal(t, paykit.PaymentStatusCancelled, p.Status)
		assert.Equal(t, paykit.MethodCard, p.Method)
		assert.Equal(t, created.Requisites.Value, p.Requisites.Value)
		assert.Equal(t, "Sberbank", p.Requisites.BankName)
		assert.Equal(t, created.PaymentURL, p.PaymentURL)
		assert.True(t, p.ValidUntil.Equal(created.ValidUntil))
		assert.True(t, p.CreatedAt.Equal(t0))
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, created.ID))
	})

	t.Run("PENDING to CANCELLED by timeout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.pay(t, "p1", "1000")
		e.sb.Advance(sandbox.DefaultPaymentTTL - time.Second)
		assert.Equal(t, paykit.PaymentStatusPending, e.status(t, p.ID), "one second before valid_until")
		e.sb.Advance(time.Second)
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, p.ID), "at valid_until")
		_, err := e.c.ConfirmPayment(ctx, p.ID, nil)
		requireAPIError(t, err, paykit.ErrPaymentNotConfirmable, "PAY_008", http.StatusBadRequest)
		// An expired payment is CANCELLED, so a dispute may be opened on it.
		d, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusDispute, d.Status)
	})

	t.Run("PROCESSING to COMPLETED by verification credits amount/usdt_rate", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		a := e.processing(t, "p1", "925.47")  // 10.00508... -> 10.01 (half up, not truncated)
		b := e.processing(t, "p2", "1500.50") // 16.2216... -> 16.22
		require.NoError(t, e.sb.VerifyPayment(a.ID, sandbox.OutcomeCompleted))
		assert.Equal(t, paykit.PaymentStatusCompleted, e.status(t, a.ID))
		e.assertTerminal(t, main, "1010.01", "0.00")
		require.NoError(t, e.sb.VerifyPayment(b.ID, sandbox.OutcomeCompleted))
		assert.Equal(t, paykit.PaymentStatusCompleted, e.status(t, b.ID))
		e.assertTerminal(t, main, "1026.23", "0.00")
		e.assertTerminal(t, sandbox.DefaultReserveTerminalID, "0.00", "0.00")
		bal, err := e.c.GetBalance(ctx)
		require.NoError(t, err)
		assert.Equal(t, "1026.23", bal.Balance.StringFixed(2))
		// A completed payment can be neither cancelled, confirmed nor disputed.
		_, err = e.c.CancelPayment(ctx, a.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotCancellable, "PAY_007", http.StatusBadRequest)
		_, err = e.c.ConfirmPayment(ctx, a.ID, nil)
		requireAPIError(t, err, paykit.ErrPaymentNotConfirmable, "PAY_008", http.StatusBadRequest)
		_, err = e.c.OpenDispute(ctx, a.ID, paykit.OpenDisputeParams{})
		requireAPIError(t, err, paykit.ErrDisputeNotAllowed, "DIS_001", http.StatusBadRequest)
	})

	t.Run("PROCESSING to CANCELLED by verification", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.processing(t, "p1", "1000")
		require.NoError(t, e.sb.VerifyPayment(p.ID, sandbox.OutcomeCancelled))
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, p.ID))
		e.assertTerminal(t, main, "1000.00", "0.00")
	})

	t.Run("CANCELLED to DISPUTE with amount", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.cancelled(t, "p1", "1000")
		e.sb.Advance(time.Hour)
		d, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{
			Amount: dec("950.50"), ReceiptURL: "https://shop.example/receipts/1.png", Comment: "paid less"})
		require.NoError(t, err)
		assert.Equal(t, p.ID, d.ID)
		assert.Equal(t, "p1", d.ExtID)
		assertDec(t, "1000", d.Amount, "amount")
		assert.Equal(t, "RUB", d.Currency)
		assert.Equal(t, paykit.PaymentStatusDispute, d.Status)
		assert.Equal(t, paykit.MethodCard, d.Method)
		assert.True(t, d.CreatedAt.Equal(t0))
		require.NotNil(t, d.Dispute)
		require.True(t, d.Dispute.Amount.Valid, "dispute.amount is set")
		assertDec(t, "950.50", d.Dispute.Amount.Decimal, "dispute.amount")
		assert.Equal(t, "https://shop.example/receipts/1.png", d.Dispute.ReceiptURL)
		assert.Equal(t, "paid less", d.Dispute.Comment)
		assert.True(t, d.Dispute.CreatedAt.Equal(t0.Add(time.Hour)), "dispute.created_at %v", d.Dispute.CreatedAt)
		// Not in the dispute-open response.
		assert.Empty(t, d.Requisites.Value)
		assert.Empty(t, d.PaymentURL)
		assert.True(t, d.ValidUntil.IsZero())
		assert.True(t, d.USDTRate.IsZero())
		assert.Equal(t, paykit.PaymentStatusDispute, e.status(t, p.ID))
	})

	t.Run("CANCELLED to DISPUTE without amount", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.cancelled(t, "p1", "1000")
		d, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusDispute, d.Status)
		require.NotNil(t, d.Dispute)
		assert.False(t, d.Dispute.Amount.Valid, "dispute.amount is null when not given")
		assert.Empty(t, d.Dispute.ReceiptURL)
		assert.Empty(t, d.Dispute.Comment)
		assert.True(t, d.Dispute.CreatedAt.Equal(t0))
	})

	t.Run("DISPUTE to CANCELLED_APPEAL and back to DISPUTE", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.disputed(t, "p1", "1000", paykit.OpenDisputeParams{Comment: "first"})
		c, err := e.c.CancelDispute(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, p.ID, c.ID)
		assert.Equal(t, "p1", c.ExtID)
		assert.Equal(t, paykit.PaymentStatusCancelledAppeal, c.Status)
		assert.True(t, c.Amount.IsZero(), "cancel-dispute carries only id, ext_id, status")
		assert.Nil(t, c.Dispute)
		assert.Equal(t, paykit.PaymentStatusCancelledAppeal, e.status(t, p.ID))

		// Reopen: CANCELLED_APPEAL -> DISPUTE.
		e.sb.Advance(time.Minute)
		d, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Comment: "second", ReceiptURL: "http://x.example/r"})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusDispute, d.Status)
		require.NotNil(t, d.Dispute)
		assert.Equal(t, "second", d.Dispute.Comment)
		assert.True(t, d.Dispute.CreatedAt.Equal(t0.Add(time.Minute)))
		assert.Equal(t, paykit.PaymentStatusDispute, e.status(t, p.ID))
	})

	t.Run("DISPUTE to COMPLETED by approval credits the dispute amount", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		withAmount := e.disputed(t, "p1", "2000", paykit.OpenDisputeParams{Amount: dec("1000")})
		without := e.disputed(t, "p2", "2000", paykit.OpenDisputeParams{})
		require.NoError(t, e.sb.ReviewDispute(withAmount.ID, sandbox.OutcomeApproved))
		assert.Equal(t, paykit.PaymentStatusCompleted, e.status(t, withAmount.ID))
		e.assertTerminal(t, main, "1010.81", "0.00") // 1000/92.50 = 10.8108 -> 10.81
		require.NoError(t, e.sb.ReviewDispute(without.ID, sandbox.OutcomeApproved))
		assert.Equal(t, paykit.PaymentStatusCompleted, e.status(t, without.ID))
		e.assertTerminal(t, main, "1032.43", "0.00") // + 2000/92.50 = 21.6216 -> 21.62
	})

	t.Run("DISPUTE to CANCELLED by rejection", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.disputed(t, "p1", "1000", paykit.OpenDisputeParams{})
		require.NoError(t, e.sb.ReviewDispute(p.ID, sandbox.OutcomeRejected))
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, p.ID))
		e.assertTerminal(t, main, "1000.00", "0.00")
		// Rejected is CANCELLED again: a new dispute may be opened.
		d, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Comment: "again"})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusDispute, d.Status)
	})
}

// TestIntegrationPaymentErrors reaches every payment error code that a
// request the client accepts can produce.
func TestIntegrationPaymentErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PAY_003 duplicate ext_id on the first attempt", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		first := e.pay(t, "dup-1", "1000")
		_, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "dup-1", Amount: dec("1000")})
		apiErr := requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
		assert.Equal(t, "dup-1", apiErr.ExtID())
		// Different amount, same ext_id: still PAY_003, never the old payment.
		_, err = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "dup-1", Amount: dec("2000")})
		requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
		assert.Equal(t, 1, e.sb.Stats(e.key).Payments)
		g, err := e.c.GetPaymentByExtID(ctx, "dup-1")
		require.NoError(t, err)
		assert.Equal(t, first.ID, g.ID)
	})

	t.Run("PAY_004 no requisites", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		for _, params := range []paykit.CreatePaymentParams{
			{Bank: "gazprom"}, // inactive
			{Method: paykit.MethodSBP, Bank: "gazprom"},
			{Method: paykit.MethodCard, Bank: "kaspi"},                                   // a KZ bank for a Russian method
			{Method: paykit.MethodCrossBorder, Country: paykit.CountryTJ, Bank: "kaspi"}, // a KZ bank for TJ
			{Method: paykit.MethodCrossBorder, Bank: "sber"},                             // a Russian bank cross-border
			{Bank: "no-such-bank"},
		} {
			params.ExtID, params.Amount = "p-"+string(params.Method)+"-"+params.Bank, dec("1000")
			_, err := e.c.CreatePayment(ctx, params)
			requireAPIError(t, err, paykit.ErrNoRequisites, "PAY_004", http.StatusServiceUnavailable)
		}
		assert.Equal(t, 0, e.sb.Stats(e.key).Payments)
	})

	t.Run("PAY_004 no active terminal", func(t *testing.T) {
		t.Parallel()
		m := sandbox.Merchant{APIKey: "pk_idle", Secret: "sk_idle", Terminals: []sandbox.Terminal{
			{ID: "t1", Name: "off", Balance: dec("5.00"), WithdrawalFee: dec("1.50"), IsActive: false}}}
		e := newEnv(t, sandbox.Config{Merchants: []sandbox.Merchant{m}})
		_, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "x", Amount: dec("1000")})
		requireAPIError(t, err, paykit.ErrNoRequisites, "PAY_004", http.StatusServiceUnavailable)
	})

	t.Run("PAY_005 too many pending payments of one amount", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{MaxSamePendingAmount: 2})
		a := e.pay(t, "same-1", "1500.5")
		e.pay(t, "same-2", "1500.50") // the same amount at another scale
		_, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "same-3", Amount: dec("1500.500")})
		requireAPIError(t, err, paykit.ErrTooManySameAmount, "PAY_005", http.StatusTooManyRequests)
		assert.Equal(t, 1, e.sb.RequestCount(http.MethodPost, "/v1/payments")-2, "PAY_005 is not retried")
		// Another amount is fine.
		e.pay(t, "other", "1500.51")
		// Once one leaves PENDING, the amount is accepted again.
		_, err = e.c.CancelPayment(ctx, a.ID)
		require.NoError(t, err)
		e.pay(t, "same-3", "1500.50")
	})

	t.Run("PAY_006 unknown payment on every payment operation", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		calls := map[string]func() (*paykit.Payment, error){
			"get":            func() (*paykit.Payment, error) { return e.c.GetPayment(ctx, unknownID) },
			"get by ext_id":  func() (*paykit.Payment, error) { return e.c.GetPaymentByExtID(ctx, "nope") },
			"confirm":        func() (*paykit.Payment, error) { return e.c.ConfirmPayment(ctx, unknownID, nil) },
			"cancel":         func() (*paykit.Payment, error) { return e.c.CancelPayment(ctx, unknownID) },
			"open dispute":   func() (*paykit.Payment, error) { return e.c.OpenDispute(ctx, unknownID, paykit.OpenDisputeParams{}) },
			"cancel dispute": func() (*paykit.Payment, error) { return e.c.CancelDispute(ctx, unknownID) },
		}
		for name, call := range calls {
			p, err := call()
			assert.Nil(t, p, name)
			requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
		}
	})

	t.Run("PAY_006 for another merchant's payment", func(t *testing.T) {
		t.Parallel()
		other := sandbox.DefaultMerchant("pk_other", "sk_other")
		e := newEnv(t, sandbox.Config{Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(sandbox.DefaultAPIKey, sandbox.DefaultSecret), other}})
		p := e.pay(t, "mine", "1000")
		oc := e.client(t, "pk_other", "sk_other")
		_, err := oc.GetPayment(ctx, p.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
		_, err = oc.GetPaymentByExtID(ctx, "mine")
		requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
		_, err = oc.CancelPayment(ctx, p.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotFound, "PAY_006", http.StatusNotFound)
		// The other merchant may reuse the ext_id.
		_, err = oc.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "mine", Amount: dec("1000")})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusPending, e.status(t, p.ID))
	})

	t.Run("PAY_007 cancel a payment that is not PENDING", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		processing := e.processing(t, "p1", "1000")
		cancelled := e.cancelled(t, "p2", "1000")
		disputed := e.disputed(t, "p3", "1000", paykit.OpenDisputeParams{})
		for _, id := range []string{processing.ID, disputed.ID} {
			_, err := e.c.CancelPayment(ctx, id)
			requireAPIError(t, err, paykit.ErrPaymentNotCancellable, "PAY_007", http.StatusBadRequest)
		}
		// Per the spec a cancelled payment cannot be cancelled again: PAY_007
		// on a first attempt (only a retried attempt is reconciled).
		_, err := e.c.CancelPayment(ctx, cancelled.ID)
		requireAPIError(t, err, paykit.ErrPaymentNotCancellable, "PAY_007", http.StatusBadRequest)
		assert.Equal(t, paykit.PaymentStatusProcessing, e.status(t, processing.ID))
	})

	t.Run("PAY_008 confirm a payment that is not PENDING", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		processing := e.processing(t, "p1", "1000")
		cancelled := e.cancelled(t, "p2", "1000")
		for _, id := range []string{processing.ID, cancelled.ID} {
			_, err := e.c.ConfirmPayment(ctx, id, &paykit.Attachment{Content: bytes.NewReader(pngReceipt(t))})
			requireAPIError(t, err, paykit.ErrPaymentNotConfirmable, "PAY_008", http.StatusBadRequest)
		}
		assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, cancelled.ID))
	})

	t.Run("DIS_001 dispute outside CANCELLED and CANCELLED_APPEAL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		pending := e.pay(t, "p1", "1000")
		processing := e.processing(t, "p2", "1000")
		for _, id := range []string{pending.ID, processing.ID} {
			_, err := e.c.OpenDispute(ctx, id, paykit.OpenDisputeParams{Comment: "x"})
			requireAPIError(t, err, paykit.ErrDisputeNotAllowed, "DIS_001", http.StatusBadRequest)
		}
		assert.Equal(t, paykit.PaymentStatusPending, e.status(t, pending.ID))
	})

	t.Run("DIS_002 dispute already open", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.disputed(t, "p1", "1000", paykit.OpenDisputeParams{Comment: "first"})
		_, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Comment: "second"})
		requireAPIError(t, err, paykit.ErrDisputeExists, "DIS_002", http.StatusConflict)
	})

	t.Run("DIS_003 cancel a dispute that is not open", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		cancelled := e.cancelled(t, "p1", "1000")
		pending := e.pay(t, "p2", "1000")
		appeal := e.disputed(t, "p3", "1000", paykit.OpenDisputeParams{})
		_, err := e.c.CancelDispute(ctx, appeal.ID)
		require.NoError(t, err)
		for _, id := range []string{cancelled.ID, pending.ID, appeal.ID} {
			_, err := e.c.CancelDispute(ctx, id)
			requireAPIError(t, err, paykit.ErrDisputeNotActive, "DIS_003", http.StatusBadRequest)
		}
	})
}

// ----------------------------------------------------------------- payouts

func TestIntegrationPayouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()

	card, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po-card", Amount: dec("5000.25"),
		Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "Ivan Petrov"})
	require.NoError(t, err)
	assert.NoError(t, uuid.Validate(card.ID))
	assert.Equal(t, "po-card", card.ExtID)
	assertDec(t, "5000.25", card.Amount, "amount")
	assert.Equal(t, "RUB", card.Currency)
	assert.Equal(t, paykit.PayoutMethodCard, card.Method)
	assert.Equal(t, "2200123456789010", card.Requisites)
	assert.Equal(t, "Ivan Petrov", card.HolderName)
	assert.Equal(t, "", card.Bank, "bank is empty when none was given")
	assert.Equal(t, paykit.PayoutStatusPending, card.Status)
	assert.Empty(t, card.ProviderOrderID)
	assert.True(t, card.CreatedAt.Equal(t0))
	assert.True(t, card.CompletedAt.IsZero())

	e.sb.Advance(time.Minute)
	sbp, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po/sbp №2", Amount: dec("100"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "Анна Смирнова", Bank: "tinkoff"})
	require.NoError(t, err)
	assert.Equal(t, paykit.PayoutMethodSBP, sbp.Method)
	assert.Equal(t, "tinkoff", sbp.Bank)
	assert.Equal(t, "Анна Смирнова", sbp.HolderName)
	assert.True(t, sbp.CreatedAt.Equal(t0.Add(time.Minute)))

	// GET by id and by ext_id (path-escaped) return the same payout.
	for _, want := range []*paykit.Payout{card, sbp} {
		for _, got := range []func() (*paykit.Payout, error){
			func() (*paykit.Payout, error) { return e.c.GetPayout(ctx, want.ID) },
			func() (*paykit.Payout, error) { return e.c.GetPayoutByExtID(ctx, want.ExtID) },
		} {
			g, err := got()
			require.NoError(t, err)
			assert.Equal(t, want.ID, g.ID)
			assert.Equal(t, want.ExtID, g.ExtID)
			assert.True(t, g.Amount.Equal(want.Amount))
			assert.Equal(t, want.Method, g.Method)
			assert.Equal(t, want.Requisites, g.Requisites)
			assert.Equal(t, want.HolderName, g.HolderName)
			assert.Equal(t, want.Bank, g.Bank)
			assert.Equal(t, paykit.PayoutStatusPending, g.Status)
			assert.True(t, g.CreatedAt.Equal(want.CreatedAt))
		}
	}

	// pending -> processing -> completed.
	e.sb.Advance(time.Minute)
	require.NoError(t, e.sb.SetPayoutStatus(card.ID, sandbox.PayoutProcessing))
	g, err := e.c.GetPayout(ctx, card.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.PayoutStatusProcessing, g.Status)
	assert.NotEmpty(t, g.ProviderOrderID, "provider_order_id after processing")
	assert.True(t, g.CompletedAt.IsZero())
	orderID := g.ProviderOrderID
	e.sb.Advance(time.Minute)
	require.NoError(t, e.sb.SetPayoutStatus(card.ID, sandbox.PayoutCompleted))
	g, err = e.c.GetPayout(ctx, card.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.PayoutStatusCompleted, g.Status)
	assert.Equal(t, orderID, g.ProviderOrderID)
	assert.True(t, g.CompletedAt.Equal(t0.Add(3*time.Minute)), "completed_at %v", g.CompletedAt)
	assert.True(t, g.CreatedAt.Equal(t0))

	// Every other status, each from pending.
	for _, st := range []paykit.PayoutStatus{paykit.PayoutStatusFailed, paykit.PayoutStatusCancelled, paykit.PayoutStatusCompleted} {
		p, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po-" + string(st), Amount: dec("300"),
			Method: paykit.PayoutMethodCard, Requisites: "2200000000000004", HolderName: "X Y"})
		require.NoError(t, err)
		require.NoError(t, e.sb.SetPayoutStatus(p.ID, string(st)))
		g, err := e.c.GetPayoutByExtID(ctx, p.ExtID)
		require.NoError(t, err)
		assert.Equal(t, st, g.Status)
		assert.Equal(t, st == paykit.PayoutStatusCompleted, !g.CompletedAt.IsZero(), "completed_at of %s", st)
		assert.Equal(t, st == paykit.PayoutStatusCompleted, g.ProviderOrderID != "", "provider_order_id of %s", st)
	}
	// processing -> failed.
	require.NoError(t, e.sb.SetPayoutStatus(sbp.ID, sandbox.PayoutProcessing))
	require.NoError(t, e.sb.SetPayoutStatus(sbp.ID, sandbox.PayoutFailed))
	g, err = e.c.GetPayout(ctx, sbp.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.PayoutStatusFailed, g.Status)
	assert.NotEmpty(t, g.ProviderOrderID)
	assert.True(t, g.CompletedAt.IsZero())
}

func TestIntegrationListPayouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()

	// Seven payouts one hour apart: t0, t0+1h, ... t0+6h. Even ones end
	// completed.
	var ids []string
	for i := range 7 {
		if i > 0 {
			e.sb.Advance(time.Hour)
		}
		p, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po-" + string(rune('a'+i)),
			Amount: decimal.New(int64(100+i), 0), Method: paykit.PayoutMethodSBP, Requisites: "+79000000000", HolderName: "H"})
		require.NoError(t, err)
		ids = append(ids, p.ID)
		if i%2 == 0 {
			require.NoError(t, e.sb.SetPayoutStatus(p.ID, sandbox.PayoutCompleted))
		}
	}
	idsOf := func(l *paykit.PayoutList) []string {
		var out []string
		for _, p := range l.Payouts {
			out = append(out, p.ID)
		}
		return out
	}

	all, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{})
	require.NoError(t, err)
	assert.Equal(t, 7, all.Total)
	assert.Equal(t, 100, all.Limit, "default limit")
	assert.Equal(t, 0, all.Offset)
	assert.Equal(t, ids, idsOf(all))
	assertDec(t, "103", all.Payouts[3].Amount, "amount of the 4th payout")

	page, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 2, Offset: 3})
	require.NoError(t, err)
	assert.Equal(t, 7, page.Total)
	assert.Equal(t, 2, page.Limit)
	assert.Equal(t, 3, page.Offset)
	assert.Equal(t, ids[3:5], idsOf(page))

	done, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusCompleted})
	require.NoError(t, err)
	assert.Equal(t, 4, done.Total)
	assert.Equal(t, []string{ids[0], ids[2], ids[4], ids[6]}, idsOf(done))
	for _, p := range done.Payouts {
		assert.Equal(t, paykit.PayoutStatusCompleted, p.Status)
	}

	// from and to, both inclusive, in any time zone.
	msk := time.FixedZone("MSK", 3*3600)
	window, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{From: t0.Add(time.Hour).In(msk), To: t0.Add(3 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, 3, window.Total)
	assert.Equal(t, ids[1:4], idsOf(window))

	combined, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusPending,
		From: t0.Add(time.Hour), To: t0.Add(5 * time.Hour), Limit: 2, Offset: 1})
	require.NoError(t, err)
	assert.Equal(t, 3, combined.Total) // ids 1, 3, 5
	assert.Equal(t, []string{ids[3], ids[5]}, idsOf(combined))

	empty, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusCancelled})
	require.NoError(t, err)
	assert.Equal(t, 0, empty.Total)
	assert.Empty(t, empty.Payouts)

	// AllPayouts pages by 3 over 7 payouts: 3 requests.
	before := e.sb.RequestCount(http.MethodGet, "/v1/payouts")
	var got []string
	for p, err := range e.c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 3}) {
		require.NoError(t, err)
		got = append(got, p.ID)
	}
	assert.Equal(t, ids, got)
	assert.Equal(t, 3, e.sb.RequestCount(http.MethodGet, "/v1/payouts")-before, "pages fetched")

	// With a filter, and stopping early.
	got = nil
	for p, err := range e.c.AllPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusPending, Limit: 1}) {
		require.NoError(t, err)
		got = append(got, p.ID)
	}
	assert.Equal(t, []string{ids[1], ids[3], ids[5]}, got)
	before = e.sb.RequestCount(http.MethodGet, "/v1/payouts")
	n := 0
	for range e.c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 2}) {
		if n++; n == 3 {
			break
		}
	}
	assert.Equal(t, 2, e.sb.RequestCount(http.MethodGet, "/v1/payouts")-before, "no page fetched after break")
}

func TestIntegrationPayoutErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	ok := paykit.CreatePayoutParams{ExtID: "po-1", Amount: dec("1000"), Method: paykit.PayoutMethodCard,
		Requisites: "2200123456789010", HolderName: "Ivan Petrov"}

	// A blank ext_id is refused before sending; a very long one passes
	// client validation (the spec gives payouts no bound) and the service
	// refuses it.
	before := e.sb.RequestCount(http.MethodPost, "/v1/payouts")
	blank := ok
	blank.ExtID = " \t "
	_, err := e.c.CreatePayout(ctx, blank)
	var vErr *paykit.ValidationError
	require.ErrorAs(t, err, &vErr)
	assert.Equal(t, "ext_id", vErr.Field)
	assert.Equal(t, before, e.sb.RequestCount(http.MethodPost, "/v1/payouts"), "nothing sent")
	long := ok
	long.ExtID = strings.Repeat("я", 600)
	_, err = e.c.CreatePayout(ctx, long)
	requireAPIError(t, err, paykit.ErrInvalidParameters, "PAY_002", http.StatusBadRequest)

	first, err := e.c.CreatePayout(ctx, ok)
	require.NoError(t, err)
	_, err = e.c.CreatePayout(ctx, ok)
	apiErr := requireAPIError(t, err, paykit.ErrDuplicateExtID, "PAY_003", http.StatusConflict)
	assert.Equal(t, "po-1", apiErr.ExtID())
	assert.Equal(t, 1, e.sb.Stats(e.key).Payouts)

	_, err = e.c.GetPayout(ctx, unknownID)
	requireAPIError(t, err, paykit.ErrPayoutNotFound, "PAY_001", http.StatusNotFound)
	assert.False(t, errors.Is(err, paykit.ErrInternal), "PAY_001 with 404 is not an internal error")
	_, err = e.c.GetPayoutByExtID(ctx, "po-2")
	requireAPIError(t, err, paykit.ErrPayoutNotFound, "PAY_001", http.StatusNotFound)
	// A payment id is not a payout id.
	p := e.pay(t, "pay-1", "1000")
	_, err = e.c.GetPayout(ctx, p.ID)
	requireAPIError(t, err, paykit.ErrPayoutNotFound, "PAY_001", http.StatusNotFound)
	_, err = e.c.GetPayout(ctx, first.ID)
	require.NoError(t, err)
}

// ------------------------------------------------- terminals, balance, banks

func TestIntegrationTerminalsBalanceBanksFee(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{MaxSamePendingAmount: 100})
	ctx := context.Background()

	terms, err := e.c.ListTerminals(ctx)
	require.NoError(t, err)
	require.Len(t, terms, 2)
	wantTerms := []struct{ id, name, balance string }{
		{sandbox.DefaultMainTerminalID, "Main terminal", "1000.00"},
		{sandbox.DefaultReserveTerminalID, "Reserve terminal", "0.00"},
	}
	for i, w := range wantTerms {
		assert.Equal(t, w.id, terms[i].ID)
		assert.Equal(t, w.name, terms[i].Name)
		assertDec(t, w.balance, terms[i].Balance, w.id+" balance")
		assert.Equal(t, w.balance, terms[i].Balance.StringFixed(2))
		assertDec(t, "0", terms[i].BalanceFrozen, w.id+" frozen")
		assertDec(t, "1.50", terms[i].WithdrawalFee, w.id+" fee")
		assert.Equal(t, "USDT", terms[i].Currency)
		assert.True(t, terms[i].IsActive)
	}

	bal, err := e.c.GetBalance(ctx)
	require.NoError(t, err)
	assertDec(t, "1000.00", bal.Balance, "balance")
	assertDec(t, "0.00", bal.BalanceFrozen, "balance_frozen")
	assert.Equal(t, "USDT", bal.Currency)

	fee, err := e.c.GetWithdrawalFee(ctx)
	require.NoError(t, err)
	assertDec(t, "1.50", fee.Fee, "fee")
	assert.Equal(t, "USDT", fee.Currency)

	banks, err := e.c.ListBanks(ctx)
	require.NoError(t, err)
	require.Len(t, banks, 6+4*3)
	byCode := map[string]paykit.Bank{}
	for _, b := range banks {
		assert.Equal(t, strings.ToLower(b.Code), b.Code, "codes are lowercase")
		assert.NotEmpty(t, b.Name)
		byCode[b.Code] = b
	}
	assert.Len(t, byCode, len(banks), "codes are unique")
	for _, code := range []string{"sber", "tinkoff", "vtb", "alfa", "raif", "gazprom"} {
		assert.Contains(t, byCode, code)
	}
	assert.False(t, byCode["gazprom"].IsActive)
	assert.True(t, byCode["sber"].IsActive)
	assert.Equal(t, "Sberbank", byCode["sber"].Name)

	// Three codes per cross-border country, each accepted for exactly its
	// own country.
	perCountry := map[paykit.Country][]string{}
	for _, b := range banks {
		if _, russian := map[string]bool{"sber": true, "tinkoff": true, "vtb": true, "alfa": true, "raif": true, "gazprom": true}[b.Code]; russian {
			continue
		}
		p, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "cb-" + b.Code, Amount: dec("1000"),
			Method: paykit.MethodCrossBorder, Bank: b.Code})
		require.NoError(t, err, b.Code)
		assert.Equal(t, b.Code, p.Requisites.BankCode)
		assert.Equal(t, b.Name, p.Requisites.BankName)
		perCountry[p.Requisites.Country] = append(perCountry[p.Requisites.Country], b.Code)
	}
	for _, c := range []paykit.Country{paykit.CountryTJ, paykit.CountryKZ, paykit.CountryUZ, paykit.CountryKG} {
		assert.Len(t, perCountry[c], 3, "banks of %s", c)
	}
	assert.Len(t, perCountry, 4)
}

// --------------------------------------------------------------- transfers

func TestIntegrationTransfers(t *testing.T) {
	t.Parallel()
	other := sandbox.DefaultMerchant("pk_other", "sk_other")
	other.Terminals[0].ID = "term_other_main"
	e := newEnv(t, sandbox.Config{Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(sandbox.DefaultAPIKey, sandbox.DefaultSecret), other}})
	ctx := context.Background()
	main, reserve := sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID

	tr, err := e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: reserve, Amount: dec("250.75")})
	require.NoError(t, err)
	assert.True(t, tr.Success)
	assert.Equal(t, main, tr.FromTerminalID)
	assert.Equal(t, reserve, tr.ToTerminalID)
	assertDec(t, "250.75", tr.Amount, "amount")
	assert.Equal(t, "USDT", tr.Currency)
	e.assertTerminal(t, main, "749.25", "0.00") // no fee
	e.assertTerminal(t, reserve, "250.75", "0.00")

	// The whole balance may move.
	_, err = e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: reserve, ToTerminalID: main, Amount: dec("250.75")})
	require.NoError(t, err)
	e.assertTerminal(t, main, "1000.00", "0.00")
	e.assertTerminal(t, reserve, "0.00", "0.00")

	for _, tc := range []struct {
		name     string
		params   paykit.CreateTransferParams
		sentinel error
		code     string
		status   int
	}{
		{"same terminal twice", paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: main, Amount: dec("1")},
			paykit.ErrInvalidParameters, "TRF_001", http.StatusBadRequest},
		{"unknown source", paykit.CreateTransferParams{FromTerminalID: "term_nope", ToTerminalID: main, Amount: dec("1")},
			paykit.ErrTerminalNotFound, "TRF_002", http.StatusNotFound},
		{"unknown destination", paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: "term_nope", Amount: dec("1")},
			paykit.ErrTerminalNotFound, "TRF_002", http.StatusNotFound},
		{"another merchant's terminal", paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: "term_other_main", Amount: dec("1")},
			paykit.ErrTerminalNotFound, "TRF_002", http.StatusNotFound},
		{"more than the balance", paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: reserve, Amount: dec("1000.01")},
			paykit.ErrInsufficientFunds, "TRF_003", http.StatusBadRequest},
		{"from an empty terminal", paykit.CreateTransferParams{FromTerminalID: reserve, ToTerminalID: main, Amount: dec("0.01")},
			paykit.ErrInsufficientFunds, "TRF_003", http.StatusBadRequest},
	} {
		_, err := e.c.CreateTransfer(ctx, tc.params)
		requireAPIError(t, err, tc.sentinel, tc.code, tc.status)
		assert.False(t, errors.Is(err, paykit.ErrUnknownOutcome), "%s: a business error is a known outcome", tc.name)
	}
	e.assertTerminal(t, main, "1000.00", "0.00")
	e.assertTerminal(t, reserve, "0.00", "0.00")
	assert.Equal(t, 2, e.sb.Stats(e.key).Transfers)
	for _, term := range e.sb.Terminals("pk_other") {
		if term.ID == "term_other_main" {
			assertDec(t, "1000.00", term.Balance, "other merchant's terminal untouched")
		}
	}
}

// ------------------------------------------------------------- withdrawals

func TestIntegrationWithdrawals(t *testing.T) {
	t.Parallel()
	off := sandbox.DefaultMerchant(sandbox.DefaultAPIKey, sandbox.DefaultSecret)
	off.Terminals = append(off.Terminals, sandbox.Terminal{ID: "term_off", Name: "Off", Balance: dec("500.00"),
		WithdrawalFee: dec("1.50"), IsActive: false})
	e := newEnv(t, sandbox.Config{Merchants: []sandbox.Merchant{off}})
	ctx := context.Background()
	main := sandbox.DefaultMainTerminalID
	const addr = "TXYZabc123456789012345678901234567"

	// Fee on top: 100.00 + 1.50 frozen.
	w1, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("100.00"), Address: addr})
	require.NoError(t, err)
	assert.NoError(t, uuid.Validate(w1.ID))
	assertDec(t, "100.00", w1.Amount, "amount")
	assertDec(t, "1.50", w1.Fee, "fee")
	assert.Equal(t, "USDT", w1.Currency)
	assert.Equal(t, addr, w1.Address)
	assert.Equal(t, "", w1.TxHash, "tx_hash is null until sent")
	assert.Equal(t, paykit.WithdrawalStatusPending, w1.Status)
	assert.True(t, w1.CreatedAt.Equal(t0))
	assert.True(t, w1.UpdatedAt.Equal(t0))
	e.assertTerminal(t, main, "898.50", "101.50")

	// Fee subtracted: only 50.00 frozen, the wallet gets 48.50.
	w2, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("50"), Address: addr, SubtractFeeFromAmount: true})
	require.NoError(t, err)
	assertDec(t, "50", w2.Amount, "amount")
	assertDec(t, "1.50", w2.Fee, "fee")
	assert.Equal(t, paykit.WithdrawalStatusPending, w2.Status)
	e.assertTerminal(t, main, "848.50", "151.50")

	g, err := e.c.GetWithdrawal(ctx, w1.ID)
	require.NoError(t, err)
	assert.Equal(t, *w1, *g)

	// w1: pending -> processing -> completed: the frozen sum leaves for good.
	e.sb.Advance(10 * time.Minute)
	require.NoError(t, e.sb.SetWithdrawalStatus(w1.ID, sandbox.WithdrawalProcessing, ""))
	g, err = e.c.GetWithdrawal(ctx, w1.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.WithdrawalStatusProcessing, g.Status)
	e.assertTerminal(t, main, "848.50", "151.50")
	e.sb.Advance(10 * time.Minute)
	const hash = "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
	require.NoError(t, e.sb.SetWithdrawalStatus(w1.ID, sandbox.WithdrawalCompleted, hash))
	g, err = e.c.GetWithdrawal(ctx, w1.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.WithdrawalStatusCompleted, g.Status)
	assert.Equal(t, hash, g.TxHash)
	assert.True(t, g.CreatedAt.Equal(t0))
	assert.True(t, g.UpdatedAt.Equal(t0.Add(20*time.Minute)), "updated_at %v", g.UpdatedAt)
	e.assertTerminal(t, main, "848.50", "50.00")

	// w2: pending -> failed: the frozen sum goes back.
	require.NoError(t, e.sb.SetWithdrawalStatus(w2.ID, sandbox.WithdrawalFailed, ""))
	g, err = e.c.GetWithdrawal(ctx, w2.ID)
	require.NoError(t, err)
	assert.Equal(t, paykit.WithdrawalStatusFailed, g.Status)
	assert.Equal(t, "", g.TxHash)
	e.assertTerminal(t, main, "898.50", "0.00")

	// Completing without a hash still records one.
	w3, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("8.50"), Address: addr})
	require.NoError(t, err)
	e.assertTerminal(t, main, "888.50", "10.00")
	require.NoError(t, e.sb.SetWithdrawalStatus(w3.ID, sandbox.WithdrawalCompleted, ""))
	g, err = e.c.GetWithdrawal(ctx, w3.ID)
	require.NoError(t, err)
	assert.Len(t, g.TxHash, 64)
	e.assertTerminal(t, main, "888.50", "0.00")

	bal, err := e.c.GetBalance(ctx)
	require.NoError(t, err)
	assertDec(t, "1388.50", bal.Balance, "total balance (inactive terminal included)")
	assertDec(t, "0", bal.BalanceFrozen, "total frozen")

	// Errors.
	for _, tc := range []struct {
		name     string
		params   paykit.CreateWithdrawalParams
		sentinel error
		code     string
	}{
		{"unknown terminal", paykit.CreateWithdrawalParams{TerminalID: "term_nope", Amount: dec("1"), Address: addr},
			paykit.ErrInvalidParameters, "WDR_001"},
		{"inactive terminal", paykit.CreateWithdrawalParams{TerminalID: "term_off", Amount: dec("1"), Address: addr},
			paykit.ErrInvalidParameters, "WDR_001"},
		{"fee subtracted from an amount not above it", paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("1.50"), Address: addr, SubtractFeeFromAmount: true},
			paykit.ErrInvalidParameters, "WDR_001"},
		{"amount + fee above the balance", paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("887.01"), Address: addr},
			paykit.ErrInsufficientFunds, "WDR_002"},
		{"empty terminal", paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultReserveTerminalID, Amount: dec("10"), Address: addr, SubtractFeeFromAmount: true},
			paykit.ErrInsufficientFunds, "WDR_002"},
	} {
		_, err := e.c.CreateWithdrawal(ctx, tc.params)
		requireAPIError(t, err, tc.sentinel, tc.code, http.StatusBadRequest)
		assert.False(t, errors.Is(err, paykit.ErrUnknownOutcome), tc.name)
	}
	// Exactly the balance is enough: 887.00 + 1.50 = 888.50.
	_, err = e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("887.00"), Address: addr})
	require.NoError(t, err)
	e.assertTerminal(t, main, "0.00", "888.50")
	assert.Equal(t, 4, e.sb.Stats(e.key).Withdrawals)

	_, err = e.c.GetWithdrawal(ctx, unknownID)
	requireAPIError(t, err, paykit.ErrWithdrawalNotFound, "WDR_003", http.StatusNotFound)
}

// TestIntegrationMoneyAddsUp runs payments, a transfer and withdrawals and
// checks that every USDT is accounted for, exactly.
func TestIntegrationMoneyAddsUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	main, reserve := sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID

	a := e.processing(t, "a", "1500.50")                                              // +16.22
	b := e.processing(t, "b", "925.47")                                               // +10.01
	c := e.processing(t, "c", "777")                                                  // cancelled: +0
	d := e.disputed(t, "d", "3000", paykit.OpenDisputeParams{Amount: dec("2999.99")}) // approved: 2999.99/92.50 = 32.4323 -> +32.43
	require.NoError(t, e.sb.VerifyPayment(a.ID, sandbox.OutcomeCompleted))
	require.NoError(t, e.sb.VerifyPayment(b.ID, sandbox.OutcomeCompleted))
	require.NoError(t, e.sb.VerifyPayment(c.ID, sandbox.OutcomeCancelled))
	require.NoError(t, e.sb.ReviewDispute(d.ID, sandbox.OutcomeApproved))
	e.assertTerminal(t, main, "1058.66", "0.00")

	_, err := e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: reserve, Amount: dec("200.00")})
	require.NoError(t, err)
	w1, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("100"), Address: "T1"}) // holds 101.50
	require.NoError(t, err)
	_, err = e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: reserve, Amount: dec("50"), Address: "T2", SubtractFeeFromAmount: true}) // holds 50.00, stays pending
	require.NoError(t, err)
	w3, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("10"), Address: "T3"}) // holds 11.50
	require.NoError(t, err)
	require.NoError(t, e.sb.SetWithdrawalStatus(w1.ID, sandbox.WithdrawalCompleted, "")) // 101.50 leaves
	require.NoError(t, e.sb.SetWithdrawalStatus(w3.ID, sandbox.WithdrawalFailed, ""))    // 11.50 back

	e.assertTerminal(t, main, "757.16", "0.00")     // 1058.66 - 200 - 101.50
	e.assertTerminal(t, reserve, "150.00", "50.00") // 200 - 50 frozen

	terms, err := e.c.ListTerminals(ctx)
	require.NoError(t, err)
	var sumBal, sumFrozen decimal.Decimal
	for _, term := range terms {
		sumBal = sumBal.Add(term.Balance)
		sumFrozen = sumFrozen.Add(term.BalanceFrozen)
	}
	bal, err := e.c.GetBalance(ctx)
	require.NoError(t, err)
	assertDec(t, sumBal.String(), bal.Balance, "GetBalance.balance vs sum of ListTerminals")
	assertDec(t, sumFrozen.String(), bal.BalanceFrozen, "GetBalance.balance_frozen vs sum of ListTerminals")
	assert.Equal(t, "907.16", bal.Balance.StringFixed(2))
	assert.Equal(t, "50.00", bal.BalanceFrozen.StringFixed(2))
	// Start + credits - settled withdrawal = available + frozen.
	want := dec("1000.00").Add(dec("16.22")).Add(dec("10.01")).Add(dec("32.43")).Sub(dec("101.50"))
	assertDec(t, want.String(), bal.Balance.Add(bal.BalanceFrozen), "balance + frozen")
	// The sandbox's own books agree with the API.
	var snap decimal.Decimal
	for _, term := range e.sb.Terminals(e.key) {
		snap = snap.Add(term.Balance).Add(term.BalanceFrozen)
	}
	assertDec(t, want.String(), snap, "sandbox snapshot")
}

// -------------------------------------------------------------------- auth

func TestIntegrationAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	for name, c := range map[string]*paykit.Client{
		"wrong secret": e.client(t, sandbox.DefaultAPIKey, "sk_wrong_secret_value"),
		"wrong key":    e.client(t, "pk_wrong_key_value", sandbox.DefaultSecret),
	} {
		_, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "x", Amount: dec("1000")})
		apiErr := requireAPIError(t, err, paykit.ErrUnauthorized, apiErrCode(err), http.StatusUnauthorized)
		assert.NotContains(t, apiErr.Error(), "sk_wrong_secret_value", name)
		assert.NotContains(t, err.Error(), sandbox.DefaultSecret, name)
		_, err = c.ListTerminals(ctx)
		requireAPIError(t, err, paykit.ErrUnauthorized, apiErrCode(err), http.StatusUnauthorized)
		_, err = c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: dec("1")})
		requireAPIError(t, err, paykit.ErrUnauthorized, apiErrCode(err), http.StatusUnauthorized)
		assert.False(t, errors.Is(err, paykit.ErrUnknownOutcome), name)
	}
	assert.Equal(t, sandbox.Stats{}, e.sb.Stats(e.key), "nothing was created")
	e.assertTerminal(t, sandbox.DefaultMainTerminalID, "1000.00", "0.00")
}

// apiErrCode returns the code of an *paykit.Error (the spec does not show
// the code of an authentication failure, so tests do not pin it).
func apiErrCode(err error) string {
	var apiErr *paykit.Error
	if errors.As(err, &apiErr) {
		return apiErr.Code
	}
	return ""
}

// ------------------------------------------------------------------ faults

// TestIntegrationInternalErrors reaches PAY_001 (500) and SYS_001, which
// the sandbox produces only by fault injection, and the retry paths around
// them.
func TestIntegrationInternalErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fault := func(method, path, code string, count int) sandbox.Fault {
		return sandbox.Fault{Method: method, Path: path, Mode: sandbox.FaultErrorBefore, Status: 500, Code: code, Count: count}
	}

	t.Run("SYS_001 on create payout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{}, paykit.WithMaxRetries(0))
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payouts", "SYS_001", 10)))
		_, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po", Amount: dec("10"),
			Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "I P"})
		requireAPIError(t, err, paykit.ErrInternal, "SYS_001", http.StatusInternalServerError)
		assert.False(t, errors.Is(err, paykit.ErrPayoutNotFound))
		assert.Equal(t, 1, e.sb.RequestCount("POST", "/v1/payouts"), "no retry with WithMaxRetries(0)")
		assert.Equal(t, 0, e.sb.Stats(e.key).Payouts)
	})

	t.Run("PAY_001 500 on create payment and confirm", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{}, paykit.WithMaxRetries(0))
		p := e.pay(t, "p1", "1000")
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payments", "PAY_001", 1)))
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payments/{id}/confirm", "PAY_001", 1)))
		_, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "p2", Amount: dec("1000")})
		requireAPIError(t, err, paykit.ErrInternal, "PAY_001", http.StatusInternalServerError)
		assert.False(t, errors.Is(err, paykit.ErrPayoutNotFound), "PAY_001 with 500 is not payout-not-found")
		_, err = e.c.ConfirmPayment(ctx, p.ID, nil)
		requireAPIError(t, err, paykit.ErrInternal, "PAY_001", http.StatusInternalServerError)
		assert.Equal(t, paykit.PaymentStatusPending, e.status(t, p.ID))
		assert.Equal(t, 1, e.sb.Stats(e.key).Payments)
	})

	t.Run("SYS_001 on cancel dispute", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{}, paykit.WithMaxRetries(0))
		p := e.disputed(t, "p1", "1000", paykit.OpenDisputeParams{})
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payments/{id}/dispute/cancel", "SYS_001", 1)))
		_, err := e.c.CancelDispute(ctx, p.ID)
		requireAPIError(t, err, paykit.ErrInternal, "SYS_001", http.StatusInternalServerError)
		assert.Equal(t, paykit.PaymentStatusDispute, e.status(t, p.ID))
	})

	t.Run("a 5xx is retried for create payout and cancel dispute", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payouts", "SYS_001", 2)))
		po, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po", Amount: dec("10"),
			Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "I P"})
		require.NoError(t, err)
		assert.Equal(t, paykit.PayoutStatusPending, po.Status)
		assert.Equal(t, 3, e.sb.RequestCount("POST", "/v1/payouts"))
		assert.Equal(t, 1, e.sb.Stats(e.key).Payouts)

		p := e.disputed(t, "p1", "1000", paykit.OpenDisputeParams{})
		require.NoError(t, e.sb.InjectFault(fault("POST", "/v1/payments/{id}/dispute/cancel", "SYS_001", 1)))
		c, err := e.c.CancelDispute(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusCancelledAppeal, c.Status)
	})

	t.Run("a lost create answer is reconciled, not duplicated", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payments", Mode: sandbox.FaultDropAfter}))
		p, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "lost", Amount: dec("1234.56"), Method: paykit.MethodSBP})
		require.NoError(t, err)
		assert.Equal(t, "lost", p.ExtID)
		assertDec(t, "1234.56", p.Amount, "amount")
		assert.Equal(t, paykit.PaymentStatusPending, p.Status)
		assert.Equal(t, 2, e.sb.RequestCount("POST", "/v1/payments"), "the retry met PAY_003")
		assert.Equal(t, 1, e.sb.Stats(e.key).Payments)
	})

	t.Run("a lost transfer answer is an unknown outcome, sent once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		require.NoError(t, e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter}))
		_, err := e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: dec("10")})
		require.Error(t, err)
		assert.True(t, errors.Is(err, paykit.ErrUnknownOutcome), "%v", err)
		assert.Equal(t, 1, e.sb.RequestCount("POST", "/v1/transfers"))
		e.assertTerminal(t, sandbox.DefaultMainTerminalID, "990.00", "0.00")
		e.assertTerminal(t, sandbox.DefaultReserveTerminalID, "10.00", "0.00")
	})
}

// ---------------------------------------------------------------- webhooks

type hook struct {
	token, contentType string
	body               []byte
}

// hookSink is an httptest receiver that records webhook deliveries and
// fails the first failFirst of them with 500.
type hookSink struct {
	mu        sync.Mutex
	failFirst int
	seen      int
	got       []hook
}

func (s *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen++
	if s.seen <= s.failFirst {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	s.got = append(s.got, hook{r.Header.Get("X-Notification-Token"), r.Header.Get("Content-Type"), body})
}

func (s *hookSink) hooks() ([]hook, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hook(nil), s.got...), s.seen
}

func TestIntegrationWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	paySink := &hookSink{failFirst: 1} // the first delivery is retried
	payoutSink := &hookSink{}
	paySrv, payoutSrv := httptest.NewServer(paySink), httptest.NewServer(payoutSink)
	t.Cleanup(paySrv.Close)
	t.Cleanup(payoutSrv.Close)

	p, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "wh-1", Amount: dec("1500.50"),
		NotifyURL: paySrv.URL + "/hooks?shop=1", NotificationToken: "tok-secret-1"})
	require.NoError(t, err)
	_, err = e.c.ConfirmPayment(ctx, p.ID, nil)
	require.NoError(t, err)
	require.NoError(t, e.sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted))

	po, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "wh-po", Amount: dec("700"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001112233", HolderName: "A B", NotifyURL: payoutSrv.URL})
	require.NoError(t, err)
	require.NoError(t, e.sb.SetPayoutStatus(po.ID, sandbox.PayoutProcessing))
	require.NoError(t, e.sb.SetPayoutStatus(po.ID, sandbox.PayoutCompleted))

	flushCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, e.sb.FlushWebhooks(flushCtx))

	hooks, seen := paySink.hooks()
	assert.Equal(t, 3, seen, "two deliveries, the first one retried once")
	require.Len(t, hooks, 2, "creation sends nothing; PROCESSING and COMPLETED do")
	for i, want := range []paykit.PaymentStatus{paykit.PaymentStatusProcessing, paykit.PaymentStatusCompleted} {
		assert.Equal(t, "tok-secret-1", hooks[i].token)
		assert.Equal(t, "application/json", hooks[i].contentType)
		var got paykit.Payment
		require.NoError(t, json.Unmarshal(hooks[i].body, &got))
		assert.Equal(t, p.ID, got.ID)
		assert.Equal(t, "wh-1", got.ExtID)
		assertDec(t, "1500.50", got.Amount, "webhook amount")
		assert.Equal(t, want, got.Status)
		assertDec(t, "92.50", got.USDTRate, "webhook usdt_rate")
	}

	phooks, _ := payoutSink.hooks()
	require.Len(t, phooks, 2)
	for i, want := range []paykit.PayoutStatus{paykit.PayoutStatusProcessing, paykit.PayoutStatusCompleted} {
		assert.Empty(t, phooks[i].token, "payouts have no notification token")
		var got paykit.Payout
		require.NoError(t, json.Unmarshal(phooks[i].body, &got))
		assert.Equal(t, po.ID, got.ID)
		assert.Equal(t, "wh-po", got.ExtID)
		assertDec(t, "700", got.Amount, "payout webhook amount")
		assert.Equal(t, want, got.Status)
		assert.NotEmpty(t, got.ProviderOrderID)
		assert.Equal(t, want == paykit.PayoutStatusCompleted, !got.CompletedAt.IsZero())
	}
}

// ------------------------------------------------------ client validation

// TestIntegrationClientValidation checks that input the SDK refuses never
// reaches the service.
func TestIntegrationClientValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	errs := map[string]error{}
	_, errs["amount below 100"] = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "x", Amount: dec("99.99")})
	_, errs["amount above 300000"] = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "x", Amount: dec("300000.01")})
	_, errs["ext_id of 256"] = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: strings.Repeat("я", 256), Amount: dec("100")})
	_, errs["country without CROSS_BORDER"] = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "x", Amount: dec("100"), Country: paykit.CountryKZ})
	_, errs["payment id not a UUID"] = e.c.GetPayment(ctx, "../payouts")
	_, errs["negative dispute amount"] = e.c.OpenDispute(ctx, unknownID, paykit.OpenDisputeParams{Amount: dec("-1")})
	_, errs["receipt not an image"] = e.c.ConfirmPayment(ctx, unknownID, &paykit.Attachment{Content: strings.NewReader("%PDF-1.4")})
	_, errs["zero payout"] = e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "x", Method: paykit.PayoutMethodCard, Requisites: "1", HolderName: "h"})
	_, errs["zero transfer"] = e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: "a", ToTerminalID: "b"})
	_, errs["withdrawal without address"] = e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: "a", Amount: dec("1")})
	_, errs["list to before from"] = e.c.ListPayouts(ctx, paykit.ListPayoutsParams{From: t0, To: t0.Add(-time.Second)})
	for name, err := range errs {
		var ve *paykit.ValidationError
		assert.Truef(t, errors.As(err, &ve), "%s: %v", name, err)
		assert.Truef(t, errors.Is(err, paykit.ErrInvalidParameters), "%s: %v", name, err)
	}
	assert.Equal(t, 0, e.sb.RequestCount("", "/v1/payments"))
	total := 0
	for _, p := range []string{"/v1/payments", "/v1/payments/{id}", "/v1/payments/{id}/confirm", "/v1/payments/{id}/dispute",
		"/v1/payouts", "/v1/transfers", "/v1/withdrawals"} {
		total += e.sb.RequestCount("", p)
	}
	assert.Equal(t, 0, total, "nothing was sent")
}

// TestIntegrationPaymentPageConfirms covers the other trigger of PENDING to
// PROCESSING: the hosted payment page's I-paid action.
func TestIntegrationPaymentPageConfirms(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	p := e.pay(t, "page-1", "1500.50")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := noRedirect.Get(p.PaymentURL)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "1500.50")
	assert.Contains(t, string(page), p.Requisites.Value)

	// Without the page's form token (a post from another site) nothing happens.
	resp, err = noRedirect.PostForm(p.PaymentURL, nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, paykit.PaymentStatusPending, e.status(t, p.ID))

	tok := regexp.MustCompile(`name="token" value="([0-9a-f]+)"`).FindStringSubmatch(string(page))
	require.NotNil(t, tok, "the page carries its form token")
	resp, err = noRedirect.PostForm(p.PaymentURL, url.Values{"token": {tok[1]}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, paykit.PaymentStatusProcessing, e.status(t, p.ID))
	require.NoError(t, e.sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted))
	e.assertTerminal(t, sandbox.DefaultMainTerminalID, "1016.22", "0.00")
}

// TestIntegrationSameAmountLimitFollowsExpiry checks that PAY_005 counts
// only PENDING payments: one that times out frees its slot.
func TestIntegrationSameAmountLimitFollowsExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{MaxSamePendingAmount: 1, PaymentTTL: 5 * time.Minute})
	ctx := context.Background()
	first := e.pay(t, "a", "1000")
	assert.True(t, first.ValidUntil.Equal(t0.Add(5*time.Minute)), "configured TTL")
	_, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "b", Amount: dec("1000")})
	requireAPIError(t, err, paykit.ErrTooManySameAmount, "PAY_005", http.StatusTooManyRequests)
	e.sb.Advance(5 * time.Minute)
	second := e.pay(t, "b", "1000")
	assert.True(t, second.CreatedAt.Equal(t0.Add(5*time.Minute)))
	assert.Equal(t, paykit.PaymentStatusCancelled, e.status(t, first.ID))
}

// TestIntegrationConcurrentMoney hammers one client from many goroutines:
// the terminal is never overdrawn and no USDT appears or disappears.
func TestIntegrationConcurrentMoney(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{MaxSamePendingAmount: 3})
	ctx := context.Background()
	main, reserve := sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID

	const n = 24
	var wg sync.WaitGroup
	transferErrs := make([]error, n)
	withdrawErrs := make([]error, n)
	payErrs := make([]error, n)
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, transferErrs[i] = e.c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: main, ToTerminalID: reserve, Amount: dec("60")})
		}()
		go func() {
			defer wg.Done()
			_, withdrawErrs[i] = e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: main, Amount: dec("18.50"), Address: "T"})
		}()
		go func() {
			defer wg.Done()
			_, payErrs[i] = e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "c-" + string(rune('A'+i)), Amount: dec("777")})
		}()
	}
	wg.Wait()

	var transfers, withdrawals, payments int
	for i := range n {
		if transferErrs[i] == nil {
			transfers++
		} else {
			requireAPIError(t, transferErrs[i], paykit.ErrInsufficientFunds, "TRF_003", http.StatusBadRequest)
		}
		if withdrawErrs[i] == nil {
			withdrawals++
		} else {
			requireAPIError(t, withdrawErrs[i], paykit.ErrInsufficientFunds, "WDR_002", http.StatusBadRequest)
		}
		if payErrs[i] == nil {
			payments++
		} else {
			requireAPIError(t, payErrs[i], paykit.ErrTooManySameAmount, "PAY_005", http.StatusTooManyRequests)
		}
	}
	assert.Equal(t, 3, payments, "exactly MaxSamePendingAmount payments of one amount")
	assert.Equal(t, n*2-transfers-withdrawals, countErrs(transferErrs)+countErrs(withdrawErrs))

	// 1000.00 = main + reserve + frozen, whatever the interleaving.
	moved := decimal.NewFromInt(int64(60 * transfers))
	held := dec("20.00").Mul(decimal.NewFromInt(int64(withdrawals)))
	mainT, reserveT := e.terminal(t, main), e.terminal(t, reserve)
	assertDec(t, moved.String(), reserveT.Balance, "reserve balance")
	assertDec(t, held.String(), mainT.BalanceFrozen, "main frozen")
	assertDec(t, dec("1000").Sub(moved).Sub(held).String(), mainT.Balance, "main balance")
	assert.False(t, mainT.Balance.IsNegative())
	// Balances only fall, so a refusal means the funds really ran out.
	if transfers < n {
		assert.True(t, mainT.Balance.LessThan(dec("60")), "a transfer was refused with %s left", mainT.Balance)
	}
	if withdrawals < n {
		assert.True(t, mainT.Balance.LessThan(dec("20")), "a withdrawal was refused with %s left", mainT.Balance)
	}
	bal, err := e.c.GetBalance(ctx)
	require.NoError(t, err)
	assertDec(t, "1000.00", bal.Balance.Add(bal.BalanceFrozen), "total")
	st := e.sb.Stats(e.key)
	assert.Equal(t, transfers, st.Transfers)
	assert.Equal(t, withdrawals, st.Withdrawals)
}

func countErrs(errs []error) int {
	n := 0
	for _, err := range errs {
		if err != nil {
			n++
		}
	}
	return n
}

// TestIntegrationLostAnswers drops the answer of each state change after
// the sandbox applied it: the SDK retries, meets "already done" and returns
// the payment in its target state, exactly once. Money moves are never
// re-sent.
func TestIntegrationLostAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	drop := func(path string) sandbox.Fault {
		return sandbox.Fault{Method: "POST", Path: path, Mode: sandbox.FaultDropAfter}
	}

	t.Run("confirm", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.pay(t, "p", "1000")
		require.NoError(t, e.sb.InjectFault(drop("/v1/payments/{id}/confirm")))
		got, err := e.c.ConfirmPayment(ctx, p.ID, &paykit.Attachment{Content: bytes.NewReader(pngReceipt(t))})
		require.NoError(t, err)
		assert.Equal(t, p.ID, got.ID)
		assert.Equal(t, paykit.PaymentStatusProcessing, got.Status)
		assert.Equal(t, 2, e.sb.RequestCount("POST", "/v1/payments/{id}/confirm"))
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.pay(t, "p", "1000")
		require.NoError(t, e.sb.InjectFault(drop("/v1/payments/{id}/cancel")))
		got, err := e.c.CancelPayment(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusCancelled, got.Status)
		assert.Equal(t, 2, e.sb.RequestCount("POST", "/v1/payments/{id}/cancel"))
	})

	t.Run("open dispute", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.cancelled(t, "p", "1000")
		require.NoError(t, e.sb.InjectFault(drop("/v1/payments/{id}/dispute")))
		got, err := e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Amount: dec("900"), Comment: "c"})
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusDispute, got.Status)
		assert.Equal(t, 2, e.sb.RequestCount("POST", "/v1/payments/{id}/dispute"))
		// Settled by reading the payment back, whose GET carries no
		// dispute: the result says only what the service said.
		assert.True(t, got.Reconciled)
		assert.Nil(t, got.Dispute)
	})

	t.Run("cancel dispute", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		p := e.disputed(t, "p", "1000", paykit.OpenDisputeParams{})
		require.NoError(t, e.sb.InjectFault(drop("/v1/payments/{id}/dispute/cancel")))
		got, err := e.c.CancelDispute(ctx, p.ID)
		require.NoError(t, err)
		assert.Equal(t, paykit.PaymentStatusCancelledAppeal, got.Status)
	})

	t.Run("create payout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		require.NoError(t, e.sb.InjectFault(drop("/v1/payouts")))
		got, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po", Amount: dec("10"),
			Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "I P"})
		require.NoError(t, err)
		assert.Equal(t, "po", got.ExtID)
		assert.Equal(t, 1, e.sb.Stats(e.key).Payouts)
	})

	t.Run("withdrawal", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sandbox.Config{})
		require.NoError(t, e.sb.InjectFault(drop("/v1/withdrawals")))
		_, err := e.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultMainTerminalID, Amount: dec("10"), Address: "T"})
		require.Error(t, err)
		assert.True(t, errors.Is(err, paykit.ErrUnknownOutcome), "%v", err)
		assert.Equal(t, 1, e.sb.RequestCount("POST", "/v1/withdrawals"))
		e.assertTerminal(t, sandbox.DefaultMainTerminalID, "988.50", "11.50")
	})
}

// TestIntegrationPayoutExtIDsAndLimits reads payouts back by unusual ext_ids
// and pages with a limit above the service's cap.
func TestIntegrationPayoutExtIDsAndLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	extIDs := []string{"a/b?c#d", "заказ №1", ".", "..", "100%", "a+b c"}
	for _, extID := range extIDs {
		p, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: extID, Amount: dec("1"),
			Method: paykit.PayoutMethodSBP, Requisites: "+79000000000", HolderName: "H"})
		require.NoError(t, err, "%q", extID)
		g, err := e.c.GetPayoutByExtID(ctx, extID)
		if assert.NoError(t, err, "GetPayoutByExtID(%q)", extID) {
			assert.Equal(t, p.ID, g.ID)
			assert.Equal(t, extID, g.ExtID)
		}
	}
	l, err := e.c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 5000})
	require.NoError(t, err)
	assert.Equal(t, len(extIDs), l.Total)
	assert.Len(t, l.Payouts, len(extIDs))
	n := 0
	for _, err := range e.c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 5000, Offset: 2}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, len(extIDs)-2, n)
}

// TestIntegrationBaseURLWithTrailingSlash: a base URL written with a
// trailing slash reaches the same endpoints and signs what it sends.
func TestIntegrationBaseURLWithTrailingSlash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	c, err := paykit.NewClient(e.ts.URL+"/", sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	require.NoError(t, err)
	terms, err := c.ListTerminals(context.Background())
	require.NoError(t, err)
	assert.Len(t, terms, 2)
	p, err := c.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: "slash", Amount: dec("100")})
	require.NoError(t, err)
	assert.Equal(t, paykit.PaymentStatusPending, p.Status)
}

// TestIntegrationWebhooksOnTimeoutAndReview: expiry and dispute reviews
// are status changes too, each notified once and in order.
func TestIntegrationWebhooksOnTimeoutAndReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx := context.Background()
	sink := &hookSink{}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)

	p, err := e.c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "wh-exp", Amount: dec("1000"), NotifyURL: srv.URL, NotificationToken: "t"})
	require.NoError(t, err)
	e.sb.Advance(sandbox.DefaultPaymentTTL)                         // PENDING -> CANCELLED
	_, err = e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{}) // -> DISPUTE
	require.NoError(t, err)
	_, err = e.c.CancelDispute(ctx, p.ID) // -> CANCELLED_APPEAL
	require.NoError(t, err)
	_, err = e.c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Amount: dec("500")}) // -> DISPUTE
	require.NoError(t, err)
	require.NoError(t, e.sb.ReviewDispute(p.ID, sandbox.OutcomeApproved)) // -> COMPLETED
	flushCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, e.sb.FlushWebhooks(flushCtx))

	hooks, _ := sink.hooks()
	var got []paykit.PaymentStatus
	for _, h := range hooks {
		var wp paykit.Payment
		require.NoError(t, json.Unmarshal(h.body, &wp))
		assert.Equal(t, p.ID, wp.ID)
		assert.Equal(t, "t", h.token)
		got = append(got, wp.Status)
	}
	assert.Equal(t, []paykit.PaymentStatus{paykit.PaymentStatusCancelled, paykit.PaymentStatusDispute,
		paykit.PaymentStatusCancelledAppeal, paykit.PaymentStatusDispute, paykit.PaymentStatusCompleted}, got)
	e.assertTerminal(t, sandbox.DefaultMainTerminalID, "1005.41", "0.00") // 500/92.50 = 5.4054 -> 5.41
}

// The waiters against the sandbox: each returns once the sandbox settles
// the resource, whoever moves it.
func TestIntegrationWaiters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sandbox.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fast := paykit.WaitOptions{MinInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}

	p := e.processing(t, "wait-1", "1500.50")
	done := make(chan *paykit.Payment, 1)
	go func() {
		got, err := e.c.WaitPayment(ctx, p.ID, fast)
		assert.NoError(t, err)
		done <- got
	}()
	require.NoError(t, e.sb.VerifyPayment(p.ID, "completed"))
	got := <-done
	assert.Equal(t, paykit.PaymentStatusCompleted, got.Status)
	assert.Equal(t, p.ID, got.ID)

	po, err := e.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "wait-po", Amount: dec("10"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "A B"})
	require.NoError(t, err)
	pdone := make(chan *paykit.Payout, 1)
	go func() {
		got, err := e.c.WaitPayout(ctx, po.ID, fast)
		assert.NoError(t, err)
		pdone <- got
	}()
	require.NoError(t, e.sb.SetPayoutStatus(po.ID, "processing"))
	require.NoError(t, e.sb.SetPayoutStatus(po.ID, "completed"))
	assert.Equal(t, paykit.PayoutStatusCompleted, (<-pdone).Status)
}

// mangle serves the sandbox, except that the answer to method+path is
// replaced after the sandbox has applied the request: the service did the
// work, and the merchant cannot read what it said.
func mangle(t *testing.T, sb *sandbox.Server, method, path, mode string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method || r.URL.Path != path {
			sb.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		switch mode {
		case "truncated": // no Content-Length, connection closed mid-body
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
			buf.Write(body[:len(body)/2])
			buf.Flush()
			conn.Close()
		case "empty":
			w.WriteHeader(http.StatusOK)
		case "204":
			w.WriteHeader(http.StatusNoContent)
		case "html":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "<html><body>Maintenance</body></html>")
		default:
			panic("unknown mode " + mode)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sandboxClient(t *testing.T, url string, opts ...paykit.Option) *paykit.Client {
	t.Helper()
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(url, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret), opts...)
	require.NoError(t, err)
	return c
}

func sbTerminalBalance(t *testing.T, sb *sandbox.Server, id string) decimal.Decimal {
	t.Helper()
	for _, term := range sb.Terminals(sandbox.DefaultAPIKey) {
		if term.ID == id {
			return term.Balance
		}
	}
	t.Fatalf("no terminal %s", id)
	return decimal.Decimal{}
}

// bareTransport forwards requests to the server with a transport of its
// own and a context that carries no httptrace, like a signing proxy or an
// instrumentation wrapper: the SDK sees no trace events from it.
type bareTransport struct {
	inner http.RoundTripper
	after func(*http.Response, error) (*http.Response, error)
}

func (b *bareTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(context.Background())
	resp, err := b.inner.RoundTrip(out)
	return b.after(resp, err)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const (
	unsaidPaymentID    = "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70"
	unsaidPayoutID     = "0b7d3c2a-1e4f-4a5b-8c6d-7e8f9a0b1c2d"
	unsaidWithdrawalID = "9a8b7c6d-5e4f-4321-8765-43210fedcba9"
)

// unsaidPaymentJSON is a payment as GET returns it, in the given status.
func unsaidPaymentJSON(status string) string {
	return `{"id":"` + unsaidPaymentID + `","ext_id":"order-1","amount":1500.50,"currency":"RUB","status":"` + status + `",` +
		`"method":"CARD","requisites":{"type":"card","value":"2200123456789010","bank":"Sberbank","holder":"Ivan I."},` +
		`"payment_url":null,"valid_until":"2025-03-01T12:20:00Z","created_at":"2025-03-01T12:00:00Z","usdt_rate":92.50}`
}

// unsaidPayoutJSON is a payout as GET returns it, in the given status.
func unsaidPayoutJSON(status string) string {
	return `{"id":"` + unsaidPayoutID + `","ext_id":"payout-1","amount":2500.00,"currency":"RUB","method":"card",` +
		`"requisites":"2200123456789010","holder_name":"IVAN IVANOV","bank":"","status":"` + status + `",` +
		`"provider_order_id":"","created_at":"2025-03-01T12:00:00Z"}`
}

// unsaidWithdrawalJSON is a withdrawal as GET returns it, in the given status.
func unsaidWithdrawalJSON(status string) string {
	return `{"id":"` + unsaidWithdrawalID + `","amount":100.00,"fee":1.50,"currency":"USDT","address":"TXyz",` +
		`"tx_hash":null,"status":"` + status + `","created_at":"2025-03-01T12:00:00Z","updated_at":"2025-03-01T12:00:00Z"}`
}

// answer is a canned response of a fake API.
type answer struct {
	status int
	body   string
}

// fakeAPI serves canned answers keyed by "METHOD /escaped/path" over real
// loopback HTTP (anything else answers 404 with no body) and logs every
// request. The client retries within milliseconds.
func fakeAPI(t *testing.T, answers map[string]answer, opts ...paykit.Option) (*paykit.Client, *wireLog) {
	t.Helper()
	log := &wireLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		a, ok := answers[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	opts = append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond)}, opts...)
	c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret), opts...)
	require.NoError(t, err)
	return c, log
}

// count counts the logged requests with this method and URI.
func (l *wireLog) count(method, uri string) int {
	n := 0
	for _, r := range l.all() {
		if r.Method == method && r.URI == uri {
			n++
		}
	}
	return n
}

// requestLines lists the logged requests as "METHOD URI".
func requestLines(l *wireLog) []string {
	var out []string
	for _, r := range l.all() {
		out = append(out, r.Method+" "+r.URI)
	}
	return out
}

func unsaidID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
