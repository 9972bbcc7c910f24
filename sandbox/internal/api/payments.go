package api

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// confirmedMessage is the message of a confirm's answer.
const confirmedMessage = "Payment confirmation received, the transfer is awaiting verification"

// Limits of the spec, as decimals.
var (
	minPaymentAmount = decimal.NewFromInt(spec.MinPaymentAmount)
	maxPaymentAmount = decimal.NewFromInt(spec.MaxPaymentAmount)
)

// Messages that name the spec's limits.
var (
	// rubScaleMessage is the PAY_002 message of a finer RUB amount.
	rubScaleMessage    = fmt.Sprintf("RUB amounts have at most %d decimal places (kopecks)", spec.RUBScale)
	paymentAmountRange = fmt.Sprintf("from %d to %d RUB", spec.MinPaymentAmount, spec.MaxPaymentAmount)
	receiptSizeMessage = fmt.Sprintf("attachment is larger than %d MB (%d bytes)", spec.MaxAttachmentSize/1_000_000, spec.MaxAttachmentSize)
)

// rubPrecise reports whether d has at most spec.RUBScale decimal places
// (trailing zeros do not count: 1500.500 is 1500.50). No bank moves a
// fraction of a kopeck, so a finer amount is refused, not rounded.
func rubPrecise(d decimal.Decimal) bool {
	return d.Equal(d.Truncate(spec.RUBScale))
}

// RequisitesBody is a payment's requisites on the wire.
type RequisitesBody struct {
	// Type is card, sbp, sim or phone.
	Type string `json:"type"`
	// Value is the card or phone number to pay to.
	Value string `json:"value"`
	// Bank is the bank's name, or its code for CROSS_BORDER.
	Bank string `json:"bank"`
	// BankCode is the bank's code (create only, not CROSS_BORDER).
	BankCode string `json:"bank_code,omitempty"`
	// BankName is the bank's name (create only, CROSS_BORDER).
	BankName string `json:"bank_name,omitempty"`
	// Holder is the holder's name.
	Holder string `json:"holder"`
	// Country is the country (create only, CROSS_BORDER).
	Country string `json:"country,omitempty"`
	// Currency is the local currency (create only, CROSS_BORDER).
	Currency string `json:"currency,omitempty"`
	// AmountLocal is the amount in it (create only, CROSS_BORDER).
	AmountLocal *RUB `json:"amount_local,omitempty"`
}

// PaymentBody is a payment on the wire: the answer of the payment
// endpoints and the body of a payment webhook.
type PaymentBody struct {
	// ID is the service's id.
	ID string `json:"id"`
	// ExtID is the merchant's order id.
	ExtID string `json:"ext_id"`
	// Amount is in RUB, with the scale it was sent with.
	Amount RUB `json:"amount"`
	// Currency is always RUB.
	Currency string `json:"currency"`
	// Status is upper case, as the spec writes it.
	Status string `json:"status"`
	// Method is SBP, CARD, SIM or CROSS_BORDER.
	Method string `json:"method"`
	// Requisites is where the payer pays.
	Requisites RequisitesBody `json:"requisites"`
	// PaymentURL is the payer page; null when there is none.
	PaymentURL *string `json:"payment_url"`
	// ValidUntil is when a PENDING payment expires.
	ValidUntil string `json:"valid_until"`
	// CreatedAt is when it was created.
	CreatedAt string `json:"created_at"`
	// USDTRate is RUB per USDT (not in confirm and cancel answers).
	USDTRate *RUB `json:"usdt_rate,omitempty"`
	// Message is confirm's message for the merchant.
	Message string `json:"message,omitempty"`
}

type paymentDisputeBody struct {
	Amount     *RUB   `json:"amount"`
	ReceiptURL string `json:"receipt_url"`
	Comment    string `json:"comment"`
	CreatedAt  string `json:"created_at"`
}

type paymentDisputeOpenBody struct {
	ID        string             `json:"id"`
	ExtID     string             `json:"ext_id"`
	Amount    RUB                `json:"amount"`
	Currency  string             `json:"currency"`
	Status    string             `json:"status"`
	Method    string             `json:"method"`
	Dispute   paymentDisputeBody `json:"dispute"`
	CreatedAt string             `json:"created_at"`
}

