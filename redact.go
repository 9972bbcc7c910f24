package paykit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// Every masking rule of the SDK: card and phone numbers (the rules live in
// internal/mask, shared with the CLI), the API key scrubbed from error
// answers, and the Format and LogValue methods that
// keep card and phone numbers, tokens and keys out of fmt and slog output.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

// The fmt and slog methods below keep secrets out of every fmt verb (on
// values, pointers, and values nested in exported fields, slices or maps)
// and out of slog. Each formats a copy with the secrets masked, as a
// method-less type of the same name. fmt calls no method through an
// unexported field: a merchant's struct must hold these types in exported
// fields, or by pointer.

// redacted stands in for a secret that is set; an unset one stays "".
const redacted = "<redacted>"

func redact(s string) string {
	if s == "" {
		return ""
	}
	return redacted
}

// Aliases, so that local types can take the names %#v prints.
type (
	paymentFields             = Payment
	requisitesFields          = Requisites
	payoutFields              = Payout
	payoutListFields          = PayoutList
	createPaymentParamsFields = CreatePaymentParams
	createPayoutParamsFields  = CreatePayoutParams
)

// Format implements fmt.Formatter: the payment as fmt would print it, with
// the requisites' card or phone number masked (see Requisites.Format).
func (p Payment) Format(f fmt.State, verb rune) {
	type Payment paymentFields
	fmt.Fprintf(f, fmt.FormatString(f, verb), Payment(p))
}

// Format implements fmt.Formatter: the requisites as fmt would print them,
// with the card or phone number masked to its last four digits and the
// holder's name hidden, as in LogValue.
func (r Requisites) Format(f fmt.State, verb rune) {
	type Requisites requisitesFields
	r.Value, r.Holder = mask.Value(r.Value), redact(r.Holder)
	fmt.Fprintf(f, fmt.FormatString(f, verb), Requisites(r))
}

// Format implements fmt.Formatter: the payout as fmt would print it, with
// the card or phone number masked to its last four digits and the
// recipient's name hidden, as in LogValue.
func (p Payout) Format(f fmt.State, verb rune) {
	type Payout payoutFields
	p.Requisites, p.HolderName = mask.Value(p.Requisites), redact(p.HolderName)
	fmt.Fprintf(f, fmt.FormatString(f, verb), Payout(p))
}

// Format implements fmt.Formatter: the page as fmt would print it, each
// payout through Payout.Format. Without it, a *PayoutList nested in a
// merchant's struct and printed with a verb fmt finds wrong for a pointer
// (%s, %d) would be dumped raw, payouts and all.
func (l PayoutList) Format(f fmt.State, verb rune) {
	type PayoutList payoutListFields
	fmt.Fprintf(f, fmt.FormatString(f, verb), PayoutList(l))
}

// LogValue implements slog.LogValuer: the page with each payout as
// Payout.LogValue shows it (slog's JSON handler would otherwise marshal
// the payouts whole).
func (l PayoutList) LogValue() slog.Value {
	payouts := make([]slog.Attr, len(l.Payouts))
	for i := range l.Payouts {
		payouts[i] = slog.Attr{Key: strconv.Itoa(i), Value: l.Payouts[i].LogValue()}
	}
	return slog.GroupValue(
		slog.Attr{Key: "payouts", Value: slog.GroupValue(payouts...)},
		slog.Any("total", l.Total),
		slog.Any("limit", l.Limit),
		slog.Any("offset", l.Offset),
	)
}

// Format implements fmt.Formatter: the params as fmt would print them,
// without the notification token, which authenticates the payment's
// webhook notifications.
func (p CreatePaymentParams) Format(f fmt.State, verb rune) {
	type CreatePaymentParams createPaymentParamsFields
	p.NotificationToken = redact(p.NotificationToken)
	fmt.Fprintf(f, fmt.FormatString(f, verb), CreatePaymentParams(p))
}

// LogValue implements slog.LogValuer: the params without the notification
// token (slog's JSON handler would otherwise marshal it).
func (p CreatePaymentParams) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("ext_id", p.ExtID),
		slog.String("amount", p.Amount.String()),
		slog.String("method", string(p.Method)),
		slog.String("bank", p.Bank),
		slog.String("country", string(p.Country)),
		slog.String("client_id", p.ClientID),
		slog.String("notify_url", p.NotifyURL),
		slog.String("notification_token", redact(p.NotificationToken)),
	)
}

