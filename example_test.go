package paykit_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// exampleNow is the sandbox clock of the examples, so that printed times are
// stable.
var exampleNow = time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)

// newSandboxClient starts an in-process sandbox, which stands in for the
// service in these examples, and returns a client of it. In your code the
// client comes from paykit.NewClient with your service's URL and credentials.
func newSandboxClient() (*paykit.Client, *sandbox.Server, func()) {
	sb := sandbox.New(sandbox.Config{Now: func() time.Time { return exampleNow }})
	srv := httptest.NewServer(sb)
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		log.Fatal(err)
	}
	return c, sb, func() { sb.Close(); srv.Close() }
}

func ExampleNewClient() {
	// The sandbox, served over HTTP, plays the service here.
	sb := sandbox.New(sandbox.Config{})
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()

	// One client per API key, shared by all goroutines.
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		paykit.WithMaxRetries(3),
		paykit.WithUserAgent("shop/1.2"),
	)
	if err != nil {
		log.Fatal(err)
	}

	total, err := c.GetBalance(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance:", total.Balance.StringFixed(2), total.Currency)
	// Output:
	// balance: 1000.00 USDT
}

func ExampleClient_CreatePayment() {
	c, _, stop := newSandboxClient()
	defer stop()

	p, err := c.CreatePayment(context.Background(), paykit.CreatePaymentParams{
		ExtID:  "order-1001",                         // your order id: also what makes retries safe
		Amount: decimal.RequireFromString("1500.50"), // RUB
		Method: paykit.MethodCard,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Show the payer p.Requisites (or redirect them to p.PaymentURL).
	fmt.Println(p.ExtID, p.Status, p.Amount.StringFixed(2), p.Currency)
	fmt.Println("pay by", p.Requisites.Type, "at", p.Requisites.BankName, "until", p.ValidUntil.Format(time.RFC3339))
	fmt.Println("usdt_rate:", p.USDTRate.StringFixed(2))
	// Output:
	// order-1001 PENDING 1500.50 RUB
	// pay by card at Sberbank until 2025-03-14T12:20:00Z
	// usdt_rate: 92.50
}

func Example_errorHandling() {
	c, _, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	params := paykit.CreatePaymentParams{ExtID: "order-1001", Amount: decimal.NewFromInt(1500)}
	if _, err := c.CreatePayment(ctx, params); err != nil {
		log.Fatal(err)
	}

	// The same order again: the API refuses it with PAY_003.
	_, err := c.CreatePayment(ctx, params)
	var apiErr *paykit.Error
	switch {
	case errors.Is(err, paykit.ErrDuplicateExtID) && errors.As(err, &apiErr):
		fmt.Println("already exists:", apiErr.ExtID(), apiErr.Code, apiErr.HTTPStatus)
	case errors.Is(err, paykit.ErrNoRequisites):
		fmt.Println("try another bank or method")
	case err != nil:
		log.Fatal(err)
	}

	// Invalid input is refused before anything is sent.
	_, err = c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-1002", Amount: decimal.NewFromInt(50)})
	var invalid *paykit.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println("invalid:", invalid.Field, errors.Is(err, paykit.ErrInvalidParameters))
	}
	// Output:
	// already exists: order-1001 PAY_003 409
	// invalid: amount true
}

func ExampleClient_AllPayouts() {
	c, _, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	for i, amount := range []string{"2500.00", "1200.00", "800.00"} {
		_, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{
			ExtID:      fmt.Sprintf("payout-%d", i+1),
			Amount:     decimal.RequireFromString(amount),
			Method:     paykit.PayoutMethodSBP,
			Requisites: "+79001234567",
			HolderName: "IVAN IVANOV",
			Bank:       "sber",
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	// Pages of two are fetched as the loop goes; an error ends it.
	for po, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusPending, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(po.ExtID, po.Status, po.Amount.StringFixed(2), po.Currency)
	}
	// Output:
	// payout-1 pending 2500.00 RUB
	// payout-2 pending 1200.00 RUB
	// payout-3 pending 800.00 RUB
}

func ExampleWebhookHandler() {
	c, sb, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	h := &paykit.WebhookHandler{
		Token:  "my-notification-token", // the NotificationToken of your payments
		Client: c,                       // act on the API's copy of each payment, read back by id
		OnPayment: func(ctx context.Context, p *paykit.Payment) error {
			// Deliveries can repeat: record (p.ID, p.Status) once, then act.
			fmt.Println("webhook:", p.ExtID, p.Status)
			return nil
		},
	}
	mux := http.NewServeMux()
	mux.Handle("/paykit/webhook", h)
	receiver := httptest.NewServer(mux)
	defer receiver.Close()

	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{
		ExtID:             "order-1001",
		Amount:            decimal.NewFromInt(1500),
		NotifyURL:         receiver.URL + "/paykit/webhook",
		NotificationToken: "my-notification-token",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		log.Fatal(err)
	}
	// The sandbox delivers webhooks in the background: wait for them.
	if err := sb.FlushWebhooks(ctx); err != nil {
		log.Fatal(err)
	}
	// Play the service's verification of the transfer.
	if err := sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		log.Fatal(err)
	}
	if err := sb.FlushWebhooks(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// webhook: order-1001 PROCESSING
	// webhook: order-1001 COMPLETED
}
