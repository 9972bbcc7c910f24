package paykit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// PaymentMethod is how the payer transfers the money.
type PaymentMethod string

// Payment methods.
const (
	MethodCard        PaymentMethod = "CARD"
	MethodSBP         PaymentMethod = "SBP"
	MethodSIM         PaymentMethod = "SIM"
	MethodCrossBorder PaymentMethod = "CROSS_BORDER"
)

var paymentMethods = []PaymentMethod{MethodCard, MethodSBP, MethodSIM, MethodCrossBorder}

// UnmarshalJSON keeps an unknown method as sent.
func (m *PaymentMethod) UnmarshalJSON(b []byte) (err error) {
	*m, err = decodeEnum(b, paymentMethods...)
	return err
}

// Country is the country of CROSS_BORDER requisites.
type Country string

// Countries served by CROSS_BORDER payments.
const (
	CountryTJ Country = "TJ"
	CountryKZ Country = "KZ"
	CountryUZ Country = "UZ"
	CountryKG Country = "KG"
)

var countries = []Country{CountryTJ, CountryKZ, CountryUZ, CountryKG}

// UnmarshalJSON keeps an unknown country as sent.
func (c *Country) UnmarshalJSON(b []byte) (err error) {
	*c, err = decodeEnum(b, countries...)
	return err
}

// PaymentStatus is the state of a payment.
type PaymentStatus string

// Payment statuses. The dispute operations answer "dispute" and
// "cancelled_appeal" in lower case; the SDK normalises every known status to
// these upper-case constants, so a plain == comparison always works.
const (
	PaymentStatusPending         PaymentStatus = "PENDING"
	PaymentStatusProcessing      PaymentStatus = "PROCESSING"
	PaymentStatusCompleted       PaymentStatus = "COMPLETED"
	PaymentStatusCancelled       PaymentStatus = "CANCELLED"
	PaymentStatusDispute         PaymentStatus = "DISPUTE"
	PaymentStatusCancelledAppeal PaymentStatus = "CANCELLED_APPEAL"
)

var paymentStatuses = []PaymentStatus{PaymentStatusPending, PaymentStatusProcessing, PaymentStatusCompleted,
	PaymentStatusCancelled, PaymentStatusDispute, PaymentStatusCancelledAppeal}

// UnmarshalJSON normalises known statuses to the constants and keeps an
// unknown one as sent.
func (s *PaymentStatus) UnmarshalJSON(b []byte) (err error) {
	*s, err = decodeEnum(b, paymentStatuses...)
	return err
}

// RequisitesType is the kind of destination the payer pays to.
type RequisitesType string

// Requisites types; RequisitesPhone is used by CROSS_BORDER payments.
const (
	RequisitesSBP   RequisitesType = "sbp"
	RequisitesCard  RequisitesType = "card"
	RequisitesSIM   RequisitesType = "sim"
	RequisitesPhone RequisitesType = "phone"
)

// UnmarshalJSON keeps an unknown type as sent.
func (t *RequisitesType) UnmarshalJSON(b []byte) (err error) {
	*t, err = decodeEnum(b, RequisitesSBP, RequisitesCard, RequisitesSIM, RequisitesPhone)
	return err
}