// Format implements fmt.Formatter: the params as fmt would print them,
// with the card or phone number masked and the recipient's name hidden.
func (p CreatePayoutParams) Format(f fmt.State, verb rune) {
	type CreatePayoutParams createPayoutParamsFields
	p.Requisites, p.HolderName = mask.Value(p.Requisites), redact(p.HolderName)
	fmt.Fprintf(f, fmt.FormatString(f, verb), CreatePayoutParams(p))
}

// LogValue implements slog.LogValuer: the params with the card or phone
// number masked and without the recipient's name, as Payout logs.
func (p CreatePayoutParams) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("ext_id", p.ExtID),
		slog.String("amount", p.Amount.String()),
		slog.String("method", string(p.Method)),
		slog.String("requisites", mask.Value(p.Requisites)),
		slog.String("bank", p.Bank),
		slog.String("notify_url", p.NotifyURL),
	)
}

// webhookHandlerView is what fmt shows of a WebhookHandler: its exported
// fields, Token and Tokens redacted.
type webhookHandlerView struct {
	Token                  string
	Tokens                 []string
	TokenFor               func(ctx context.Context, paymentID, extID string) (string, error)
	OnPayment              func(ctx context.Context, p *Payment) error
	OnPayout               func(ctx context.Context, p *Payout) error
	Client                 *Client
	AllowUnverifiedPayouts bool
	MaxBodyBytes           int64
	Logger                 *slog.Logger
	Observe                func(ctx context.Context, d WebhookDelivery)
}

// Format implements fmt.Formatter: the handler as fmt would print it, with
// Token and every entry of Tokens redacted. The receiver is a value so
// that a handler held by value in a merchant's configuration struct is
// redacted too, not only a *WebhookHandler.
func (h WebhookHandler) Format(f fmt.State, verb rune) {
	type WebhookHandler webhookHandlerView
	v := WebhookHandler{Token: redact(h.Token), TokenFor: h.TokenFor, OnPayment: h.OnPayment,
		OnPayout: h.OnPayout, Client: h.Client, AllowUnverifiedPayouts: h.AllowUnverifiedPayouts,
		MaxBodyBytes: h.MaxBodyBytes, Logger: h.Logger, Observe: h.Observe}
	if h.Tokens != nil {
		v.Tokens = make([]string, len(h.Tokens))
		for i, t := range h.Tokens {
			v.Tokens[i] = redact(t)
		}
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), v)
}

// LogValue implements slog.LogValuer: the handler's configuration, without
// its tokens. A value receiver, as Format's.
func (h WebhookHandler) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("token", redact(h.Token)),
		slog.Int("tokens", len(h.Tokens)),
		slog.Bool("token_for", h.TokenFor != nil),
		slog.Bool("on_payment", h.OnPayment != nil),
		slog.Bool("on_payout", h.OnPayout != nil),
		slog.Bool("client", h.Client != nil),
		slog.Bool("allow_unverified_payouts", h.AllowUnverifiedPayouts),
		slog.Int64("max_body_bytes", h.MaxBodyBytes),
	)
}

// Format implements fmt.Formatter. Every verb but %#v prints Error(), as
// fmt does for any error; %#v prints the fields with the message and data
// masked as Error() masks the message, since a server may echo a card or
// phone number in either.
func (e *Error) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		type Error struct {
			Code       string
			HTTPStatus int
			Message    string
			Data       string
		}
		fmt.Fprintf(f, "%#v", &Error{Code: e.Code, HTTPStatus: e.HTTPStatus, Message: mask.Text(e.Message),
			Data: mask.Text(string(e.Data))})
		return
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), e.Error())
}

// LogValue implements slog.LogValuer. It keeps the payer's card or phone
// number out of structured logs: slog.Info("paid", "payment", p) logs it
// masked to its last four digits. Reading the fields is unaffected.
func (r Requisites) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("type", string(r.Type)),
		slog.String("value", mask.Value(r.Value)),
		slog.String("bank_code", r.BankCode),
		slog.String("bank_name", r.BankName),
	}
	if r.Country != "" {
		attrs = append(attrs, slog.String("country", string(r.Country)),
			slog.String("currency", r.Currency), slog.String("amount_local", r.AmountLocal.String()))
	}
	return slog.GroupValue(attrs...)
}

// LogValue implements slog.LogValuer: the payment with its requisites masked.
func (p Payment) LogValue() slog.Value {
	return moneyValue(p.ID, p.ExtID, p.Amount, p.Currency, string(p.Status), string(p.Method),
		slog.Any("requisites", p.Requisites))
}

