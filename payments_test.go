package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cardPaymentJSON = `{
  "id": "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70",
  "ext_id": "order-1001",
  "amount": 1500.50,
  "currency": "RUB",
  "status": "PENDING",
  "method": "CARD",
  "requisites": {"type": "card", "value": "2200123456789012", "bank": "Sberbank", "bank_code": "sber", "holder": "IVAN I."},
  "payment_url": "https://pay.example/p/6f1c2a5e",
  "valid_until": "2026-11-22T10:20:00Z",
  "created_at": "2026-11-22T10:00:00.250Z",
  "usdt_rate": 92.45,
  "some_future_field": {"x": 1}
}`

const crossBorderPaymentJSON = `{
  "id": "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70",
  "ext_id": "order-1002",
  "amount": "20000",
  "currency": "RUB",
  "status": "PENDING",
  "method": "CROSS_BORDER",
  "requisites": {"type": "phone", "value": "+992900112233", "bank": "tj_amonat", "bank_name": "Amonatbonk",
                 "holder": "RUSTAM N.", "country": "TJ", "currency": "TJS", "amount_local": 2380.95},
  "payment_url": null,
  "valid_until": "2026-11-22T10:20:00+03:00",
  "created_at": "2026-11-22T07:00:00",
  "usdt_rate": "92.4500"
}`

func TestCreatePaymentCard(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusCreated, cardPaymentJSON)
	p, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-1001", Amount: dec("1500.50"),
		Method: MethodCard, Bank: "sber", ClientID: "cust-7", NotifyURL: "https://shop.example/hook", NotificationToken: "tok-1"})
	require.NoError(t, err)
	assertWire(t, rec.only(t), "POST", "/v1/payments", "application/json",
		`{"ext_id":"order-1001","amount":1500.50,"method":"CARD","bank":"sber","client_id":"cust-7","notify_url":"https://shop.example/hook","notification_token":"tok-1"}`)

	assert.Equal(t, paymentID, p.ID)
	assert.Equal(t, "order-1001", p.ExtID)
	assertDec(t, "1500.50", p.Amount, "amount")
	assert.Equal(t, "1500.5", p.Amount.String())
	assert.Equal(t, "RUB", p.Currency)
	assert.Equal(t, PaymentStatusPending, p.Status)
	assert.Equal(t, MethodCard, p.Method)
	assert.Equal(t, RequisitesCard, p.Requisites.Type)
	assert.Equal(t, "2200123456789012", p.Requisites.Value)
	assert.Equal(t, "sber", p.Requisites.BankCode)
	assert.Equal(t, "Sberbank", p.Requisites.BankName)
	assert.Equal(t, "IVAN I.", p.Requisites.Holder)
	assert.Empty(t, p.Requisites.Country)
	assert.Empty(t, p.Requisites.Currency)
	assert.True(t, p.Requisites.AmountLocal.IsZero())
	assert.Equal(t, "https://pay.example/p/6f1c2a5e", p.PaymentURL)
	assert.Equal(t, time.Date(2026, 11, 22, 10, 20, 0, 0, time.UTC), p.ValidUntil)
	assert.Equal(t, time.Date(2026, 11, 22, 10, 0, 0, 250e6, time.UTC), p.CreatedAt)
	assertDec(t, "92.45", p.USDTRate, "usdt_rate")
	assert.Empty(t, p.Message)
	assert.Nil(t, p.Dispute)
}

func TestCreatePaymentCrossBorder(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, crossBorderPaymentJSON)
	p, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "order-1002", Amount: dec("20000"),
		Method: MethodCrossBorder, Country: CountryTJ})
	require.NoError(t, err)
	assertWire(t, rec.only(t), "POST", "/v1/payments", "application/json",
		`{"ext_id":"order-1002","amount":20000,"method":"CROSS_BORDER","country":"TJ"}`)

	assert.Equal(t, MethodCrossBorder, p.Method)
	assertDec(t, "20000", p.Amount, "amount (numeric string)")
	r := p.Requisites
	assert.Equal(t, RequisitesPhone, r.Type)
	assert.Equal(t, "+992900112233", r.Value)
	assert.Equal(t, "tj_amonat", r.BankCode, "cross-border code travels in bank")
	assert.Equal(t, "Amonatbonk", r.BankName)
	assert.Equal(t, "RUSTAM N.", r.Holder)
	assert.Equal(t, CountryTJ, r.Country)
	assert.Equal(t, "TJS", r.Currency)
	assertDec(t, "2380.95", r.AmountLocal, "amount_local")
	assert.Empty(t, p.PaymentURL, "null payment_url")
	assert.Equal(t, time.Date(2026, 11, 22, 7, 20, 0, 0, time.UTC), p.ValidUntil, "offset converted to UTC")
	assert.Equal(t, time.UTC, p.ValidUntil.Location())
	assert.Equal(t, time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC), p.CreatedAt, "zone-less time taken as UTC")
	assertDec(t, "92.45", p.USDTRate, "usdt_rate")
}

