package paykit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Every masking rule of the SDK: maskDigits, masked tails, the API key
// scrubbed from error answers, and the Format and LogValue methods that
// keep card and phone numbers, tokens and keys out of fmt and slog output.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func isAlnum(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z' }

// readableLen returns the length of the UUID or hash that starts at s[i],
// 0 when none does. Both must start and end at a token boundary.
func readableLen(s string, i int) int {
	if i > 0 && isAlnum(s[i-1]) {
		return 0
	}
	end := i
	for end < len(s) && isAlnum(s[end]) {
		end++
	}
	if n := uuidLen(s, i); n > 0 {
		return n
	}
	tok := s[i:end]
	if len(tok) > 2 && tok[0] == '0' && tok[1]|0x20 == 'x' && allHex(tok[2:]) || len(tok) >= 32 && allHex(tok) && !allDigits(tok) {
		return len(tok)
	}
	return 0
}

// uuidLen returns 36 when a UUID (8-4-4-4-12 hex digits) starts at s[i] and
// is not followed by another letter or digit.
func uuidLen(s string, i int) int {
	const n = 36
	if len(s)-i < n || len(s)-i > n && isAlnum(s[i+n]) {
		return 0
	}
	for k := range n {
		c := s[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return 0
			}
		default:
			if !isHex(c) {
				return 0
			}
		}
	}
	return n
}

