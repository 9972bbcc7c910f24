package sandbox

import (
	"context"
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// Config.Banks replaces the bank list: GET /v1/banks answers it, a payment
// picks its first active domestic bank or the one named, an inactive one
// answers PAY_004, and New refuses a repeated code.
func TestConfigBanks(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Config{Banks: []Bank{{Code: "team", Name: "Team Bank", IsActive: true, Country: "RU"},
		{Code: "shut", Name: "Shut Bank", IsActive: false, Country: "RU"}}})
	c, err := paykit.NewClient(e.ts.URL, e.key, paykit.HMACSigner(e.sec), paykit.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ListBanks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Code != "team" || got[0].Name != "Team Bank" || !got[0].IsActive || got[1].Code != "shut" || got[1].IsActive {
		t.Fatalf("banks %+v", got)
	}
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "b-1", Amount: decimal.NewFromInt(1500), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if p.Requisites.BankCode != "team" || p.Requisites.BankName != "Team Bank" {
		t.Fatalf("requisites %+v", p.Requisites)
	}
	_, err = c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "b-2", Amount: decimal.NewFromInt(1500), Method: paykit.MethodCard, Bank: "shut"})
	var pe *paykit.Error
	if !errors.As(err, &pe) || pe.Code != "PAY_004" {
		t.Fatalf("inactive bank: %v, want PAY_004", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("New accepted a repeated bank code")
		}
	}()
	New(Config{Banks: []Bank{{Code: "x"}, {Code: "x"}}})
}