func TestCreatePaymentMinimalBodyOmitsOptionalFields(t *testing.T) {
	t.Parallel()
	c, rec := echoClient(t, http.StatusOK, cardPaymentJSON)
	_, err := c.CreatePayment(ctx, CreatePaymentParams{ExtID: "o", Amount: dec("100")})
	require.NoError(t, err)
	assertWire(t, rec.only(t), "POST", "/v1/payments", "application/json", `{"ext_id":"o","amount":100}`)
}

func TestAmountsKeepTheirDigits(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1500.50", "1500.50"}, {"100", "100"}, {"300000.00", "300000.00"}, {"0.000001", "0.000001"},
		{"1e3", "1000"}, {"-2.10", "-2.10"}, {"123456789012345678901234567890.123", "123456789012345678901234567890.123"},
	} {
		b, err := json.Marshal(struct {
			A json.Number `json:"a"`
		}{amount(dec(tc.in))})
		require.NoError(t, err)
		assert.Equal(t, `{"a":`+tc.want+`}`, string(b), tc.in)
	}
}

func TestGetPaymentAndByExtID(t *testing.T) {
	t.Parallel()
	// The get response carries requisites with type, value, bank, holder
	// only: "bank" is the name for domestic methods, the code for cross-border.
	const domestic = `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"a/b?c#d","amount":500,"currency":"RUB",
		"status":"COMPLETED","method":"SBP","requisites":{"type":"sbp","value":"+79001234567","bank":"Tinkoff","holder":"P. S."},
		"payment_url":null,"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z","usdt_rate":90}`
	const foreign = `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"x","amount":500,"currency":"RUB",
		"status":"CANCELLED","method":"CROSS_BORDER","requisites":{"type":"phone","value":"+99890","bank":"uz_kapital","holder":"A."}}`
	cases := []struct {
		name, body, uri  string
		call             func(c *Client) (*Payment, error)
		status           PaymentStatus
		bankCode, bankNm string
	}{
		{"by id", domestic, "/v1/payments/" + paymentID, func(c *Client) (*Payment, error) { return c.GetPayment(ctx, paymentID) },
			PaymentStatusCompleted, "", "Tinkoff"},
		{"by ext id escaped", domestic, "/v1/payments/by-ext-id/a%2Fb%3Fc%23d",
			func(c *Client) (*Payment, error) { return c.GetPaymentByExtID(ctx, "a/b?c#d") }, PaymentStatusCompleted, "", "Tinkoff"},
		{"by ext id unicode", domestic, "/v1/payments/by-ext-id/%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7%201",
			func(c *Client) (*Payment, error) { return c.GetPaymentByExtID(ctx, "заказ 1") }, PaymentStatusCompleted, "", "Tinkoff"},
		{"by ext id dot-dot stays one segment", domestic, "/v1/payments/by-ext-id/%2E%2E",
			func(c *Client) (*Payment, error) { return c.GetPaymentByExtID(ctx, "..") }, PaymentStatusCompleted, "", "Tinkoff"},
		{"by ext id dot", domestic, "/v1/payments/by-ext-id/%2E",
			func(c *Client) (*Payment, error) { return c.GetPaymentByExtID(ctx, ".") }, PaymentStatusCompleted, "", "Tinkoff"},
		{"cross-border bank is the code", foreign, "/v1/payments/" + paymentID,
			func(c *Client) (*Payment, error) { return c.GetPayment(ctx, paymentID) }, PaymentStatusCancelled, "uz_kapital", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := tc.body
			if ext, ok := strings.CutPrefix(tc.uri, "/v1/payments/by-ext-id/"); ok {
				// The answer must be the payment asked for.
				ext, err := url.PathUnescape(ext)
				require.NoError(t, err)
				quoted, _ := json.Marshal(ext)
				body = strings.Replace(body, `"ext_id":"a/b?c#d"`, `"ext_id":`+string(quoted), 1)
			}
			c, rec := mockClient(t, http.StatusOK, body)
			p, err := tc.call(c)
			require.NoError(t, err)
			assertWire(t, rec.only(t), "GET", tc.uri, "", "")
			assert.Equal(t, tc.status, p.Status)
			assert.Equal(t, tc.bankCode, p.Requisites.BankCode)
			assert.Equal(t, tc.bankNm, p.Requisites.BankName)
		})
	}
}

