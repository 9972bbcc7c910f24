package paykit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzDecodeError feeds arbitrary bodies and statuses to the error decoder:
// it must never panic, always yield the status, keep its message short,
// printable and free of long digit runs once formatted, and never bring
// back the call's API key or signature, whole or in part at a cut: not as
// written, and not once the JSON it keeps (Data, a message that is not a
// string) is decoded, whatever the body escapes ("\u0070k_…", "\/").
func FuzzDecodeError(f *testing.F) {
	const key, sig = "pk_fz/QZX7w", "9c4f0e3d2b1a09f8e7d6c5b4a3928170/f5e4d3c2b1a0f9e8d7c6b5a49382716"
	sec := secrets{apiKey: key, signature: sig}
	esc := func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }
	// sig[1] is 'c': the escaped seeds below hide the signature from a
	// scrub of the raw body.
	for _, seed := range []string{
		`{"error":"PAY_003","message":"exists","data":{"ext_id":"o-1"}}`,
		`{"error":"PAY_001","message":"Payout not found","data":{}}`,
		`{"error":123,"message":["x"],"data":"y"}`,
		`{"error":"\u0000","message":"\ud800"}`,
		`<html><body>502 Bad Gateway</body></html>`,
		"\xff\xfe\x00garbage", ``, `null`, `{"error":null}`, `{"error":"X","data":{"ext_id":{"a":1}}}`,
		`{"error":"PAY_002","message":"key ` + key + ` sig ` + sig[:1] + `\u0063` + sig[2:] + `","data":{"k":"` + key + `"}}`,
		`<p>` + strings.Repeat(".", maxExcerpt-6) + key + sig + `</p>`,
		// Escaped inside data, where the raw bytes are kept: a letter, a
		// slash, a key of the object; and in a message that is an object.
		`{"error":"PAY_002","message":"m","data":{"k":"\u0070k_fz/QZX7w","s":"` + esc(sig) + `"}}`,
		`{"error":"PAY_002","message":"m","data":{"` + esc(key) + `":[1,"` + sig[:9] + `\u002f` + sig[10:] + `"]}}`,
		`{"error":"PAY_002","message":{"echo":"` + esc(key) + `"},"data":{"ext_id":"` + esc(sig) + `"}}`,
		`{"error":"","data":{"k":"` + esc(key) + `"}}`,
	} {
		f.Add(500, []byte(seed))
		f.Add(404, []byte(seed))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := decodeError(status, body, sec)
		// A part of a secret that the body says on its own is the
		// server's; one left by a whole secret is a leak. What a JSON
		// body says is its strings once unescaped (each scrubbed, as the
		// decoder scrubs); a body that is not JSON and holds a backslash
		// may hide anything, so nothing is asked.
		said, isJSON := jsonTokens(body, sec)
		switch {
		case isJSON:
		case strings.Contains(string(body), `\`):
			said = key + sig
		default:
			said = string(sec.scrubBytes(body))
		}
		var parts []string
		for _, p := range []string{key[:5], sig[:8], sig[56:]} {
			if !strings.Contains(said, p) {
				parts = append(parts, p)
			}
		}
		data, _ := jsonTokens(e.Data, secrets{})
		msg, _ := jsonTokens([]byte(e.Message), secrets{})
		for i, text := range []string{e.Error(), e.Code, e.Message, string(e.Data), e.ExtID(), data, msg, fmt.Sprintf("%#v", e)} {
			for _, p := range parts {
				if strings.Contains(text, p) {
					// Not the text itself: it would print the secret.
					t.Fatalf("a secret, or part of one, is left in form %d (Error, Code, Message, Data, ExtID, "+
						"Data decoded, Message decoded, %%#v)", i)
				}
			}
		}
		if e.HTTPStatus != status {
			t.Fatalf("status %d became %d", status, e.HTTPStatus)
		}
		text := e.Error()
		if e.Code == "" && len(e.Message) > maxExcerpt+len("…") {
			t.Fatalf("excerpt of %d bytes", len(e.Message))
		}
		if len(e.Message) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes", len(e.Message))
		}
		for _, s := range allSentinels {
			_ = errors.Is(e, s)
		}
		_ = e.ExtID()
		if strings.Count(text, "\n") > 0 && e.Code == "" {
			t.Fatalf("excerpt has a line break: %q", text)
		}
	})
}

// jsonTokens gives what a JSON text says: the text itself, less each
// string that held a secret once unescaped, then its keys, strings and
// numbers in order (duplicates included), each unescaped and scrubbed as
// the decoder scrubs, one per line; false if b is not JSON.
func jsonTokens(b []byte, sec secrets) (string, bool) {
	if !json.Valid(b) {
		return "", false
	}
	var raw, decoded strings.Builder
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var from int64
	for {
		tok, err := d.Token()
		if err != nil {
			return raw.String() + "\n" + decoded.String(), true
		}
		chunk := b[from:d.InputOffset()]
		from = d.InputOffset()
		switch v := tok.(type) {
		case string:
			decoded.WriteString(sec.scrub(v) + "\n")
			if sec.scrub(v) != v {
				chunk = []byte("\n")
			}
		case json.Number:
			decoded.WriteString(v.String() + "\n")
		}
		raw.Write(chunk)
	}
}

// FuzzDecodeResources decodes arbitrary bodies into every resource type.
// No input may panic, and whatever decodes must be safe to use: amounts
// print in bounded time (no 1e999999999 expanding to a billion digits).
func FuzzDecodeResources(f *testing.F) {
	for _, seed := range []string{
		cardPaymentJSON, crossBorderPaymentJSON, confirmJSON,
		`{"id":"x","status":"dispute","dispute":{"amount":null,"created_at":null}}`,
		`{"payouts":[{"id":"x","amount":"1.5","completed_at":"2026-01-01T00:00:00Z","requisites":4111}],"total":1,"limit":100,"offset":0}`,
		`{"terminals":[{"id":7,"balance":"1e3","balance_frozen":0.5,"withdrawal_fee":1,"is_active":true}]}`,
		`{"amount":1e400,"fee":"-0","tx_hash":null}`, `{"amount":"1e-2147483648"}`, `{"usdt_rate":"9".repeat}`,
		`{"requisites":{"type":"phone","bank":"kg_1","amount_local":"12.0000000001"}}`, `{"valid_until":"2026-13-45T99:99:99Z"}`,
		`{"banks":[{"code":"sber","name":"Сбер","is_active":"yes"}]}`, `[`, `{"id":"\ud83d"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p Payment
		if json.Unmarshal(body, &p) == nil {
			use(t, p.Amount.String(), p.USDTRate.String(), p.Requisites.AmountLocal.String())
			if p.Dispute != nil {
				use(t, p.Dispute.Amount.Decimal.String())
			}
		}
		var list PayoutList
		if json.Unmarshal(body, &list) == nil {
			for _, po := range list.Payouts {
				use(t, po.Amount.String())
			}
		}
		var po Payout
		_ = json.Unmarshal(body, &po)
		var terminals struct{ Terminals []Terminal }
		if json.Unmarshal(body, &terminals) == nil {
			for _, tm := range terminals.Terminals {
				use(t, tm.Balance.Add(tm.BalanceFrozen).String(), tm.WithdrawalFee.String())
			}
		}
		var b Balance
		if json.Unmarshal(body, &b) == nil {
			use(t, b.Balance.Add(b.BalanceFrozen).String())
		}
		var w Withdrawal
		if json.Unmarshal(body, &w) == nil {
			use(t, w.Amount.Sub(w.Fee).String())
		}
		var fee WithdrawalFee
		_ = json.Unmarshal(body, &fee)
		var tr Transfer
		if json.Unmarshal(body, &tr) == nil {
			use(t, tr.Amount.String())
		}
		var banks struct{ Banks []Bank }
		_ = json.Unmarshal(body, &banks)
	})
}

// use bounds the printed size of decoded amounts.
func use(t *testing.T, amounts ...string) {
	for _, a := range amounts {
		if len(a) > maxAmountDigits+maxAmountExponent+4 {
			t.Fatalf("amount printed as %d characters", len(a))
		}
	}
}

// FuzzPipeline sends arbitrary status codes and bodies through the whole
// client: never a panic, and never a nil error with a nil result.
func FuzzPipeline(f *testing.F) {
	f.Add(200, []byte(cardPaymentJSON))
	f.Add(201, []byte(`{"id":1}`))
	f.Add(302, []byte(``))
	f.Add(409, []byte(`{"error":"PAY_003","data":{"ext_id":"o"}}`))
	f.Add(503, []byte(`<html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		c, err := NewClient(testBase, testKey, HMACSigner(testSecret),
			WithHTTPClient(mockHTTP(t, status, string(body), nil)), WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.GetPayment(ctx, paymentID)
		if (p == nil) == (err == nil) {
			t.Fatalf("status %d: payment %v, error %v", status, p, err)
		}
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Fatal("API key in an error")
		}
	})
}