type paymentDisputeCancelBody struct {
	ID     string `json:"id"`
	ExtID  string `json:"ext_id"`
	Status string `json:"status"`
}

// paymentViewOf renders a payment. full selects the create response's
// requisites (bank_code, or bank_name/country/currency/amount_local for
// CROSS_BORDER); otherwise requisites carry type, value, bank and holder
// only.
func paymentViewOf(p *ledger.Payment, full, withRate bool) PaymentBody {
	v := PaymentBody{
		ID: p.ID, ExtID: p.ExtID, Amount: RUB(p.Amount), Currency: "RUB", Status: p.Status,
		Method: p.Method, ValidUntil: Timestamp(p.ValidUntil), CreatedAt: Timestamp(p.CreatedAt),
		Requisites: RequisitesBody{Type: p.ReqType, Value: p.ReqValue, Holder: p.Holder},
	}
	if p.PaymentURL != "" {
		u := p.PaymentURL
		v.PaymentURL = &u
	}
	if withRate {
		r := RUB(p.USDTRate)
		v.USDTRate = &r
	}
	if p.Method == spec.MethodCrossBorder {
		v.Requisites.Bank = p.Bank.Code
		if full {
			al := RUB(p.AmountLocal)
			v.Requisites.BankName = p.Bank.Name
			v.Requisites.Country = p.Country
			v.Requisites.Currency = p.Currency
			v.Requisites.AmountLocal = &al
		}
	} else {
		v.Requisites.Bank = p.Bank.Name
		if full {
			v.Requisites.BankCode = p.Bank.Code
		}
	}
	return v
}

// PaymentView is what GET returns and what a payment webhook carries.
func PaymentView(p *ledger.Payment) PaymentBody { return paymentViewOf(p, false, true) }

func paymentDisputeOpenViewOf(p *ledger.Payment) paymentDisputeOpenBody {
	d := p.Dispute
	dv := paymentDisputeBody{ReceiptURL: d.ReceiptURL, Comment: d.Comment, CreatedAt: Timestamp(d.CreatedAt)}
	if d.Amount != nil {
		a := RUB(*d.Amount)
		dv.Amount = &a
	}
	return paymentDisputeOpenBody{ID: p.ID, ExtID: p.ExtID, Amount: RUB(p.Amount), Currency: "RUB",
		Status: "dispute", Method: p.Method, Dispute: dv, CreatedAt: Timestamp(p.CreatedAt)}
}

type paymentCreateReq struct {
	ExtID             string `json:"ext_id"`
	Amount            Amount `json:"amount"`
	Method            string `json:"method"`
	Bank              string `json:"bank"`
	Country           string `json:"country"`
	ClientID          string `json:"client_id"`
	NotifyURL         string `json:"notify_url"`
	NotificationToken string `json:"notification_token"`
}

