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

// amount is a decimal as a bare JSON number with every digit the caller
// wrote: 1500.50, not "1500.50" (decimal's MarshalJSON) nor 1500.5
// (decimal.String). A json.Number needs no MarshalJSON call and re-scan,
// and the SDK never touches
// decimal.MarshalJSONWithoutQuotes, a global switch of the merchant's.
func amount(d decimal.Decimal) json.Number {
	if exp := d.Exponent(); exp < 0 {
		return json.Number(d.StringFixed(-exp))
	}
	return json.Number(d.String())
}

// Bounds of a number decoded as an amount, rate, fee or balance: no real
// figure comes near them, while a million digits or 1e999999999 from a
// hostile server would take decimal seconds or hours to parse, compare or
// print. Such a token is refused by its text, before any big-number work.
const (
	maxAmountDigits   = 40
	maxAmountExponent = 30
)

var errAmountRange = errors.New("number out of the range an amount can take")

// checkNumber vets a numeric token's text in one pass that stops at the
// first digit past the bounds; malformed text is left to the parser.
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

// parseDecimal is a variable so that a test can prove refused input
// never reaches it.
var parseDecimal = decimal.NewFromString

// wireDec decodes an amount, a JSON number or numeric string vetted by
// checkNumber; null is zero, as for decimal's own decoder.
type wireDec decimal.Decimal

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireDec) UnmarshalJSON(b []byte) error {
	var n wireNullDec
	err := n.UnmarshalJSON(b)
	*d = wireDec(n.Decimal)
	return err
}

// wireNullDec decodes an amount that may be null (Valid false).
type wireNullDec decimal.NullDecimal

// UnmarshalJSON implements json.Unmarshaler.
func (d *wireNullDec) UnmarshalJSON(b []byte) error {
	*d = wireNullDec{}
	if string(b) == "null" {
		return nil
	}
	s := b
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if err := checkNumber(s); err != nil {
		return err
	}
	v, err := parseDecimal(string(s))
	if err != nil {
		return fmt.Errorf("%s is not a number", truncate(string(b), 40))
	}
	*d = wireNullDec{Decimal: v, Valid: true}
	return nil
}

// apiTime decodes ISO 8601 timestamps leniently, in UTC: RFC 3339 with or
// without fractional seconds or zone (UTC, as the spec says), or a bare
// date. null and "" are the zero time: several are absent until an event.
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
	// Strict RFC 3339 first, without a copy: without it an in-memory
	// ListPayouts allocates 1112 not 962 and goes from 1.07 to 1.10.
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

// normalizeOffset rewrites the ISO 8601 zone forms RFC 3339 refuses (a
// lowercase "z" or "t", +hhmm as PHP writes it, +hh) into its own.
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

// flexString accepts a JSON string, a number (as written) or null, for
// identifiers and codes a server might send either way.
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

// unquote decodes a JSON string literal; printable ASCII without escapes
// straight out of the quotes, the common case, without an allocation for
// the escapes it does not have (BENCHMARKS.md, third round).
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

// decodeEnum maps a JSON string onto a known constant case-insensitively
// (the API mixes cases) and keeps an unknown value as sent: a status added
// later is visible, not an error.
func decodeEnum[T ~string](b []byte, known ...T) (T, error) {
	if string(b) == "null" {
		return "", nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		for _, k := range known { // without allocating: []byte(k) stays on the stack
			if len(k) == len(b)-2 && bytes.EqualFold(b[1:len(b)-1], []byte(k)) {
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

// pathSegment escapes s as one path segment, "." and ".." too: a proxy
// that cleans paths would resolve /v1/payments/by-ext-id/.. elsewhere.
func pathSegment(s string) string {
	if s == "." || s == ".." {
		return strings.ReplaceAll(s, ".", "%2E")
	}
	return url.PathEscape(s)
}
