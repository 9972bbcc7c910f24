// Command stdout runs the quickstart's first steps with OpenTelemetry
// turned on and prints every span and the metrics to standard output, so
// you can see what otelpaykit records before wiring a real exporter:
//
//	cd otelpaykit && go run ./examples/stdout
//
// It starts the sandbox in-process on a loopback port, so it needs nothing
// but Go. The steps: list the banks, create a CARD payment, confirm it, let
// the sandbox verify it, receive the webhook (read back through the
// Client, so its call span nests under the webhook's span), and read the
// payment. In a real service, replace the stdout exporters by OTLP ones
// (go.opentelemetry.io/otel/exporters/otlp/...) and keep the rest.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/otelpaykit"
	"github.com/paykit-dev/paykit-go/sandbox"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err := run(ctx, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdout example failed:", err)
		os.Exit(1)
	}
}

// run runs the steps, writing spans, metrics and one line per step to out.
func run(ctx context.Context, w io.Writer) (err error) {
	// The span exporter writes from the webhook receiver's goroutine too.
	out := &lockedWriter{w: w}
	// 1. The providers: spans are printed as each one ends (a syncer, for
	// the demo; use sdktrace.WithBatcher in a service), metrics once, at
	// shutdown.
	res := resource.NewSchemaless(attribute.String("service.name", "paykit-stdout-example"))
	spanExp, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanExp), sdktrace.WithResource(res))
	metricExp, err := stdoutmetric.New(stdoutmetric.WithWriter(out), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)), sdkmetric.WithResource(res))
	defer func() {
		// Shutting down flushes what is left: the metrics are printed here.
		err = errors.Join(err, tp.Shutdown(context.Background()), mp.Shutdown(context.Background()))
	}()

	// 2. The sandbox, served on a loopback port.
	sb := sandbox.New(sandbox.Config{WebhookRetryWait: 10 * time.Millisecond})
	defer sb.Close()
	apiURL, stopAPI, err := serve(sb)
	if err != nil {
		return err
	}
	defer stopAPI()

	// 3. The Client, with telemetry: this is the one line otelpaykit adds.
	c, err := paykit.NewClient(apiURL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		otelpaykit.WithTelemetry(tp, mp))
	if err != nil {
		return err
	}

	// 4. The webhook receiver, instrumented.
	token := rand.Text()
	handled := make(chan *paykit.Payment, 4)
	h := &paykit.WebhookHandler{
		Token:  token,
		Client: c,
		OnPayment: func(_ context.Context, p *paykit.Payment) error {
			handled <- p
			return nil
		},
	}
	hookURL, stopHook, err := serve(otelpaykit.InstrumentWebhook(h, tp, mp))
	if err != nil {
		return err
	}
	defer stopHook()

	// 5. The quickstart's first steps.
	banks, err := c.ListBanks(ctx)
	if err != nil {
		return fmt.Errorf("list banks: %w", err)
	}
	fmt.Fprintf(out, "step: %d banks\n", len(banks))

	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{
		ExtID:             "order-" + rand.Text()[:8],
		Amount:            decimal.RequireFromString("1500.50"),
		Method:            paykit.MethodCard,
		NotifyURL:         hookURL + "/paykit/webhook",
		NotificationToken: token,
	})
	if err != nil {
		return fmt.Errorf("create payment: %w", err)
	}
	fmt.Fprintf(out, "step: payment created, %s\n", p.Status)

	if p, err = c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		return fmt.Errorf("confirm payment: %w", err)
	}
	fmt.Fprintf(out, "step: payment confirmed, %s\n", p.Status)

	// The sandbox plays the service's verification, which notifies the
	// receiver.
	if err := sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		return fmt.Errorf("verify payment: %w", err)
	}
	if err := sb.FlushWebhooks(ctx); err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	for len(handled) > 0 {
		n := <-handled
		fmt.Fprintf(out, "step: webhook handled, %s\n", n.Status)
	}

	if p, err = c.GetPayment(ctx, p.ID); err != nil {
		return fmt.Errorf("get payment: %w", err)
	}
	fmt.Fprintf(out, "step: payment read, %s\n", p.Status)
	return nil
}

// serve serves h on a loopback port until stop is called. stop also waits
// for the requests in flight, so that their spans have ended when the
// tracer provider shuts down.
func serve(h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var inFlight sync.WaitGroup
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlight.Add(1)
			defer inFlight.Done()
			h.ServeHTTP(w, r)
		})}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); inFlight.Wait() }, nil
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
