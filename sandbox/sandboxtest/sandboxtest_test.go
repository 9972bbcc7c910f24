package sandboxtest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/sandbox/sandboxtest"
)

func TestNewGivesASandboxAClientAndTheWebhooks(t *testing.T) {
	env := sandboxtest.New(t)
	ctx := context.Background()
	p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "o-1", Amount: decimal.NewFromInt(1500),
		NotifyURL: env.WebhookURL + "/orders", NotificationToken: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := env.Sandbox.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	env.Flush()
	got := env.Deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
	for i, want := range []string{"PROCESSING", "COMPLETED"} {
		var body struct{ ID, Status string }
		if err := json.Unmarshal(got[i].Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.ID != p.ID || body.Status != want || got[i].Token != "tok-1" || got[i].Path != "/orders" {
			t.Fatalf("delivery %d: %+v %s", i, body, got[i].Path)
		}
	}
}

func TestNewWithConfigAndClientOptions(t *testing.T) {
	m := sandbox.DefaultMerchant("pk_other", "sk_other")
	env := sandboxtest.New(t, sandboxtest.WithConfig(sandbox.Config{Merchants: []sandbox.Merchant{m}}),
		sandboxtest.WithClientOptions(paykit.WithMaxRetries(0)))
	if err := env.Client.CheckCredentials(context.Background()); err != nil {
		t.Fatalf("the client does not speak for the configured merchant: %v", err)
	}
}
