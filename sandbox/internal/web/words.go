package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/mask"
)

// What people read on the payment page and the dashboard: amounts, methods
// and times in words, never the wire's tokens (1500.5, CROSS_BORDER,
// 2026-03-02T10:20:00Z).

// MoneyText writes an amount the way the pages show it: English
// convention, since the pages are in English: "," between thousands, "."
// before at least two decimals (more when the value has them, as USDT may),
// then the ISO currency code: "1,500.50 RUB", "12,000.125 USDT". The code,
// not "₽", so no font is needed and a payer cannot confuse it with another
// currency sign. Copy buttons copy the bare digits ("1500.50") instead,
// which every bank app accepts.
func MoneyText(d decimal.Decimal, currency string) string {
	s := ledger.Scaled(d, 2)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := sign + b.String() + "." + frac
	if currency != "" {
		out += " " + currency
	}
	return out
}

// MethodText names a payment or payout method in words; an unknown value
// is shown as it is rather than hidden.
func MethodText(method string) string {
	switch strings.ToUpper(method) {
	case "CARD":
		return "Bank card"
	case "SBP":
		return "SBP (Faster Payments)"
	case "SIM":
		return "SIM / mobile"
	case "CROSS_BORDER":
		return "Cross-border transfer"
	}
	return method
}

// payerZone is the zone of the payment page's times. The payers of this
// service pay from Russian banks, so the page speaks Moscow time, which
// has been UTC+3 all year since 2014; a fixed zone needs no tzdata. The
// dashboard, read by the merchant's testers, stays in UTC like the API.
var payerZone = time.FixedZone("MSK", 3*3600)

// PayBy is the valid-until line of the payment page in the payer's words:
// "Pay by 14:35 Moscow time" and, apart, "in 19 minutes". The whole
// minutes left are rounded up, so the page never says "0 minutes" while
// the payment can still be paid.
func PayBy(validUntil, now time.Time) (by, left string) {
	v, n := validUntil.In(payerZone), now.In(payerZone)
	by = v.Format("15:04") + " Moscow time"
	if v.YearDay() != n.YearDay() || v.Year() != n.Year() {
		// Another day: the hour alone would mislead.
		by = v.Format("2 Jan 15:04") + " Moscow time"
	}
	return by, InWords(validUntil.Sub(now))
}

// InWords is a time span as a person says it: "in less than a minute",
// "in 1 minute", "in 19 minutes", "in 2 hours 5 minutes", or "now" when it
// has passed.
func InWords(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	if d < time.Minute {
		return "in less than a minute"
	}
	mins := int((d + time.Minute - 1) / time.Minute)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	if mins < 60 {
		return "in " + plural(mins, "minute")
	}
	h, m := mins/60, mins%60
	if m == 0 {
		return "in " + plural(h, "hour")
	}
	return "in " + plural(h, "hour") + " " + plural(m, "minute")
}

// PayloadText is a webhook body as the dashboard shows it: indented, keys
// in the order sent and numbers as sent (1500.50 stays 1500.50), with the
// payer's card or phone number masked like everywhere else on the
// dashboard (requisites.value of a payment, requisites of a payout).
func PayloadText(body []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return "(not JSON)"
	}
	out := buf.String()
	var v struct {
		Requisites json.RawMessage `json:"requisites"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Requisites) == 0 {
		return out
	}
	var num string
	var obj struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(v.Requisites, &num) != nil && json.Unmarshal(v.Requisites, &obj) == nil {
		num = obj.Value
	}
	if num == "" {
		return out
	}
	q, _ := json.Marshal(num)
	m, _ := json.Marshal(MaskNumber(num))
	return strings.ReplaceAll(out, string(q), string(m))
}

// Elapsed is an attempt's duration as a person reads it: "2 ms", "<1 ms",
// "1.5 s".
func Elapsed(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// ReqLabel names a payment's requisites type on the dashboard.
func ReqLabel(reqType string) string {
	if reqType == "card" {
		return "Card"
	}
	return "Phone"
}

// MaskNumber hides a card or phone number but its last four digits: enough
// to tell two payments apart, not enough to leak a number from a screenshot
// of the dashboard.
func MaskNumber(v string) string {
	var ds []byte
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			ds = append(ds, v[i])
		}
	}
	if len(ds) == 0 {
		return "••••"
	}
	if len(ds) <= 4 {
		return "•••• " + strings.Repeat("•", len(ds))
	}
	return "•••• " + string(ds[len(ds)-4:])
}

// MerchantLabel names the i-th merchant (from 0) without its API key:
// "Merchant 1 (API key pk_s…)".
func MerchantLabel(i int, apiKey string) string {
	return fmt.Sprintf("Merchant %d (API key %s)", i+1, MaskKey(apiKey))
}

// MaskKey shows the start of an API key, which tells merchants apart
// without putting the key on the screen.
func MaskKey(k string) string { return mask.Key(k) }

// Time is a dashboard time in full, in UTC like the API.
func Time(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// ClockTime is the short form a table cell shows; the full Time goes in
// its title.
func ClockTime(t time.Time) string { return t.UTC().Format("15:04:05") }

// ShortID is the start of a UUID: enough to tell rows apart at a glance;
// the whole id is in the cell's title and the row's id attribute.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// TimeLeft formats the time until valid_until the way a tester reads it
// from across the room: "19m 58s", "1h 05m", or "expired".
func TimeLeft(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	d = d.Round(time.Second)
	h, m, sec := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// Delay writes an autopilot delay the way a person says it: "10 s",
// "2 min", "1 h 30 min".
func Delay(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", d/time.Second)
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d < time.Hour && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%d h %d min", d/time.Hour, d%time.Hour/time.Minute)
}

// Faults says the delivery faults of a sandbox in words: "each delivery
// sent twice at a rate of 10%, held back behind the next at 10%, late by
// up to 2s; seed 42 replays this run"; empty when none is on.
func Faults(duplicate, reorder float64, delay time.Duration, seed int64) string {
	var parts []string
	if duplicate > 0 {
		parts = append(parts, "sent twice at a rate of "+percent(duplicate))
	}
	if reorder > 0 {
		parts = append(parts, "held back behind the next of its resource at "+percent(reorder))
	}
	if delay > 0 {
		parts = append(parts, "late by up to "+delay.String())
	}
	if len(parts) == 0 {
		return ""
	}
	return "deliveries " + strings.Join(parts, ", ") + "; seed " + strconv.FormatInt(seed, 10) + " replays this run"
}

// DeliveryFaults says which faults a delivery was given, in words.
func DeliveryFaults(faults []string, delayed time.Duration) string {
	var parts []string
	for _, f := range faults {
		switch f {
		case "delay":
			parts = append(parts, "delayed "+delayed.Round(time.Millisecond).String())
		case "reorder":
			parts = append(parts, "held back")
		case "duplicate":
			parts = append(parts, "duplicate")
		}
	}
	return strings.Join(parts, ", ")
}

func percent(r float64) string { return strconv.FormatFloat(r*100, 'g', 4, 64) + "%" }