// ValidURL reports whether s is an absolute http(s) URL, as notify_url
// and receipt_url must be.
func ValidURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// paymentNewOf checks a create payment body field by field.
func paymentNewOf(body []byte) (NewPayment, *Error) {
	var req paymentCreateReq
	if err := decodeJSON(body, &req, false); err != nil {
		return NewPayment{}, Invalid(spec.CodePAY002, "body", "request body is not valid JSON: "+err.Error())
	}
	if strings.TrimSpace(req.ExtID) == "" {
		// Blank is no order id, as for payouts: no merchant could find
		// the payment by it.
		return NewPayment{}, Invalid(spec.CodePAY002, "ext_id", "ext_id is required")
	}
	if n := utf8.RuneCountInString(req.ExtID); n > spec.MaxExtIDLength {
		return NewPayment{}, Invalid(spec.CodePAY002, "ext_id", fmt.Sprintf("ext_id must be 1 to %d characters", spec.MaxExtIDLength))
	}
	if !req.Amount.Set {
		return NewPayment{}, Invalid(spec.CodePAY002, "amount", "amount is required")
	}
	amt := req.Amount.D
	if amt.LessThan(minPaymentAmount) || amt.GreaterThan(maxPaymentAmount) {
		return NewPayment{}, Invalid(spec.CodePAY002, "amount", "amount must be "+paymentAmountRange)
	}
	if !rubPrecise(amt) {
		return NewPayment{}, Invalid(spec.CodePAY002, "amount", rubScaleMessage)
	}
	method := req.Method
	if method == "" {
		method = spec.MethodCard
	}
	if !slices.Contains(spec.PaymentMethods, method) {
		return NewPayment{}, Invalid(spec.CodePAY002, "method", "method must be exactly SBP, CARD, SIM or CROSS_BORDER (upper case)")
	}
	if req.Country != "" {
		if method != spec.MethodCrossBorder {
			return NewPayment{}, Invalid(spec.CodePAY002, "country", "country is only for CROSS_BORDER payments")
		}
		if !slices.Contains(spec.Countries, req.Country) {
			return NewPayment{}, Invalid(spec.CodePAY002, "country", "country must be exactly TJ, KZ, UZ or KG (upper case)")
		}
	}
	if req.NotifyURL != "" && !ValidURL(req.NotifyURL) {
		return NewPayment{}, Invalid(spec.CodePAY002, "notify_url", "notify_url must be an absolute http(s) URL")
	}
	if aerr := tooLong(spec.CodePAY002, capped{"client_id", req.ClientID, MaxNameLength},
		capped{"notification_token", req.NotificationToken, MaxTokenLength},
		capped{"notify_url", req.NotifyURL, MaxURLLength}); aerr != nil {
		return NewPayment{}, aerr
	}
	return NewPayment{ExtID: req.ExtID, Amount: amt, Method: method, Bank: req.Bank, Country: req.Country,
		ClientID: req.ClientID, NotifyURL: req.NotifyURL, Token: req.NotificationToken}, nil
}

// alreadyExists is a create's PAY_003 naming the ext_id, as the spec's
// answer does.
func alreadyExists(lerr *ledger.Error, extID string) *Error {
	e := FromLedger(lerr)
	if lerr.Kind == ledger.Conflict {
		e.Data = map[string]any{"ext_id": extID}
	}
	return e
}

func (a *API) createPayment(r *http.Request, key string, body []byte) (any, *Error) {
	in, aerr := paymentNewOf(body)
	if aerr != nil {
		return nil, aerr
	}
	in.BaseURL = a.baseURL(r)
	p, lerr := a.b.CreatePayment(key, in)
	if lerr != nil {
		return nil, alreadyExists(lerr, in.ExtID)
	}
	return paymentViewOf(&p, true, true), nil
}

