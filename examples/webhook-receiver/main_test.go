package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/webhooktest"
)

// The README's "Testing your receiver": the receiver's handler, fed the
// notifications webhooktest builds, accepts a payment with its token,
// refuses one without it, and takes a payout only when allowed unverified.
func TestReceiverWithWebhooktest(t *testing.T) {
	h := &paykit.WebhookHandler{Token: "demo-token", OnPayment: printPayment, OnPayout: printPayout}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	p := &paykit.Payment{ID: "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", ExtID: "order-1001", Amount: decimal.RequireFromString("1500.00"),
		Currency: "RUB", Status: paykit.PaymentStatusCompleted, Method: paykit.MethodSBP, CreatedAt: at, ValidUntil: at}
	po := &paykit.Payout{ID: "9d2a5e00-8d0b-4d7e-9b1a-2f3c4d5e6f70", ExtID: "payout-77", Amount: decimal.RequireFromString("2500.00"),
		Currency: "RUB", Status: paykit.PayoutStatusCompleted, Method: paykit.PayoutMethodSBP, CreatedAt: at}
	serve := func(token string, v any) int {
		req, err := webhooktest.NewRequest("/paykit/webhook", token, v)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := serve("demo-token", p); code != http.StatusOK {
		t.Errorf("payment with its token: %d, want 200", code)
	}
	if code := serve("", p); code != http.StatusUnauthorized {
		t.Errorf("payment without a token: %d, want 401", code)
	}
	if code := serve("", po); code != http.StatusUnauthorized {
		t.Errorf("payout without -api-url: %d, want 401", code)
	}
	h.AllowUnverifiedPayouts = true
	if code := serve("", po); code != http.StatusOK {
		t.Errorf("payout with -allow-unverified-payouts: %d, want 200", code)
	}
}
