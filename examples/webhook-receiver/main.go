// Command webhook-receiver is a small HTTP server that receives paykit
// webhook notifications with paykit.WebhookHandler and prints each one.
//
//	go run ./examples/webhook-receiver -token my-notification-token
//
// With -api-url (and -api-key, -secret) it reads every notified payment or
// payout back from the API and prints the API's copy, which is also what
// makes payout notifications acceptable. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paykit-dev/paykit-go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// env returns the environment variable, or def when it is unset, so every
// flag can also come from the environment (secrets stay out of ps output).
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func run() error {
	addr := flag.String("addr", env("PAYKIT_WEBHOOK_ADDR", "127.0.0.1:8090"), "listen address (env PAYKIT_WEBHOOK_ADDR)")
	path := flag.String("path", env("PAYKIT_WEBHOOK_PATH", "/paykit/webhook"), "path to receive notifications on (env PAYKIT_WEBHOOK_PATH)")
	token := flag.String("token", env("PAYKIT_NOTIFICATION_TOKEN", ""), "expected X-Notification-Token, the NotificationToken of your payments (env PAYKIT_NOTIFICATION_TOKEN)")
	apiURL := flag.String("api-url", env("PAYKIT_BASE_URL", ""), "API base URL; enables reading each notified resource back (env PAYKIT_BASE_URL)")
	apiKey := flag.String("api-key", env("PAYKIT_API_KEY", ""), "API key, with -api-url (env PAYKIT_API_KEY)")
	secret := flag.String("secret", env("PAYKIT_SECRET", ""), "signing secret, with -api-url (env PAYKIT_SECRET)")
	allowUnverified := flag.Bool("allow-unverified-payouts", false, "accept payout notifications without -api-url (anyone can forge them)")
	debug := flag.Bool("debug", false, "log every notification the handler sees, at debug level")
	flag.Parse()

	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	h := &paykit.WebhookHandler{
		Token:                  *token,
		OnPayment:              printPayment,
		OnPayout:               printPayout,
		AllowUnverifiedPayouts: *allowUnverified,
		Logger:                 logger,
	}
	if *apiURL != "" {
		c, err := paykit.NewClient(*apiURL, *apiKey, paykit.HMACSigner(*secret), paykit.WithLogger(logger))
		if err != nil {
			return err
		}
		h.Client = c
	}
	if *token == "" {
		logger.Warn("no -token: every payment notification will be refused with 401")
	}
	if h.Client == nil && !*allowUnverified {
		logger.Warn("no -api-url: payout notifications will be refused with 401 (they carry no token)")
	}

	mux := http.NewServeMux()
	mux.Handle(*path, h)
	srv := &http.Server{
		Addr:              *addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// The callback may read the resource back from the API, with retries.
		WriteTimeout: 60 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Printf("listening on http://%s%s (fetch-back: %v)\n", *addr, *path, h.Client != nil)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// printPayment prints a payment notification. A real receiver would record
// (p.ID, p.Status) once and act on it; deliveries can repeat. Requisites are
// not printed: they are a payer's card or phone number.
func printPayment(_ context.Context, p *paykit.Payment) error {
	fmt.Printf("payment %s ext_id=%q status=%s amount=%s %s method=%s\n",
		p.ID, p.ExtID, p.Status, p.Amount.String(), p.Currency, p.Method)
	return nil
}

// printPayout prints a payout notification, without the recipient's
// requisites.
func printPayout(_ context.Context, p *paykit.Payout) error {
	fmt.Printf("payout %s ext_id=%q status=%s amount=%s %s method=%s\n",
		p.ID, p.ExtID, p.Status, p.Amount.String(), p.Currency, p.Method)
	return nil
}
