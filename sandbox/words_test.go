package sandbox

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestMoneyText(t *testing.T) {
	for _, c := range []struct{ in, cur, want string }{
		{"0", "RUB", "0.00 RUB"},
		{"100", "RUB", "100.00 RUB"},
		{"999.9", "RUB", "999.90 RUB"},
		{"1500.5", "RUB", "1,500.50 RUB"},
		{"300000", "RUB", "300,000.00 RUB"},
		{"1234567.891", "USDT", "1,234,567.891 USDT"},
		{"-1000", "USDT", "-1,000.00 USDT"},
		{"12000.5", "", "12,000.50"},
	} {
		if got := moneyText(decimal.RequireFromString(c.in), c.cur); got != c.want {
			t.Errorf("moneyText(%s, %q) = %q, want %q", c.in, c.cur, got, c.want)
		}
	}
}

func TestMethodText(t *testing.T) {
	for in, want := range map[string]string{"CARD": "Bank card", "SBP": "SBP (Faster Payments)", "SIM": "SIM / mobile",
		"CROSS_BORDER": "Cross-border transfer", "card": "Bank card", "sbp": "SBP (Faster Payments)", "NEW": "NEW"} {
		if got := methodText(in); got != want {
			t.Errorf("methodText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPayBy(t *testing.T) {
	now := time.Date(2026, 3, 2, 11, 15, 0, 0, time.UTC) // 14:15 in Moscow
	for _, c := range []struct {
		left        time.Duration
		by, inWords string
	}{
		{20 * time.Minute, "14:35 Moscow time", "in 20 minutes"},
		{19*time.Minute + 1*time.Second, "14:34 Moscow time", "in 20 minutes"},
		{time.Minute, "14:16 Moscow time", "in 1 minute"},
		{30 * time.Second, "14:15 Moscow time", "in less than a minute"},
		{2*time.Hour + 5*time.Minute, "16:20 Moscow time", "in 2 hours 5 minutes"},
		{time.Hour, "15:15 Moscow time", "in 1 hour"},
		{10 * time.Hour, "3 Mar 00:15 Moscow time", "in 10 hours"},
		{-time.Minute, "14:14 Moscow time", "now"},
	} {
		by, left := payBy(now.Add(c.left), now)
		if by != c.by || left != c.inWords {
			t.Errorf("payBy(+%v) = %q, %q; want %q, %q", c.left, by, left, c.by, c.inWords)
		}
	}
}

// The cross-border page says which amount in which currency to send, big
// and copyable, with the RUB it is worth beside it; times are in Moscow
// time, never an RFC 3339 token.
func TestPaymentPageCrossBorder(t *testing.T) {
	base := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, Config{Now: func() time.Time { return base }})
	p := e.createPayment(`{"ext_id":"cb-1","amount":15000.50,"method":"CROSS_BORDER","country":"KZ"}`)
	eq(t, p.str("requisites", "currency"), "KZT")
	_, _, body := e.uiGet("/pay/" + p.str("id"))
	wantIn(t, body,
		`<strong id="amount">84,002.80 KZT</strong>`,
		`data-copy="84002.80" data-what="Amount"`,
		`Send KZT, not roubles: <span class="nowrap">84,002.80 KZT</span> is the equivalent of <span class="nowrap">15,000.50 RUB</span>.`,
		`<dd id="method">Cross-border transfer</dd>`,
		`Pay by <strong id="pay-by">13:20 Moscow time</strong> <span id="time-left">(in 20 minutes)</span>`,
		`Transfer exactly <strong class="nowrap">84,002.80 KZT</strong>`,
		`<title>Test payment: 84,002.80 KZT to Sandbox merchant · order cb-1</title>`)
	wantNotIn(t, body, "2026-03-02T", "CROSS_BORDER")
	_, _, body = e.uiGet("/sandbox/ui?refresh=0")
	wantIn(t, body, `<td class="num">15,000.50 RUB<br><small class="local">sent as 84,002.80 KZT</small></td>`,
		"<td>Cross-border transfer</td>")

	e.sb.Advance(19*time.Minute + 30*time.Second)
	_, _, body = e.uiGet("/pay/" + p.str("id"))
	wantIn(t, body, `(in less than a minute)`)
}
