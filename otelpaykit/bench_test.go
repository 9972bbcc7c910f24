package otelpaykit

import (
	"context"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// BenchmarkGetPayment measures what telemetry adds to a call over loopback:
// "plain" has no observer, "telemetry" records every span (sampled, no
// exporter) and metric point (a manual reader) the module makes.
func BenchmarkGetPayment(b *testing.B) {
	sb := sandbox.New(sandbox.Config{})
	srv := httptest.NewServer(sb)
	defer func() { srv.Close(); sb.Close() }()
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) }()

	ctx := context.Background()
	setup, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		b.Fatal(err)
	}
	p, err := setup.CreatePayment(ctx, paymentParams("bench-1"))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts []paykit.Option
	}{
		{"plain", nil},
		{"telemetry", []paykit.Option{WithTelemetry(tp, mp)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret), bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.GetPayment(ctx, p.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
