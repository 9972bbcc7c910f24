package sandbox

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// What people read on the payment page and the dashboard: amounts, methods
// and times in words, never the wire's tokens (1500.5, CROSS_BORDER,
// 2026-03-02T10:20:00Z).

// moneyText writes an amount the way the pages show it: English
// convention, since the pages are in English: "," between thousands, "."
// before at least two decimals (more when the value has them, as USDT may),
// then the ISO currency code: "1,500.50 RUB", "12,000.125 USDT". The code,
// not "₽", so no font is needed and a payer cannot confuse it with another
// currency sign. Copy buttons copy the bare digits ("1500.50") instead,
// which every bank app accepts.
func moneyText(d decimal.Decimal, currency string) string {
	s := string(scaled(d, 2))
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

// methodText names a payment or payout method in words; an unknown value
// is shown as it is rather than hidden.
func methodText(method string) string {
	switch strings.ToUpper(method) {
	case methodCard:
		return "Bank card"
	case methodSBP:
		return "SBP (Faster Payments)"
	case methodSIM:
		return "SIM / mobile"
	case methodCrossBorder:
		return "Cross-border transfer"
	}
	return method
}

// payerZone is the zone of the payment page's times. The payers of this
// service pay from Russian banks, so the page speaks Moscow time, which
// has been UTC+3 all year since 2014; a fixed zone needs no tzdata. The
// dashboard, read by the merchant's testers, stays in UTC like the API.
var payerZone = time.FixedZone("MSK", 3*3600)

// payBy is the valid-until line of the payment page in the payer's words:
// "Pay by 14:35 Moscow time" and, apart, "in 19 minutes". The whole
// minutes left are rounded up, so the page never says "0 minutes" while
// the payment can still be paid.
func payBy(validUntil, now time.Time) (by, left string) {
	v, n := validUntil.In(payerZone), now.In(payerZone)
	by = v.Format("15:04") + " Moscow time"
	if v.YearDay() != n.YearDay() || v.Year() != n.Year() {
		// Another day: the hour alone would mislead.
		by = v.Format("2 Jan 15:04") + " Moscow time"
	}
	return by, inWords(validUntil.Sub(now))
}

// inWords is a time span as a person says it: "in less than a minute",
// "in 1 minute", "in 19 minutes", "in 2 hours 5 minutes", or "now" when it
// has passed.
func inWords(d time.Duration) string {
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