func (a *API) getPayment(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.Payment(key, r.PathValue("id"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return PaymentView(&p), nil
}

func (a *API) getPaymentByExtID(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.PaymentByExtID(key, r.PathValue("extId"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return PaymentView(&p), nil
}

// paymentRefusal is a payment request's bad body, unless the payment it
// names does not exist: a missing payment is told first, whatever the
// body (PAY_006 before PAY_002).
func (a *API) paymentRefusal(key, id string, bad *Error) *Error {
	if _, lerr := a.b.Payment(key, id); lerr != nil {
		return FromLedger(lerr)
	}
	return bad
}

// IsImage reports whether data is an image by its leading bytes, as the
// SDK's check before it sends a receipt: what http.DetectContentType calls
// image/*, and HEIC/HEIF (what phones save), an ISO-BMFF "ftyp" box with a
// HEIF brand, which it does not know.
func IsImage(data []byte) bool {
	if strings.HasPrefix(http.DetectContentType(data), "image/") {
		return true
	}
	if len(data) >= 12 && string(data[4:8]) == "ftyp" {
		switch string(data[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return true
		}
	}
	return false
}

// receiptSize checks a confirm body and returns the size of its optional
// attachment part. The spec's content type is multipart/form-data, so
// anything else (JSON, no Content-Type, an empty body without a
// multipart type) is PAY_002; a form without an attachment part is "no
// file", which the spec allows.
func receiptSize(r *http.Request, body []byte) (int, *Error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return 0, Invalid(spec.CodePAY002, "content_type", "confirm takes multipart/form-data (with an optional attachment part)")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	size := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return size, nil
		}
		if err != nil {
			return 0, Invalid(spec.CodePAY002, "attachment", "malformed multipart body")
		}
		if part.FormName() != "attachment" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, spec.MaxAttachmentSize+1))
		if err != nil {
			return 0, Invalid(spec.CodePAY002, "attachment", "malformed multipart body")
		}
		if len(data) > spec.MaxAttachmentSize {
			return 0, Invalid(spec.CodePAY002, "attachment", receiptSizeMessage)
		}
		// The bytes decide, as in the SDK: a part labelled image/png that
		// holds a PDF is no image, and an image sent as
		// application/octet-stream is one.
		if len(data) > 0 && !IsImage(data) {
			return 0, Invalid(spec.CodePAY002, "attachment", "attachment must be an image (PNG, JPEG, GIF, WebP, BMP or HEIC, told by its bytes)")
		}
		size = len(data)
	}
}

func (a *API) confirmPayment(r *http.Request, key string, body []byte) (any, *Error) {
	id := r.PathValue("id")
	size, aerr := receiptSize(r, body)
	if aerr != nil {
		return nil, a.paymentRefusal(key, id, aerr)
	}
	p, lerr := a.b.ConfirmPayment(key, id, size)
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	v := paymentViewOf(&p, false, false)
	v.Message = confirmedMessage
	return v, nil
}

func (a *API) cancelPayment(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.CancelPayment(key, r.PathValue("id"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return paymentViewOf(&p, false, false), nil
}

type paymentDisputeReq struct {
	Amount     Amount `json:"amount"`
	ReceiptURL string `json:"receipt_url"`
	Comment    string `json:"comment"`
}

// paymentDisputeOf checks an open dispute body field by field.
func paymentDisputeOf(body []byte) (ledger.Dispute, *Error) {
	var req paymentDisputeReq
	if err := decodeJSON(body, &req, false); err != nil {
		return ledger.Dispute{}, Invalid(spec.CodePAY002, "body", "request body is not valid JSON: "+err.Error())
	}
	if req.Amount.Set && (req.Amount.D.LessThan(minPaymentAmount) || req.Amount.D.GreaterThan(maxPaymentAmount)) {
		// What a payer paid is a payment amount: the same bounds, or an
		// approved dispute could credit any sum.
		return ledger.Dispute{}, Invalid(spec.CodePAY002, "amount", "dispute amount must be "+paymentAmountRange)
	}
	if req.Amount.Set && !rubPrecise(req.Amount.D) {
		return ledger.Dispute{}, Invalid(spec.CodePAY002, "amount", rubScaleMessage)
	}
	if aerr := tooLong(spec.CodePAY002, capped{"comment", req.Comment, MaxCommentLength},
		capped{"receipt_url", req.ReceiptURL, MaxURLLength}); aerr != nil {
		return ledger.Dispute{}, aerr
	}
	if req.ReceiptURL != "" && !ValidURL(req.ReceiptURL) {
		return ledger.Dispute{}, Invalid(spec.CodePAY002, "receipt_url", "receipt_url must be an absolute http(s) URL")
	}
	d := ledger.Dispute{ReceiptURL: req.ReceiptURL, Comment: req.Comment}
	if req.Amount.Set {
		amt := req.Amount.D
		d.Amount = &amt
	}
	return d, nil
}

func (a *API) openDispute(r *http.Request, key string, body []byte) (any, *Error) {
	id := r.PathValue("id")
	d, aerr := paymentDisputeOf(body)
	if aerr != nil {
		return nil, a.paymentRefusal(key, id, aerr)
	}
	p, lerr := a.b.OpenDispute(key, id, d)
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return paymentDisputeOpenViewOf(&p), nil
}

func (a *API) cancelDispute(r *http.Request, key string, _ []byte) (any, *Error) {
	p, lerr := a.b.CancelDispute(key, r.PathValue("id"))
	if lerr != nil {
		return nil, FromLedger(lerr)
	}
	return paymentDisputeCancelBody{ID: p.ID, ExtID: p.ExtID, Status: "cancelled_appeal"}, nil
}