func allDigits(s string) bool {
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func allHex(s string) bool {
	for i := range len(s) {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// digitRun is a maximal run of digit groups joined by separators.
type digitRun struct {
	start, end int // s[start:end], from the first digit to the last
	digits     int
	groups     [8][2]int // the first groups' bounds
	ng         int       // the number of groups (may exceed len(groups))
	dotsOnly   bool      // every separator is a single '.'
}

func isRunSep(c byte) bool {
	switch c {
	case ' ', '-', '.', '(', ')', ',', '/', '_':
		return true
	}
	return false
}

// scanDigitRun reads the run that starts with the digit s[i].
func scanDigitRun(s string, i int) digitRun {
	r := digitRun{start: i, dotsOnly: true}
	j := i
	for {
		g := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if r.ng < len(r.groups) {
			r.groups[r.ng] = [2]int{g, j}
		}
		r.ng++
		r.digits += j - g
		// A separator is one character, or two where one is a parenthesis,
		// or two spaces, or a comma and a space.
		k, plain := j, 0
		for k < len(s) && k-j < 2 && isRunSep(s[k]) {
			if s[k] != '(' && s[k] != ')' {
				plain++
			}
			k++
		}
		if plain == 2 && s[j+1] == ' ' && (s[j] == ' ' || s[j] == ',') {
			plain = 1
		}
		if k == j || plain > 1 || k >= len(s) || !isDigit(s[k]) || readableLen(s, k) > 0 {
			break
		}
		if k-j != 1 || s[j] != '.' {
			r.dotsOnly = false
		}
		j = k
	}
	r.end = j
	return r
}

// mask masks the run's card or phone numbers in out, a copy of s made on
// the first need.
func (r *digitRun) mask(s string, out []byte) []byte {
	switch {
	case r.digits < 10 && r.ng <= 3:
		return out // the common case: nothing to mask, no date to skip
	case r.dotsOnly && r.ng == 2: // a decimal number: its parts on their own
		for _, g := range r.groups[:2] {
			if g[1]-g[0] >= 10 {
				out = maskKeepLast4(s, out, g[0], g[1])
			}
		}
		return out
	case r.dotsOnly && r.ng == 4 && r.isIPv4(s):
		return out
	case r.isThousands(s): // an amount written with thousands commas
		return out
	case r.ng >= 3 && r.isDatePrefix(s):
		if r.ng == 3 {
			return out
		}
		rest := scanDigitRun(s, r.groups[3][0])
		return rest.mask(s, out)
	case r.digits >= 10:
		return maskKeepLast4(s, out, r.start, r.end)
	}
	return out
}

// isDatePrefix: the run starts with a date (YYYY-MM-DD, DD-MM-YYYY or
// MM-DD-YYYY, separated by '-', '/' or '.') and then a space or nothing.
func (r *digitRun) isDatePrefix(s string) bool {
	a, b, c := r.groups[0], r.groups[1], r.groups[2]
	sep := s[a[1]]
	if b[0]-a[1] != 1 || c[0]-b[1] != 1 || s[b[1]] != sep || sep != '-' && sep != '/' && sep != '.' {
		return false
	}
	if r.ng > 3 && s[c[1]] != ' ' {
		return false
	}
	la, lb, lc := a[1]-a[0], b[1]-b[0], c[1]-c[0]
	switch {
	case la == 4 && lb == 2 && lc == 2: // year first
		month, day := atoi2(s[b[0]:]), atoi2(s[c[0]:])
		return month >= 1 && month <= 12 && day >= 1 && day <= 31
	case la == 2 && lb == 2 && lc == 4: // year last, day or month first
		x, y := atoi2(s[a[0]:]), atoi2(s[b[0]:])
		return x >= 1 && y >= 1 && min(x, y) <= 12 && max(x, y) <= 31
	}
	return false
}

// isThousands: an amount with thousands commas ("1,234,567,890.50"); a
// card number split by commas has groups of four and stays masked.
func (r *digitRun) isThousands(s string) bool {
	if r.ng < 2 || r.ng > len(r.groups) || r.groups[0][1]-r.groups[0][0] > 3 {
		return false
	}
	commas := 0
	for i := 1; i < r.ng; i++ {
		g, prev := r.groups[i], r.groups[i-1]
		if g[0]-prev[1] != 1 {
			return false
		}
		switch s[prev[1]] {
		case ',':
			if g[1]-g[0] != 3 || commas != i-1 {
				return false
			}
			commas++
		case '.':
			if i != r.ng-1 || g[1]-g[0] > 8 {
				return false
			}
		default:
			return false
		}
	}
	return commas > 0
}

func (r *digitRun) isIPv4(s string) bool {
	for _, g := range r.groups[:4] {
		n := g[1] - g[0]
		if n > 3 || n == 3 && s[g[0]:g[1]] > "255" {
			return false
		}
	}
	return true
}

func atoi2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// maskKeepLast4 replaces every digit of s[a:b] but the last four with '*'.
func maskKeepLast4(s string, out []byte, a, b int) []byte {
	if out == nil {
		out = []byte(s)
	}
	keep := 4
	for k := b - 1; k >= a; k-- {
		if !isDigit(s[k]) {
			continue
		}
		if keep > 0 {
			keep--
			continue
		}
		out[k] = '*'
	}
	return out
}

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

// maskValue masks a card or phone number to its last four digits; ""
// stays "", so an absent value does not look present.
func maskValue(s string) string {
	if s == "" {
		return ""
	}
	return maskTail(s)
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
	r.Value, r.Holder = maskValue(r.Value), redact(r.Holder)
	fmt.Fprintf(f, fmt.FormatString(f, verb), Requisites(r))
}

// Format implements fmt.Formatter: the payout as fmt would print it, with
// the card or phone number masked to its last four digits and the
// recipient's name hidden, as in LogValue.
func (p Payout) Format(f fmt.State, verb rune) {
	type Payout payoutFields
	p.Requisites, p.HolderName = maskValue(p.Requisites), redact(p.HolderName)
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
	p.Requisites, p.HolderName = maskValue(p.Requisites), redact(p.HolderName)
	fmt.Fprintf(f, fmt.FormatString(f, verb), CreatePayoutParams(p))
}

// LogValue implements slog.LogValuer: the params with the card or phone
// number masked and without the recipient's name, as Payout logs.
func (p CreatePayoutParams) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("ext_id", p.ExtID),
		slog.String("amount", p.Amount.String()),
		slog.String("method", string(p.Method)),
		slog.String("requisites", maskValue(p.Requisites)),
		slog.String("bank", p.Bank),
		slog.String("notify_url", p.NotifyURL),
	)
}

// webhookHandlerView is what fmt shows of a WebhookHandler: no sync.Once,
// which must not be copied.
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
// Token and every entry of Tokens redacted.
func (h *WebhookHandler) Format(f fmt.State, verb rune) {
	type WebhookHandler webhookHandlerView
	v := &WebhookHandler{Token: redact(h.Token), TokenFor: h.TokenFor, OnPayment: h.OnPayment,
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
// its tokens.
func (h *WebhookHandler) LogValue() slog.Value {
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
		fmt.Fprintf(f, "%#v", &Error{Code: e.Code, HTTPStatus: e.HTTPStatus, Message: maskDigits(e.Message),
			Data: maskDigits(string(e.Data))})
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
		slog.String("value", maskValue(r.Value)),
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
		slog.String("requisites", maskValue(p.Requisites)), slog.String("bank", p.Bank))
}

// moneyValue is what a payment and a payout log in common, then more.
func moneyValue(id, extID string, amount decimal.Decimal, currency, status, method string, more ...slog.Attr) slog.Value {
	return slog.GroupValue(append([]slog.Attr{slog.String("id", id), slog.String("ext_id", extID),
		slog.String("amount", amount.String()), slog.String("currency", currency),
		slog.String("status", status), slog.String("method", method)}, more...)...)
}

// maskDigits masks card and phone numbers in free text, keeping their last
// four digits, even when a server echoes them into an error. A number is a
// run of ten digits or more, in groups joined by one or two spaces, dashes,
// dots, commas, slashes, underscores or parentheses ("8 (912) 345-67-89"),
// glued to letters or not. What error texts must name stays readable:
// UUIDs, hashes, ext_ids with fewer than ten digits, decimal amounts,
// amounts with thousands commas, IPv4 addresses and a leading date.
func maskDigits(s string) string {
	var out []byte
	for i := 0; i < len(s); {
		if n := readableLen(s, i); n > 0 {
			i += n
			continue
		}
		if !isDigit(s[i]) {
			i++
			continue
		}
		r := scanDigitRun(s, i)
		out = r.mask(s, out)
		i = r.end
	}
	if out == nil {
		return s
	}
	return string(out)
}

// maskTail replaces all but the last four characters of s with asterisks.
func maskTail(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	for i := range r[:len(r)-4] {
		if r[i] != '+' && r[i] != ' ' {
			r[i] = '*'
		}
	}
	return string(r)
}

// redact removes the API key from every field of an error answer, should a
// server echo it.
func (c *Client) redact(e *Error) *Error {
	if strings.Contains(e.Code, c.apiKey) {
		e.Code = invalidCode
	}
	if strings.Contains(e.Message, c.apiKey) {
		e.Message = strings.ReplaceAll(e.Message, c.apiKey, "[api key]")
	}
	if bytes.Contains(e.Data, []byte(c.apiKey)) {
		e.Data = bytes.ReplaceAll(e.Data, []byte(c.apiKey), []byte("[api key]"))
	}
	return e
}