// Payment is a RUB payment from a payer to the merchant.
//
// Fields the response did not carry are zero: the dispute operations return
// no requisites, the cancel-dispute operation only id, ext_id and status.
type Payment struct {
	// ID is the service's UUID of the payment, the key of GetPayment and of
	// every state change.
	ID string `json:"id"`
	// ExtID is the merchant's order id given at creation; it is unique per
	// merchant, which is what makes CreatePayment safe to retry.
	ExtID string `json:"ext_id"`
	// Amount is in RUB, exactly as the service wrote it.
	Amount decimal.Decimal `json:"amount"`
	// Currency is "RUB" for every payment of this API.
	Currency string `json:"currency"`
	// Status is normalised to the upper-case constants (the dispute
	// responses send lower case); an unknown value is kept as sent. It is
	// "" when the answer carried none ("status": null or missing): a read
	// needs only its identity, so such a payment still decodes, but ""
	// is no state, and WaitPayment reads again.
	Status PaymentStatus `json:"status"`
	// Method decides how Requisites read (card or phone, domestic or
	// cross-border).
	Method PaymentMethod `json:"method"`
	// Requisites is where the payer transfers the money.
	Requisites Requisites `json:"requisites"`
	// PaymentURL is the hosted payment page, "" when there is none.
	PaymentURL string `json:"payment_url"`
	// ValidUntil is the deadline the service announced for the payer's
	// transfer, the authority on expiry: the SDK assumes no span of its own
	// and never expires a payment itself (see "What the spec does not say").
	ValidUntil time.Time `json:"valid_until"`
	// CreatedAt is the service's creation time, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// USDTRate is the USDT/RUB rate at creation (create and get responses).
	USDTRate decimal.Decimal `json:"usdt_rate"`
	// Message is only set by ConfirmPayment: the service's note that the
	// confirmation was received and verification is awaited.
	Message string `json:"message,omitempty"`
	// Dispute is set from OpenDispute's answer, nil otherwise (and after an
	// OpenDispute settled by reading the payment back).
	Dispute *Dispute `json:"dispute,omitempty"`
	// Reconciled is true when the call's own answer was lost or unusable
	// and the SDK established, by reading the payment back, that the call
	// had taken effect. The payment is then the read-back copy, without
	// what a GET does not carry: Message, and for CROSS_BORDER the
	// requisites' BankName, Country, Currency and AmountLocal, and Dispute.
	// Nothing is filled from the call's params. Never set by decoding JSON.
	Reconciled bool `json:"-"`
}

func (p *Payment) reconciled() *bool { return &p.Reconciled }

func (p *Payment) facts() facts {
	return facts{id: p.ID, extID: p.ExtID, status: string(p.Status), amount: p.Amount}
}

// UnmarshalJSON decodes a payment leniently and resolves the requisites'
// bank fields, whose meaning depends on the method.
func (p *Payment) UnmarshalJSON(b []byte) error {
	type plain Payment
	w := struct { // these shadow p's own; the rest decode into p
		*plain
		Amount     wireDec        `json:"amount"`
		USDTRate   wireDec        `json:"usdt_rate"`
		ValidUntil apiTime        `json:"valid_until"`
		CreatedAt  apiTime        `json:"created_at"`
		Requisites requisitesWire `json:"requisites"` // zero when absent: Requisites{}
	}{plain: (*plain)(p)}
	p.Dispute = nil // set only by a "dispute" in b
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p.Amount, p.USDTRate = decimal.Decimal(w.Amount), decimal.Decimal(w.USDTRate)
	p.ValidUntil, p.CreatedAt = time.Time(w.ValidUntil), time.Time(w.CreatedAt)
	p.Requisites = w.Requisites.requisites(p.Method)
	return nil
}

// Requisites is the destination of a payer's transfer.
type Requisites struct {
	// Type says what Value is: a card number (card) or a phone number
	// (sbp, sim, and phone for CROSS_BORDER).
	Type RequisitesType `json:"type"`
	// Value is the card or phone number to pay to.
	Value string `json:"value"`
	// BankCode is the bank's code whichever field the response carried it
	// in: bank_code for domestic methods, bank for CROSS_BORDER.
	BankCode string `json:"bank_code,omitempty"`
	// BankName is the bank's name: bank for domestic methods, bank_name for
	// CROSS_BORDER. Outside the create response a domestic payment carries
	// only the name and a cross-border one only the code.
	BankName string `json:"bank_name,omitempty"`
	// Holder is the recipient's abbreviated name.
	Holder string `json:"holder"`
	// Country, Currency and AmountLocal describe CROSS_BORDER requisites:
	// the amount to pay in the local currency.
	Country Country `json:"country,omitempty"`
	// Currency is the local currency code of CROSS_BORDER requisites (such
	// as "TJS"); "" for domestic ones, which are paid in RUB.
	Currency string `json:"currency,omitempty"`
	// AmountLocal is what the payer sends in Currency, converted by the
	// service at the central bank rate; only the create response of a
	// CROSS_BORDER payment carries it.
	AmountLocal decimal.Decimal `json:"amount_local"`
}

