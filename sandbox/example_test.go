package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// start is the sandbox clock of the examples, frozen so that output is
// stable; Advance moves it.
var start = time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)

// serve starts a sandbox with a frozen clock on a loopback port and returns
// it with a client of its default merchant.
func serve() (*sandbox.Server, *paykit.Client, func()) {
	sb := sandbox.New(sandbox.Config{Now: func() time.Time { return start }})
	srv := httptest.NewServer(sb)
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		log.Fatal(err)
	}
	return sb, c, func() { srv.Close(); sb.Close() }
}

// Example runs a payment from creation to the USDT credited on the
// terminal, with the sandbox playing the service's verification.
func Example() {
	sb := sandbox.New(sandbox.Config{Now: func() time.Time { return start }})
	defer sb.Close()
	srv := httptest.NewServer(sb) // or run cmd/paykit-sandbox
	defer srv.Close()
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-1", Amount: decimal.RequireFromString("1850.00")})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil { // the payer says they paid
		log.Fatal(err)
	}
	if err := sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil { // the service finds the transfer
		log.Fatal(err)
	}
	got, err := c.GetPayment(ctx, p.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.ExtID, got.Status, got.Amount.StringFixed(2), got.Currency)
	term := sb.Terminals(sandbox.DefaultAPIKey)[0]
	fmt.Println(term.ID, term.Balance.StringFixed(2), "USDT") // 1000.00 + 1850.00 / 92.50
	// Output:
	// order-1 COMPLETED 1850.00 RUB
	// term_sandbox_main 1020.00 USDT
}

// ExampleServer_Advance expires a payment: the sandbox cancels a PENDING
// payment once its clock reaches valid_until, and a late confirm is refused.
func ExampleServer_Advance() {
	sb, c, stop := serve()
	defer stop()
	ctx := context.Background()

	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-late", Amount: decimal.NewFromInt(1000)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("valid for", p.ValidUntil.Sub(p.CreatedAt))
	sb.Advance(p.ValidUntil.Sub(sb.Now()))

	_, err = c.ConfirmPayment(ctx, p.ID, nil)
	fmt.Println("late confirm refused:", errors.Is(err, paykit.ErrPaymentNotConfirmable))
	got, err := c.GetPayment(ctx, p.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Status)
	// Output:
	// valid for 20m0s
	// late confirm refused: true
	// CANCELLED
}

// ExampleServer_InjectFault loses the answer to a payout: the sandbox
// creates it, then drops the connection. The SDK's retry is refused with
// PAY_003, which it settles by reading the payout back: one payout, no error.
func ExampleServer_InjectFault() {
	sb, c, stop := serve()
	defer stop()
	ctx := context.Background()

	err := sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payouts", Mode: sandbox.FaultDropAfter})
	if err != nil {
		log.Fatal(err)
	}
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{
		ExtID: "payout-1", Amount: decimal.RequireFromString("2500.00"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "IVAN IVANOV",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(po.ExtID, po.Status, po.Amount.StringFixed(2))
	fmt.Println("attempts:", sb.RequestCount("POST", "/v1/payouts"), "payouts:", sb.Stats(sandbox.DefaultAPIKey).Payouts)
	// Output:
	// payout-1 pending 2500.00
	// attempts: 2 payouts: 1
}

// ExampleServer_SetPayoutStatus plays the provider: the payout goes
// pending -> processing -> completed, as the next reads show.
func ExampleServer_SetPayoutStatus() {
	sb, c, stop := serve()
	defer stop()
	ctx := context.Background()

	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{
		ExtID: "payout-2", Amount: decimal.RequireFromString("700.00"),
		Method: paykit.PayoutMethodCard, Requisites: "2200123456789010", HolderName: "ANNA PETROVA",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, status := range []string{sandbox.PayoutProcessing, sandbox.PayoutCompleted} {
		if err := sb.SetPayoutStatus(po.ID, status); err != nil {
			log.Fatal(err)
		}
		got, err := c.GetPayout(ctx, po.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(got.Status, "provider order set:", got.ProviderOrderID != "", "completed:", !got.CompletedAt.IsZero())
	}
	// completed is final.
	err = sb.SetPayoutStatus(po.ID, sandbox.PayoutFailed)
	fmt.Println("completed -> failed refused:", errors.Is(err, sandbox.ErrWrongState))
	// Output:
	// processing provider order set: true completed: false
	// completed provider order set: true completed: true
	// completed -> failed refused: true
}