// LogValue implements slog.LogValuer: the payout with the card or phone
// number masked and without the recipient's name.
func (p Payout) LogValue() slog.Value {
	return moneyValue(p.ID, p.ExtID, p.Amount, p.Currency, string(p.Status), string(p.Method),
		slog.String("requisites", mask.Value(p.Requisites)), slog.String("bank", p.Bank))
}

// moneyValue is what a payment and a payout log in common, then more.
func moneyValue(id, extID string, amount decimal.Decimal, currency, status, method string, more ...slog.Attr) slog.Value {
	return slog.GroupValue(append([]slog.Attr{slog.String("id", id), slog.String("ext_id", extID),
		slog.String("amount", amount.String()), slog.String("currency", currency),
		slog.String("status", status), slog.String("method", method)}, more...)...)
}

// secrets are what a call sent that its answer must not bring into an
// error: the API key, and the signature of the attempt answered. A server,
// or a proxy's error page, may echo the request's headers.
type secrets struct {
	apiKey, signature string
}

// named pairs each secret with what stands in for it once scrubbed.
func (sec secrets) named() [2]struct{ secret, name string } {
	return [2]struct{ secret, name string }{{sec.apiKey, "[api key]"}, {sec.signature, "[signature]"}}
}

// scrub replaces each secret in s, whole; callers cut s to length only
// afterwards, so that no part of a secret is left at a cut. A text cut
// before it got here (truncate's "…", as in a decoder's error quoting a
// value) loses the start of a secret that ends at the cut too.
func (sec secrets) scrub(s string) string {
	for _, x := range sec.named() {
		if x.secret == "" {
			continue
		}
		if strings.Contains(s, x.secret) {
			s = strings.ReplaceAll(s, x.secret, x.name)
		}
		if strings.Contains(s, "…") {
			s = scrubCutPrefix(s, x.secret, x.name)
		}
	}
	return s
}

// minCutPrefix is the shortest start of a secret scrubCutPrefix removes:
// shorter ones ("pk_") say nothing and would catch ordinary words.
const minCutPrefix = 6

// scrubCutPrefix replaces the start of secret left just before each "…".
func scrubCutPrefix(s, secret, name string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "…")
		if i < 0 {
			break
		}
		head := s[:i]
		for n := min(len(secret)-1, len(head)); n >= minCutPrefix; n-- {
			if strings.HasSuffix(head, secret[:n]) {
				head = head[:len(head)-n] + name
				break
			}
		}
		b.WriteString(head)
		b.WriteString("…")
		s = s[i+len("…"):]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(s)
	return b.String()
}

// scrubBytes is scrub for a body; b itself is never changed (it may be a
// pooled buffer).
func (sec secrets) scrubBytes(b []byte) []byte {
	for _, x := range sec.named() {
		if x.secret != "" && bytes.Contains(b, []byte(x.secret)) {
			b = bytes.ReplaceAll(b, []byte(x.secret), []byte(x.name))
		}
	}
	return b
}

// scrubJSON scrubs the secrets from the strings (keys and values) of a
// JSON text once each is unescaped: "\u0070k_live…", or a signature with
// its '/' written "\/", is the secret to whoever decodes it, though
// scrubBytes finds nothing. A string whose unescaped text held a secret is
// written again, escaped as encoding/json escapes it; everything else is
// kept byte for byte. Text that is not JSON is scanned all the same: a
// quoted run that does not decode as a JSON string is left as it is. b
// itself is never changed.
func (sec secrets) scrubJSON(b []byte) []byte {
	if sec.apiKey == "" && sec.signature == "" || bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j, escaped := i+1, false
		for ; j < len(b) && b[j] != '"'; j++ {
			if b[j] == '\\' {
				escaped = true
				j++
			}
		}
		if j >= len(b) {
			break
		}
		var s string
		if escaped && json.Unmarshal(b[i:j+1], &s) == nil {
			if t := sec.scrub(s); t != s {
				q, _ := json.Marshal(t)
				out = append(append(out, b[last:i]...), q...)
				last = j + 1
			}
		}
		i = j
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// scrubAnswer scrubs an *answerError, whose text may quote the answer's
// fields (its id, its ext_id, a value that did not decode).
func (sec secrets) scrubAnswer(err error) {
	if e, ok := err.(*answerError); ok {
		e.msg = sec.scrub(e.msg)
	}
}