func TestGetPaymentDecodesEveryField(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"e","amount":"777.70","currency":"RUB",
		"status":"PROCESSING","method":"SIM","requisites":{"type":"sim","value":"+79990001122","bank":"MTS Bank","holder":"O. K."},
		"payment_url":"https://p","valid_until":"2026-01-02T03:04:05.123456Z","created_at":"2026-01-02","usdt_rate":"95.1"}`)
	p, err := c.GetPayment(ctx, paymentID)
	require.NoError(t, err)
	assert.Equal(t, "e", p.ExtID)
	assertDec(t, "777.70", p.Amount, "amount")
	assert.Equal(t, MethodSIM, p.Method)
	assert.Equal(t, PaymentStatusProcessing, p.Status)
	assert.Equal(t, Requisites{Type: RequisitesSIM, Value: "+79990001122", BankName: "MTS Bank", Holder: "O. K."}, p.Requisites)
	assert.Equal(t, "https://p", p.PaymentURL)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC), p.ValidUntil)
	assert.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), p.CreatedAt)
	assertDec(t, "95.1", p.USDTRate, "usdt_rate")
}

func TestUnknownEnumsKeptAsSent(t *testing.T) {
	t.Parallel()
	c, _ := mockClient(t, http.StatusOK, `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","status":"ON_HOLD","method":"CRYPTO",
		"requisites":{"type":"iban","value":"x","country":"AM"}}`)
	p, err := c.GetPayment(ctx, paymentID)
	require.NoError(t, err)
	assert.Equal(t, PaymentStatus("ON_HOLD"), p.Status)
	assert.Equal(t, PaymentMethod("CRYPTO"), p.Method)
	assert.Equal(t, RequisitesType("iban"), p.Requisites.Type)
	assert.Equal(t, Country("AM"), p.Requisites.Country)
}

// pngBytes is a real 2x2 PNG image.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

const confirmJSON = `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"currency":"RUB",
	"status":"PROCESSING","method":"CARD","requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","holder":"IVAN I."},
	"payment_url":"https://pay.example/p/1","valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z",
	"message":"Payment confirmation received, awaiting verification"}`

func TestConfirmPaymentWithReceipt(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, confirmJSON)
	img := pngBytes(t)
	p, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Filename: `C:\Users\me\"receipt".png`, Content: bytes.NewReader(img)})
	require.NoError(t, err)
	got := rec.only(t)
	assertWire(t, got, "POST", "/v1/payments/"+paymentID+"/confirm", got.ContentType, "<multipart>")

	mediaType, params, err := mime.ParseMediaType(got.ContentType)
	require.NoError(t, err)
	assert.Equal(t, "multipart/form-data", mediaType)
	mr := multipart.NewReader(bytes.NewReader(got.Body), params["boundary"])
	part, err := mr.NextPart()
	require.NoError(t, err)
	assert.Equal(t, "attachment", part.FormName())
	assert.Equal(t, `"receipt".png`, part.FileName())
	assert.Equal(t, "image/png", part.Header.Get("Content-Type"))
	content, err := io.ReadAll(part)
	require.NoError(t, err)
	assert.Equal(t, img, content)
	_, err = mr.NextPart()
	assert.Equal(t, io.EOF, err, "exactly one part")

	assert.Equal(t, PaymentStatusProcessing, p.Status)
	assert.Equal(t, "Payment confirmation received, awaiting verification", p.Message)
	assert.Equal(t, "Sberbank", p.Requisites.BankName)
	assert.Equal(t, "2200123456789012", p.Requisites.Value)
	assert.True(t, p.USDTRate.IsZero(), "confirm response has no usdt_rate")
}

func TestConfirmPaymentWithoutReceipt(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, confirmJSON)
	_, err := c.ConfirmPayment(ctx, paymentID, nil)
	require.NoError(t, err)
	got := rec.only(t)
	_, params, err := mime.ParseMediaType(got.ContentType)
	require.NoError(t, err)
	assert.Equal(t, "\r\n--"+params["boundary"]+"--\r\n", string(got.Body), "an empty form")
	_, err = multipart.NewReader(bytes.NewReader(got.Body), params["boundary"]).NextPart()
	assert.Equal(t, io.EOF, err, "no parts")
	assert.Equal(t, wantSignature("POST", "/v1/payments/"+paymentID+"/confirm", got.Body), got.Signature)
}

func TestCancelAndDisputeOperations(t *testing.T) {
	t.Parallel()
	cancelled := `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"currency":"RUB",
		"status":"CANCELLED","method":"CARD","requisites":{"type":"card","value":"2200123456789012","bank":"Sberbank","holder":"IVAN I."},
		"payment_url":null,"valid_until":"2026-11-22T10:20:00Z","created_at":"2026-11-22T10:00:00Z"}`
	dispute := `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"currency":"RUB","status":"dispute",
		"method":"CARD","dispute":{"amount":1400.00,"receipt_url":"https://r.example/1.png","comment":"paid less","created_at":"2026-11-22T11:00:00Z"},
		"created_at":"2026-11-22T10:00:00Z"}`
	disputeNull := `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","amount":1500.50,"status":"dispute","dispute":{"amount":null,"receipt_url":"","comment":"","created_at":"2026-11-22T11:00:00Z"}}`
	appeal := `{"id":"6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70","ext_id":"order-1001","status":"cancelled_appeal"}`

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		c, rec := mockClient(t, http.StatusOK, cancelled)
		p, err := c.CancelPayment(ctx, paymentID)
		require.NoError(t, err)
		assertWire(t, rec.only(t), "POST", "/v1/payments/"+paymentID+"/cancel", "", "")
		assert.Equal(t, PaymentStatusCancelled, p.Status)
		assert.Equal(t, "order-1001", p.ExtID)
		assert.Empty(t, p.PaymentURL)
	})
	t.Run("open dispute", func(t *testing.T) {
		t.Parallel()
		c, rec := mockClient(t, http.StatusOK, dispute)
		p, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec("1400.00"), ReceiptURL: "https://r.example/1.png", Comment: "paid less"})
		require.NoError(t, err)
		assertWire(t, rec.only(t), "POST", "/v1/payments/"+paymentID+"/dispute", "application/json",
			`{"amount":1400.00,"receipt_url":"https://r.example/1.png","comment":"paid less"}`)
		assert.Equal(t, PaymentStatusDispute, p.Status, "lower-case dispute normalised")
		assertDec(t, "1500.50", p.Amount, "amount")
		require.NotNil(t, p.Dispute)
		require.True(t, p.Dispute.Amount.Valid)
		assertDec(t, "1400", p.Dispute.Amount.Decimal, "dispute.amount")
		assert.Equal(t, "https://r.example/1.png", p.Dispute.ReceiptURL)
		assert.Equal(t, "paid less", p.Dispute.Comment)
		assert.Equal(t, time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC), p.Dispute.CreatedAt)
		assert.Empty(t, p.Requisites.Value, "dispute response has no requisites")
	})
	t.Run("open dispute with nothing to say", func(t *testing.T) {
		t.Parallel()
		c, rec := mockClient(t, http.StatusOK, disputeNull)
		p, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{})
		require.NoError(t, err)
		assertWire(t, rec.only(t), "POST", "/v1/payments/"+paymentID+"/dispute", "application/json", `{}`)
		require.NotNil(t, p.Dispute)
		assert.False(t, p.Dispute.Amount.Valid, "null amount is not a number")
	})
	t.Run("dispute amount: null, absent and 0 are told apart", func(t *testing.T) {
		t.Parallel()
		for body, want := range map[string]decimal.NullDecimal{
			`{"amount":null}`: {},
			`{}`:              {},
			`{"amount":0}`:    decimal.NewNullDecimal(decimal.Zero),
			`{"amount":"0"}`:  decimal.NewNullDecimal(decimal.Zero),
			`{"amount":12.5}`: decimal.NewNullDecimal(decimal.RequireFromString("12.5")),
		} {
			var d Dispute
			require.NoError(t, json.Unmarshal([]byte(body), &d), body)
			assert.Equal(t, want.Valid, d.Amount.Valid, body)
			assert.True(t, want.Decimal.Equal(d.Amount.Decimal), body)
		}
	})
	t.Run("cancel dispute", func(t *testing.T) {
		t.Parallel()
		c, rec := mockClient(t, http.StatusOK, appeal)
		p, err := c.CancelDispute(ctx, paymentID)
		require.NoError(t, err)
		assertWire(t, rec.only(t), "POST", "/v1/payments/"+paymentID+"/dispute/cancel", "", "")
		assert.Equal(t, PaymentStatusCancelledAppeal, p.Status, "lower-case cancelled_appeal normalised")
		assert.Equal(t, paymentID, p.ID)
		assert.Equal(t, "order-1001", p.ExtID)
	})
}