// UnmarshalJSON maps bank, bank_code and bank_name onto BankCode and BankName.
// Standing alone, a lone "bank" is taken as the code for phone (cross-border)
// requisites and as the name otherwise; inside a Payment, its method decides.
func (r *Requisites) UnmarshalJSON(b []byte) error {
	var w requisitesWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = w.requisites("")
	return nil
}

// requisitesWire is a requisites object as sent.
type requisitesWire struct {
	Type        RequisitesType `json:"type"`
	Value       flexString     `json:"value"`
	Bank        string         `json:"bank"`
	BankCode    string         `json:"bank_code"`
	BankName    string         `json:"bank_name"`
	Holder      string         `json:"holder"`
	Country     Country        `json:"country"`
	Currency    string         `json:"currency"`
	AmountLocal wireDec        `json:"amount_local"`
}

// requisites resolves the bank fields: for CROSS_BORDER "bank" is the code
// (the name in bank_name), otherwise the name (the code in bank_code, in
// the create response only). method is "" when unknown.
func (w *requisitesWire) requisites(method PaymentMethod) Requisites {
	r := Requisites{Type: w.Type, Value: string(w.Value), Holder: w.Holder, Country: w.Country,
		Currency: w.Currency, AmountLocal: decimal.Decimal(w.AmountLocal), BankCode: w.BankCode, BankName: w.BankName}
	switch {
	case w.BankCode != "":
		if r.BankName == "" {
			r.BankName = w.Bank
		}
	case w.BankName != "" || w.Country != "" || method == MethodCrossBorder ||
		method == "" && w.Type == RequisitesPhone:
		r.BankCode = w.Bank
	default:
		r.BankName = w.Bank
	}
	return r
}

// Dispute is an appeal the merchant opened on a cancelled payment.
type Dispute struct {
	// Amount is the amount the payer actually paid. The spec makes it
	// "number or null": Valid is false when the dispute gave no amount
	// (null or absent), so a stated 0 stays distinguishable from none.
	Amount decimal.NullDecimal `json:"amount"`
	// ReceiptURL links to the receipt or screenshot the dispute cites.
	ReceiptURL string `json:"receipt_url"`
	// Comment is the merchant's text of the dispute.
	Comment string `json:"comment"`
	// CreatedAt is when the dispute was opened; zero when the response did
	// not carry it.
	CreatedAt time.Time `json:"created_at"`
}

