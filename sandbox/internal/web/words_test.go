package web

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
		if got := MoneyText(decimal.RequireFromString(c.in), c.cur); got != c.want {
			t.Errorf("MoneyText(%s, %q) = %q, want %q", c.in, c.cur, got, c.want)
		}
	}
}

func TestMethodText(t *testing.T) {
	for in, want := range map[string]string{"CARD": "Bank card", "SBP": "SBP (Faster Payments)", "SIM": "SIM / mobile",
		"CROSS_BORDER": "Cross-border transfer", "card": "Bank card", "sbp": "SBP (Faster Payments)", "NEW": "NEW"} {
		if got := MethodText(in); got != want {
			t.Errorf("MethodText(%q) = %q, want %q", in, got, want)
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
		by, left := PayBy(now.Add(c.left), now)
		if by != c.by || left != c.inWords {
			t.Errorf("PayBy(+%v) = %q, %q; want %q, %q", c.left, by, left, c.by, c.inWords)
		}
	}
}
