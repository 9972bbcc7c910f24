package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// The body of paykit api, and what it moves.
//
// -f key=value and -F key=value build a JSON object, as gh's do, with
// one difference that matters for money: -F types a value by the wire type
// the spec gives its key on that path, not by how it looks. An amount is
// a JSON number written with the exact digits typed (never through a
// float64), and it is refused when it is finer than its currency; a card
// or phone number stays a string however numeric it looks; a boolean the
// spec names takes true or false alone. A key the spec does not type on
// that path (or a path it does not list) follows gh: true, false and null
// are JSON literals, a plain decimal number is a JSON number with its
// digits kept, anything else a string. -f always gives a string. A value
// of @FILE reads it from a file (@- from stdin), as a string.

// wireKind is the spec's type of a request member.
type wireKind string

const (
	wireString  wireKind = "string"
	wireBoolean wireKind = "boolean"
	wireRUB     wireKind = "RUB"  // a number: an amount in RUB
	wireUSDT    wireKind = "USDT" // a number: an amount in USDT
)

// wireTypes are the request members of each write the spec lists, by the
// path's shape ({id} for an id).
var wireTypes = map[string]map[string]wireKind{
	"/v1/payments": {"ext_id": wireString, "amount": wireRUB, "method": wireString, "bank": wireString, "country": wireString,
		"client_id": wireString, "notify_url": wireString, "notification_token": wireString},
	"/v1/payments/{id}/dispute": {"amount": wireRUB, "receipt_url": wireString, "comment": wireString},
	"/v1/payouts": {"ext_id": wireString, "amount": wireRUB, "method": wireString, "requisites": wireString,
		"holder_name": wireString, "bank": wireString, "notify_url": wireString},
	"/v1/transfers":   {"from_terminal_id": wireString, "to_terminal_id": wireString, "amount": wireUSDT},
	"/v1/withdrawals": {"terminal_id": wireString, "amount": wireUSDT, "address": wireString, "subtract_fee_from_amount": wireBoolean},
}

// pathShape is the path without its query, with the id segment of a
// payment, payout or withdrawal written {id}: the key of wireTypes and
// apiResources.
func pathShape(path string) string {
	p, _, _ := strings.Cut(path, "?")
	seg := strings.Split(p, "/")
	if len(seg) > 3 && seg[1] == "v1" && (seg[2] == "payments" || seg[2] == "payouts" || seg[2] == "withdrawals") &&
		seg[3] != "by-ext-id" && seg[3] != "fee" {
		seg[3] = "{id}"
	}
	return strings.Join(seg, "/")
}

// apiResources are the resource each write path answers with, for the
// check of --json's fields before sending.
var apiResources = map[string]string{
	"/v1/payments": "payment", "/v1/payments/{id}/confirm": "payment", "/v1/payments/{id}/cancel": "payment",
	"/v1/payments/{id}/dispute": "payment", "/v1/payments/{id}/dispute/cancel": "payment",
	"/v1/payouts": "payout", "/v1/transfers": "transfer", "/v1/withdrawals": "withdrawal",
}

// genericNumber is what -F takes as a JSON number on a key the spec does
// not type: gh's integers, and decimals with their digits kept.
var genericNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$`)

// fieldsBody builds the JSON object of -f (raw) and -F (typed) fields, in
// the order given, for a write to path. It reads @FILE values; nothing is
// sent before it returns.
func fieldsBody(path string, raw, typed []string, stdin io.Reader) ([]byte, error) {
	types := wireTypes[pathShape(path)]
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	add := func(flag, kv string, typedValue bool) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("%s %q: want key=value", flag, kv)
		}
		if seen[k] {
			return usagef("%s: %q is given twice", flag, k)
		}
		seen[k] = true
		if typedValue && strings.HasPrefix(v, "@") {
			s, err := readValue(v[1:], stdin)
			if err != nil {
				return usagef("%s %s: %v", flag, k, err)
			}
			v = s
		}
		val, err := typeValue(k, v, typedValue, types[k])
		if err != nil {
			return usagef("%s %s: %v; nothing was sent", flag, k, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, k))
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	for _, kv := range raw {
		if err := add("-f", kv, false); err != nil {
			return nil, err
		}
	}
	for _, kv := range typed {
		if err := add("-F", kv, true); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// typeValue is v as JSON: a string for -f; for -F by the spec's kind of
// the key, else gh's rules (see the top of this file).
func typeValue(key, v string, typed bool, kind wireKind) ([]byte, error) {
	if !typed || kind == wireString {
		return appendJSONString(nil, v), nil
	}
	switch kind {
	case wireRUB, wireUSDT:
		if _, err := decimalArg(key, v, string(kind)); err != nil {
			return nil, fmt.Errorf("%s", strings.TrimPrefix(strings.TrimSuffix(err.Error(), "; nothing was sent"), "--"+key+": "))
		}
		return []byte(v), nil // the digits typed: validated, never re-spelled
	case wireBoolean:
		if v != "true" && v != "false" {
			return nil, fmt.Errorf("want true or false, not %q", v)
		}
		return []byte(v), nil
	}
	switch {
	case v == "true" || v == "false" || v == "null":
		return []byte(v), nil
	case genericNumber.MatchString(v):
		return []byte(v), nil
	}
	return appendJSONString(nil, v), nil
}

// readValue is the text of a file, or of stdin for "-".
func readValue(name string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, maxCapture))
	} else {
		b, err = os.ReadFile(name)
	}
	return string(b), err
}

// moveQuestion says what a write's body moves, as the typed commands'
// questions do: "Pay out 500.00 RUB by card to ************1234 (ext_id
// payout-77)". amount is the amount as shown, for a live profile's typed
// confirmation; "" when the body has none. Card and phone numbers are
// masked; every value is made safe for a terminal.
func moveQuestion(path string, body []byte) (what, amount string) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if len(body) == 0 || dec.Decode(&m) != nil {
		return "", ""
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			return string(bytes.TrimSpace(m[k])) // not a string: as written
		}
		return s
	}
	if n, ok := m["amount"]; ok {
		amount = strings.TrimSpace(string(n))
		if d, err := decimal.NewFromString(amount); err == nil && plainDecimal.MatchString(amount) {
			amount = money(d)
		}
	}
	or := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	amt := or(amount)
	switch pathShape(path) {
	case "/v1/payouts":
		req := str("requisites")
		if req != "" {
			req = masked(req)
		}
		what = fmt.Sprintf("Pay out %s RUB by %s to %s (ext_id %s)", amt, or(str("method")), or(req), or(str("ext_id")))
	case "/v1/payments":
		what = fmt.Sprintf("Create a payment of %s RUB (ext_id %s)", amt, or(str("ext_id")))
	case "/v1/transfers":
		what = fmt.Sprintf("Transfer %s USDT from %s to %s", amt, or(str("from_terminal_id")), or(str("to_terminal_id")))
	case "/v1/withdrawals":
		fee := "fee on top"
		if str("subtract_fee_from_amount") == "true" {
			fee = "fee subtracted"
		}
		what = fmt.Sprintf("Withdraw %s USDT (%s) from %s to %s", amt, fee, or(str("terminal_id")), or(str("address")))
	default:
		if amount != "" {
			what = "amount " + amount
		}
	}
	return safeCell(what), amount
}