// UnmarshalJSON decodes a dispute leniently.
func (d *Dispute) UnmarshalJSON(b []byte) error {
	type plain Dispute
	w := struct {
		*plain
		Amount    wireNullDec `json:"amount"`
		CreatedAt apiTime     `json:"created_at"`
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d.Amount, d.CreatedAt = decimal.NullDecimal(w.Amount), time.Time(w.CreatedAt)
	return nil
}

// Payment amount bounds of the API, in RUB, both inclusive.
var (
	MinPaymentAmount = decimal.NewFromInt(spec.MinPaymentAmount)
	MaxPaymentAmount = decimal.NewFromInt(spec.MaxPaymentAmount)
)

// MaxExtIDLength is the longest payment ext_id, in characters.
const MaxExtIDLength = spec.MaxExtIDLength

// CreatePaymentParams are the inputs of CreatePayment. Optional fields left
// empty are not sent, and the service then chooses (method CARD, a bank).
type CreatePaymentParams struct {
	// ExtID is the merchant's unique order id, 1 to 255 characters. It is
	// also what makes CreatePayment safe to retry.
	ExtID string
	// Amount in RUB, from 100 to 300000, at most two decimals (1500.50;
	// 1500.500 too); sent with exactly its digits.
	Amount decimal.Decimal
	// Method defaults to MethodCard on the service's side.
	Method PaymentMethod
	// Bank is a bank code from ListBanks.
	Bank string
	// Country is for MethodCrossBorder only.
	Country Country
	// ClientID identifies the payer in the merchant's system.
	ClientID string
	// NotifyURL receives webhook notifications for this payment.
	NotifyURL string
	// NotificationToken comes back in the X-Notification-Token header of
	// those notifications; WebhookHandler.Token checks it.
	NotificationToken string
}

type createPaymentBody struct {
	ExtID             string        `json:"ext_id"`
	Amount            json.Number   `json:"amount"`
	Method            PaymentMethod `json:"method,omitempty"`
	Bank              string        `json:"bank,omitempty"`
	Country           Country       `json:"country,omitempty"`
	ClientID          string        `json:"client_id,omitempty"`
	NotifyURL         string        `json:"notify_url,omitempty"`
	NotificationToken string        `json:"notification_token,omitempty"`
}

// CreatePayment creates a payment and returns the requisites for the payer.
//
// The answer must be the payment params describe: its ext_id, amount,
// method and, when params.Bank is set, bank. It is retried on transport
// errors and 5xx. A PAY_003 on a retry after an attempt that may have got
// through, or a 2xx that is not that payment (undecodable, over
// MaxResponseBytes, incomplete, about another one), is settled by reading
// the payment back by ext_id: it is returned, Reconciled, when its amount
// (by value), method and bank code (without regard to case) match. A GET
// of a domestic payment carries only the bank's name: it is compared,
// without regard to case, spacing, Unicode form or ё against е, with the
// names ListBanks gives the code (cached per Client and read again once,
// within ctx, before anything but a match is believed). It proves another
// bank only when ListBanks gives it to another code and not to this one;
// a name ListBanks does not give at all (a legal name such as "ПАО
// Сбербанк", a list that lags a rename), or a code listed without a name,
// cannot be compared. The country, client_id, notify_url and token cannot
// be compared. Only when a field provably differs is it someone else's:
// ErrDuplicateExtID, as a PAY_003 on the first attempt always is. A
// read-back that cannot be compared (a field missing, ListBanks failing,
// empty or timing out) leaves the outcome unknown.
//
// When the call fails after an attempt may have reached the service, the
// error matches ErrUnknownOutcome beside its cause: read the payment back
// with GetPaymentByExtID before creating it again.
func (c *Client) CreatePayment(ctx context.Context, params CreatePaymentParams) (*Payment, error) {
	if err := params.validate(); err != nil {
		return nil, err
	}
	in := createPaymentBody{ExtID: params.ExtID, Amount: amount(params.Amount), Method: params.Method,
		Bank: params.Bank, Country: params.Country, ClientID: params.ClientID,
		NotifyURL: params.NotifyURL, NotificationToken: params.NotificationToken}
	return send(ctx, c, &call{op: opCreatePayment, path: "/v1/payments", in: in, extID: params.ExtID},
		func(ctx context.Context, got *Payment, _ seenIn) (sameness, error) {
			return c.paymentMatches(ctx, params, got)
		})
}

// paymentMatches compares a payment, created or read back, with every
// field of params that the answer carries: the amount by value, the method
// and a bank code without regard to case, and a domestic payment's bank
// name (all a GET carries) through bankVerdict.
func (c *Client) paymentMatches(ctx context.Context, params CreatePaymentParams, got *Payment) (sameness, error) {
	var v comparison
	v.add(sameAmount("payment", got.Amount, params.Amount))
	v.add(sameCode("payment's method", string(got.Method), string(cmp.Or(params.Method, MethodCard)))) // the service's default
	switch {
	case params.Bank == "" || v.v == different: // nothing asked, or nothing left to learn
	case got.Requisites.BankCode != "": // the create answer, or CROSS_BORDER's "bank"
		v.add(sameCode("payment's bank", got.Requisites.BankCode, params.Bank))
	default:
		v.add(c.bankVerdict(ctx, params.Bank, got.Requisites.BankName))
	}
	return v.result()
}

// GetPayment returns the payment with the given id (a UUID). An answer
// about another payment is an error: a cache or proxy that serves another
// order's payment must not make the merchant act on it.
func (c *Client) GetPayment(ctx context.Context, id string) (*Payment, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return send[Payment](ctx, c, &call{op: opGetPayment, path: "/v1/payments/" + id, id: id}, nil)
}

// GetPaymentByExtID returns the payment with the merchant's ext_id. The
// ext_id is path-escaped, so any characters are safe.
func (c *Client) GetPaymentByExtID(ctx context.Context, extID string) (*Payment, error) {
	if err := checkExtID(extID, MaxExtIDLength); err != nil {
		return nil, err
	}
	return send[Payment](ctx, c, &call{op: opGetPaymentByExtID, path: "/v1/payments/by-ext-id/" + pathSegment(extID), extID: extID}, nil)
}

// Attachment is a file sent with ConfirmPayment: an image of the transfer
// receipt, at most MaxAttachmentSize bytes.
type Attachment struct {
	// Filename is the file's name as the service will see it; directories
	// are stripped. Empty means "receipt".
	Filename string
	// Content is read once, in full, before anything is sent.
	Content io.Reader
}

// MaxAttachmentSize is the largest receipt ConfirmPayment sends: the spec's
// 10 MB, in decimal bytes (10,000,000), as the sandbox counts them too.
const MaxAttachmentSize = spec.MaxAttachmentSize

// ConfirmPayment tells the service that the payer has paid, optionally with
// an image of the receipt (nil sends none). The payment moves to PROCESSING.
//
// The receipt must be an image (PNG, JPEG, GIF, WebP, BMP or HEIC, told by
// its content, not its name) of at most 10 MB (MaxAttachmentSize,
// 10,000,000 bytes); anything else is refused before sending. A retry that
// finds the payment already PROCESSING (or COMPLETED), because an earlier
// attempt's answer was lost, returns it as read back with GetPayment, so
// Message is then empty.
func (c *Client) ConfirmPayment(ctx context.Context, id string, receipt *Attachment) (*Payment, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	body, contentType, err := multipartReceipt(receipt)
	if err != nil {
		return nil, err
	}
	return send(ctx, c, &call{op: opConfirmPayment, path: "/v1/payments/" + id + "/confirm", body: body, contentType: contentType, id: id},
		inStatus(PaymentStatusProcessing, PaymentStatusCompleted))
}

// multipartReceipt builds the confirm request's multipart/form-data body.
func multipartReceipt(receipt *Attachment) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if receipt != nil {
		if receipt.Content == nil {
			return nil, "", invalid("attachment", "has no content")
		}
		data, err := io.ReadAll(io.LimitReader(receipt.Content, MaxAttachmentSize+1))
		if err != nil {
			return nil, "", fmt.Errorf("paykit: ConfirmPayment: reading attachment: %w", err)
		}
		switch {
		case len(data) == 0:
			return nil, "", invalid("attachment", "is empty")
		case len(data) > MaxAttachmentSize:
			return nil, "", invalid("attachment", "is larger than 10 MB (10,000,000 bytes)")
		}
		ctype := imageType(data)
		if ctype == "" {
			return nil, "", invalid("attachment", "is not an image")
		}
		name := receipt.Filename
		if i := strings.LastIndexAny(name, `/\`); i >= 0 {
			name = name[i+1:]
		}
		if name = strings.Map(dropControl, name); name == "" {
			name = "receipt"
		}
		h := make(textproto.MIMEHeader)
		h.Set("Content-Disposition", `form-data; name="attachment"; filename="`+quoteEscaper.Replace(name)+`"`)
		h.Set("Content-Type", ctype)
		w, err := mw.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		w.Write(data)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func dropControl(r rune) rune {
	if r < 0x20 || r == 0x7f {
		return -1
	}
	return r
}

// imageType returns the MIME type of an image by its leading bytes, "" when
// data is not an image the service is likely to accept.
func imageType(data []byte) string {
	if ct := http.DetectContentType(data); strings.HasPrefix(ct, "image/") {
		return ct
	}
	// HEIC/HEIF, what phones save screenshots and photos as, which
	// DetectContentType does not know: an ISO-BMFF "ftyp" box with a HEIF brand.
	if len(data) >= 12 && string(data[4:8]) == "ftyp" {
		switch string(data[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "image/heic"
		}
	}
	return ""
}

// CancelPayment cancels a PENDING payment. The answer must be this payment,
// CANCELLED; a retry that finds it already CANCELLED returns it as success.
func (c *Client) CancelPayment(ctx context.Context, id string) (*Payment, error) {
	return c.transition(ctx, opCancelPayment, id, "/cancel", PaymentStatusCancelled)
}

// OpenDisputeParams are the inputs of OpenDispute; every field is optional.
type OpenDisputeParams struct {
	// Amount is what the payer actually paid, if it differs, in RUB with
	// at most two decimals and within the payment bounds (MinPaymentAmount
	// to MaxPaymentAmount, as the sandbox holds it: the spec is silent);
	// zero means not given and is not sent.
	Amount decimal.Decimal
	// ReceiptURL links to the receipt or a screenshot.
	ReceiptURL string
	// Comment is free text for the service's reviewer; not sent when empty.
	Comment string
}

type openDisputeBody struct {
	Amount     json.Number `json:"amount,omitempty"`
	ReceiptURL string      `json:"receipt_url,omitempty"`
	Comment    string      `json:"comment,omitempty"`
}

// OpenDispute opens a dispute on a CANCELLED or CANCELLED_APPEAL payment
// that the payer did pay. The result carries Status PaymentStatusDispute and
// Dispute.
//
// A retry that finds a dispute already open (DIS_002, an earlier answer
// lost) returns the payment as read back with GetPayment, Reconciled set
// and Dispute nil: the service's GET carries no dispute, so its amount,
// receipt and comment are unknown, and a result carries only what the
// service said (the SDK cannot tell this call's dispute from another's).
func (c *Client) OpenDispute(ctx context.Context, id string, params OpenDisputeParams) (*Payment, error) {
	if err := firstError(checkUUID("id", id), checkURL("receipt_url", params.ReceiptURL)); err != nil {
		return nil, err
	}
	in := openDisputeBody{ReceiptURL: params.ReceiptURL, Comment: params.Comment}
	if !params.Amount.IsZero() {
		if err := checkPaymentAmount("amount", params.Amount); err != nil {
			return nil, err
		}
		in.Amount = amount(params.Amount)
	}
	return send(ctx, c, &call{op: opOpenDispute, path: "/v1/payments/" + id + "/dispute", in: in, id: id},
		inStatus(PaymentStatusDispute))
}

// CancelDispute cancels an active dispute; the payment moves to
// CANCELLED_APPEAL. The result carries only ID, ExtID and Status.
func (c *Client) CancelDispute(ctx context.Context, id string) (*Payment, error) {
	return c.transition(ctx, opCancelDispute, id, "/dispute/cancel", PaymentStatusCancelledAppeal)
}

// transition runs a body-less payment state change.
func (c *Client) transition(ctx context.Context, op *operation, id, suffix string, target PaymentStatus) (*Payment, error) {
	if err := checkUUID("id", id); err != nil {
		return nil, err
	}
	return send(ctx, c, &call{op: op, path: "/v1/payments/" + id + suffix, id: id}, inStatus(target))
}

// inStatus is a state change's want: the payment is in a target state. A
// payment without a status cannot be compared.
func inStatus(states ...PaymentStatus) want[*Payment] {
	return func(_ context.Context, got *Payment, _ seenIn) (sameness, error) {
		switch {
		case got.Status == "":
			return cannotTell, errors.New("the payment carries no status")
		case !slices.Contains(states, got.Status):
			return different, fmt.Errorf("the payment is %s, not %s", truncate(string(got.Status), 30), states[0])
		}
		return same, nil
	}
}
