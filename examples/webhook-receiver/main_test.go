package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/sandbox/sandboxtest"
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

// The README's "deliveries can repeat, arrive late or out of order": a
// receiver that reads each notified payment back (Client set) and applies a
// status once per payment survives a sandbox whose every delivery is
// duplicated and half are held back behind the next one
// (Config.WebhookFaults, the -webhook-faults flag): what it applied is
// each payment's real history, once each, and it ends at the API's state.
func TestReceiverSurvivesDeliveryFaults(t *testing.T) {
	ctx := context.Background()
	env := sandboxtest.New(t, sandboxtest.WithConfig(sandbox.Config{
		WebhookFaults: sandbox.WebhookFaults{Duplicate: 1, Reorder: 0.5, Seed: 42}}))
	var (
		mu      sync.Mutex
		applied = map[string][]paykit.PaymentStatus{} // payment id -> statuses applied, in order
	)
	h := &paykit.WebhookHandler{Token: "demo-token", Client: env.Client,
		OnPayment: func(_ context.Context, p *paykit.Payment) error {
			mu.Lock()
			defer mu.Unlock()
			seen := applied[p.ID]
			for _, s := range seen {
				if s == p.Status {
					return nil // a repeat: already applied
				}
			}
			applied[p.ID] = append(seen, p.Status)
			return nil
		}}
	recv := httptest.NewServer(h)
	defer recv.Close()

	var ids []string
	for i, end := range []string{"complete", "cancel", "complete"} {
		p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: fmt.Sprintf("faults-%d", i),
			Amount: decimal.RequireFromString("1500.00"), Method: paykit.MethodCard, NotifyURL: recv.URL, NotificationToken: "demo-token"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
		if end == "cancel" {
			_, err = env.Client.CancelPayment(ctx, p.ID)
		} else if _, err = env.Client.ConfirmPayment(ctx, p.ID, nil); err == nil {
			err = env.Sandbox.VerifyPayment(p.ID, sandbox.OutcomeCompleted)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Sandbox.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	dup, reordered := 0, 0
	for _, d := range env.Sandbox.Deliveries() {
		for _, f := range d.Faults {
			switch f {
			case "duplicate":
				dup++
			case "reorder":
				reordered++
			}
		}
	}
	if dup == 0 || reordered == 0 {
		t.Fatalf("the faults did not happen: %d duplicated, %d reordered deliveries", dup, reordered)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		p, err := env.Client.GetPayment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := applied[id]
		if len(got) == 0 || got[len(got)-1] != p.Status {
			t.Errorf("payment %s: applied %v, the API says %s", id, got, p.Status)
		}
	}
}
