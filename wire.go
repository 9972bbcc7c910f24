package paykit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// amount is a decimal as a bare JSON number that keeps every digit the
// caller wrote: 1500.50 goes out as 1500.50, not "1500.50" (decimal's own
// MarshalJSON quotes) and not 1500.5 (decimal.String trims trailing zeros).
// A json.Number, rather than a type with MarshalJSON, lets encoding/json
// write it without calling a method and re-scanning its output; and the
// SDK never touches decimal.MarshalJSONWithoutQuotes, a package-level
// switch that would race with, and change the output of, every other user
// of decimal in the merchant's program.
func amount(d decimal.Decimal) json.Number {
	if exp := d.Exponent(); exp < 0 {
		return json.Number(d.StringFixed(-exp))
	}
	return json.Number(d.String())
}

// Bounds of a number the SDK decodes as an amount, rate, fee or balance.
// No real figure of this API comes near them (300000.00 RUB has 8 digits;
// USDT has 6 decimals), while a hostile or broken server could send a
// number of a million digits, or 1e999999999: decimal stores that in a few
// bytes, but parsing, comparing or printing it expands the coefficient,
// which takes seconds or hangs. Such a token is refused by reading its text,
// before any big-number work.
const (
	maxAmountDigits   = 40
	maxAmountExponent = 30
)

var errAmountRange = errors.New("number out of the range an amount can take")

// checkNumber vets the text of a numeric token (a bare JSON number or the
// inside of a numeric string) in one pass that stops at the first digit
// past the bound: at most maxAmountDigits digits and an exponent within
// ±maxAmountExponent. Malformed text is left to the parser, which refuses
// it cheaply.
func checkNumber(s []byte) error {
	digits := 0
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for ; i < len(s) && (isDigit(s[i]) || s[i] == '.'); i++ {
		if s[i] != '.' {
			if digits++; digits > maxAmountDigits {
				return errAmountRange
			}
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp = exp*10 + int(s[i]-'0'); exp > maxAmountExponent {
				return errAmountRange
			}
		}
	}
	return nil
}

// parseDecimal is the one place where the SDK turns text into a decimal;
// a variable so that a test can prove refused input never reaches it.
var parseDecimal = decimal.NewFromString

// wireDec decodes an amount: a JSON number or numeric string, vetted by
// checkNumber before it is parsed. null decodes to zero, as decimal's own
// decoder does.
type wireDec decimal.Decimal

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireDec) UnmarshalJSON(b []byte) error {
	v, ok, err := decodeNumber(b)
	if err != nil {
		return err
	}
	if !ok {
		v = decimal.Decimal{}
	}
	*d = wireDec(v)
	return nil
}

// wireNullDec decodes an amount that the spec allows to be null.
type wireNullDec decimal.NullDecimal

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireNullDec) UnmarshalJSON(b []byte) error {
	v, ok, err := decodeNumber(b)
	if err != nil {
		return err
	}
	*d = wireNullDec{Decimal: v, Valid: ok}
	return nil
}

// decodeNumber decodes a JSON number, a numeric string or null (ok false).
func decodeNumber(b []byte) (v decimal.Decimal, ok bool, err error) {
	if string(b) == "null" {
		return decimal.Decimal{}, false, nil
	}
	s := b
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if err := checkNumber(s); err != nil {
		return decimal.Decimal{}, false, err
	}
	v, err = parseDecimal(string(s))
	if err != nil {
		return decimal.Decimal{}, false, fmt.Errorf("%s is not a number", truncate(string(b), 40))
	}
	return v, true, nil
}

// apiTime decodes the service's ISO 8601 timestamps leniently: RFC 3339 with
// or without fractional seconds, the same without a zone (taken as UTC, which
// the spec says every timestamp is), or a bare date. null and "" decode to the
// zero time, because the spec marks several times as absent until an event
// happens. The result is always in UTC.
type apiTime time.Time

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *apiTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = apiTime{}
		return nil
	}
	// Fast path, without copying the text: strict RFC 3339, what the API
	// sends. Whatever it accepts, time.Parse with RFC3339Nano accepts with
	// the same result; the rest falls through to the lenient layouts.
	var v time.Time
	if v.UnmarshalJSON(b) == nil {
		*t = apiTime(v.UTC())
		return nil
	}
	s, err := unquote(b)
	if err != nil {
		return fmt.Errorf("timestamp is not a string")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		*t = apiTime{}
		return nil
	}
	s = normalizeOffset(s)
	for _, layout := range timeLayouts {
		if v, err := time.Parse(layout, s); err == nil {
			*t = apiTime(v.UTC())
			return nil
		}
	}
	return fmt.Errorf("timestamp %q is not ISO 8601", truncate(s, 40))
}

// normalizeOffset rewrites the ISO 8601 zone designators that RFC 3339
// does not allow into its form, so that one set of layouts reads them all:
// a lowercase "z" or "t", and offsets written +hhmm (PHP's DATE_ISO8601,
// "+0000") or +hh become +hh:mm. Anything else is returned unchanged.
func normalizeOffset(s string) string {
	if len(s) > 10 && (s[10] == 't') {
		s = s[:10] + "T" + s[11:]
	}
	if n := len(s); n > 0 && s[n-1] == 'z' {
		return s[:n-1] + "Z"
	}
	// The offset starts at the last '+' or '-' after the time of day.
	k := strings.LastIndexAny(s, "+-")
	if k < 11 || strings.Contains(s[k:], ":") {
		return s
	}
	off := s[k+1:]
	for i := 0; i < len(off); i++ {
		if !isDigit(off[i]) {
			return s
		}
	}
	switch len(off) {
	case 2: // +hh
		return s + ":00"
	case 4: // +hhmm
		return s[:k+3] + ":" + s[k+3:]
	}
	return s
}

// flexString accepts a JSON string, a number (kept as written) or null. Used
// for identifiers and codes that a server might send either way.
type flexString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*f = ""
	case len(b) > 0 && b[0] == '"':
		s, err := unquote(b)
		if err != nil {
			return err
		}
		*f = flexString(s)
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		*f = flexString(b)
	default:
		return fmt.Errorf("expected a string")
	}
	return nil
}

// unquote decodes a JSON string literal. The common case, printable ASCII
// without escapes, is copied straight out of the quotes; anything else goes
// through json.Unmarshal, whose result it then equals. That skips a decoder
// and a few allocations for each identifier, status and timestamp decoded.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && plainASCII(b[1:len(b)-1]) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// plainASCII reports whether b is printable ASCII without '"' or '\\'.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// truncate shortens s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// decodeEnum decodes a JSON string into an enum, mapping it onto a known
// constant case-insensitively (the API sends some statuses in lower case and
// others in upper case) and keeping an unknown value exactly as sent, so
// that a status added by the service later is visible, not an error.
func decodeEnum[T ~string](b []byte, known ...T) (T, error) {
	if string(b) == "null" {
		return "", nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		for _, k := range known { // without allocating: []byte(k) stays on the stack
			if bytes.EqualFold(b[1:len(b)-1], []byte(k)) {
				return k, nil
			}
		}
	}
	s, err := unquote(b)
	if err != nil {
		return "", err
	}
	for _, k := range known {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return T(s), nil
}

// pathSegment escapes s as one path segment. url.PathEscape leaves "." and
// ".." as they are, and a proxy or server that cleans paths would then
// resolve /v1/payments/by-ext-id/.. to another endpoint; their dots are
// escaped too.
func pathSegment(s string) string {
	if s == "." || s == ".." {
		return strings.ReplaceAll(s, ".", "%2E")
	}
	return url.PathEscape(s)
}
