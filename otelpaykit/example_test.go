package otelpaykit_test

import (
	"context"
	"log"
	"net/http"

	"go.opentelemetry.io/otel"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/otelpaykit"
)

// A Client traced and measured with the global providers, which the
// program's OpenTelemetry setup (an OTLP exporter, say) has installed.
func ExampleWithTelemetry() {
	c, err := paykit.NewClient("https://api.example.com", "pk_live_…", paykit.HMACSigner("sk_live_…"),
		otelpaykit.WithTelemetry(otel.GetTracerProvider(), otel.GetMeterProvider()))
	if err != nil {
		log.Fatal(err)
	}
	_ = c // every call now makes a paykit.<Operation> span and its attempt spans
}

// The webhook receiver, instrumented: mount the returned handler, not h.
func ExampleInstrumentWebhook() {
	h := &paykit.WebhookHandler{
		Token: "the NotificationToken your payments are created with",
		OnPayment: func(ctx context.Context, p *paykit.Payment) error {
			return nil // record p.ID and p.Status once, idempotently
		},
	}
	mux := http.NewServeMux()
	mux.Handle("/paykit/webhook", otelpaykit.InstrumentWebhook(h, nil, nil)) // nil: the global providers
}
