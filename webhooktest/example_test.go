package webhooktest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/webhooktest"
)

// A receiver's unit test: the handler gets the notification the service
// would send for a completed payment, with the payment's token.
func ExampleNewRequest() {
	h := &paykit.WebhookHandler{
		Token: "demo-token",
		OnPayment: func(_ context.Context, p *paykit.Payment) error {
			fmt.Println("paid:", p.ExtID, p.Status, p.Amount.StringFixed(2))
			return nil
		},
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	req, err := webhooktest.NewRequest("/paykit/webhook", "demo-token", &paykit.Payment{
		ID: "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", ExtID: "order-1001", Amount: decimal.RequireFromString("1500.00"),
		Currency: "RUB", Status: paykit.PaymentStatusCompleted, Method: paykit.MethodSBP, CreatedAt: at, ValidUntil: at.Add(20 * time.Minute),
	})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println("answered", rec.Code)
	// Output:
	// paid: order-1001 COMPLETED 1500.00
	// answered 200
}