func TestConfirmReceiptReadError(t *testing.T) {
	t.Parallel()
	c, rec := mockClient(t, http.StatusOK, confirmJSON)
	_, err := c.ConfirmPayment(ctx, paymentID, &Attachment{Content: iotest.ErrReader(errors.New("disk gone"))})
	require.ErrorContains(t, err, "disk gone")
	assert.Equal(t, 0, rec.count())
}

func TestImageTypes(t *testing.T) {
	heic := append([]byte{0, 0, 0, 24}, []byte("ftypheic\x00\x00\x00\x00")...)
	assert.Equal(t, "image/heic", imageType(heic))
	assert.Equal(t, "image/jpeg", imageType([]byte("\xFF\xD8\xFF\xE0rest")))
	assert.Equal(t, "image/png", imageType(pngBytes(t)))
	assert.Equal(t, "", imageType([]byte("GIF87")), "truncated")
	assert.Equal(t, "", imageType(append([]byte{0, 0, 0, 24}, []byte("ftypmp42xxxx")...)), "video")
}

func TestReceiptLimitIsTenMillionBytes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 10_000_000, MaxAttachmentSize)
	png := pngBytes(t)
	exact := append(png, make([]byte, MaxAttachmentSize-len(png))...)
	c, rec := mockClient(t, http.StatusOK, `{"id":"`+paymentID+`","ext_id":"o-1","amount":100,"status":"PROCESSING"}`)
	_, err := c.ConfirmPayment(context.Background(), paymentID, &Attachment{Content: strings.NewReader(string(exact))})
	require.NoError(t, err, "10,000,000 bytes is within the limit")
	assert.Equal(t, 1, rec.count())
	over := append(exact, 0)
	_, err = c.ConfirmPayment(context.Background(), paymentID, &Attachment{Content: strings.NewReader(string(over))})
	var vErr *ValidationError
	require.ErrorAs(t, err, &vErr)
	assert.Equal(t, "attachment", vErr.Field)
	assert.Equal(t, "is larger than 10 MB (10,000,000 bytes)", vErr.Reason, "MB, as counted, not MiB")
	assert.Equal(t, 1, rec.count(), "nothing sent")

	// ConfirmPayment's godoc states the same limit in the same unit.
	f, err := parser.ParseFile(token.NewFileSet(), "payments.go", nil, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	var doc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "ConfirmPayment" {
			doc = fn.Doc.Text()
		}
	}
	assert.Contains(t, doc, "10 MB")
	assert.NotContains(t, doc, "MiB")
}

// A retry of OpenDispute that meets DIS_002 returns the payment as read
// back: the GET carries no dispute, so Dispute stays nil rather than being
// made up from the call's own params.
func TestOpenDisputeRetryFindingItOpenCarriesOnlyWhatWasRead(t *testing.T) {
	t.Parallel()
	var posts atomic.Int32
	rt := newRoutes(map[string]func() (int, string){
		"POST /v1/payments/" + paymentID + "/dispute": func() (int, string) {
			if posts.Add(1) == 1 {
				return 502, `<html>bad gateway</html>`
			}
			return 409, opErrBody("DIS_002", "dispute already exists")
		},
		"GET /v1/payments/" + paymentID: fixed(200, paymentBody(paymentID, "order-A", "1500.50", "DISPUTE")),
	})
	c, _ := serverClient(t, rt)
	p, err := c.OpenDispute(ctx, paymentID, OpenDisputeParams{Amount: dec("1400"), ReceiptURL: "https://r.example/1.png", Comment: "paid less"})
	require.NoError(t, err)
	assert.Equal(t, 2, rt.count("POST /v1/payments/"+paymentID+"/dispute"))
	assert.Equal(t, 1, rt.count("GET /v1/payments/"+paymentID))
	assert.True(t, p.Reconciled, "settled by reading back")
	assert.Equal(t, PaymentStatusDispute, p.Status)
	assert.Equal(t, paymentID, p.ID)
	assert.Equal(t, "order-A", p.ExtID)
	assertDec(t, "1500.50", p.Amount, "amount")
	assert.Nil(t, p.Dispute, "the read-back carries no dispute; none is made from params")
}
