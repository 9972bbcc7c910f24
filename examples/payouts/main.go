// Command payouts creates a RUB payout, reads it back and lists every payout
// with paykit's AllPayouts iterator. By default it talks to the sandbox
// binary on its default address and credentials:
//
//	go run ./cmd/paykit-sandbox     # in another terminal
//	go run ./examples/payouts
//
// Flags, or the environment, point it elsewhere; see README.md.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	err := run(ctx, os.Args[1:], os.Stdout, os.Getenv)
	cancel()
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "payouts:", err)
		os.Exit(1)
	}
}

// run is main without the process.
func run(ctx context.Context, args []string, out io.Writer, getenv func(string) string) error {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("payouts", flag.ContinueOnError)
	fs.SetOutput(out)
	baseURL := fs.String("base-url", env("PAYKIT_BASE_URL", "http://127.0.0.1:8080"), "API base URL (env PAYKIT_BASE_URL)")
	apiKey := fs.String("api-key", env("PAYKIT_API_KEY", sandbox.DefaultAPIKey), "API key (env PAYKIT_API_KEY)")
	secret := fs.String("secret", env("PAYKIT_SECRET", sandbox.DefaultSecret), "signing secret (env PAYKIT_SECRET; prefer it to the flag, which ps shows)")
	extID := fs.String("ext-id", "payout-"+time.Now().UTC().Format("20060102-150405")+"-"+strings.ToLower(rand.Text()[:4]), "your id of the payout, unique")
	amount := fs.String("amount", "2500.00", "amount in RUB")
	card := fs.String("card", env("PAYKIT_PAYOUT_CARD", "2200700000000004"), "card number to pay to (env PAYKIT_PAYOUT_CARD)")
	holder := fs.String("holder", "IVAN IVANOV", "card holder's full name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	amt, err := decimal.NewFromString(*amount)
	if err != nil {
		return fmt.Errorf("-amount %q is not a number", *amount)
	}

	c, err := paykit.NewClient(*baseURL, *apiKey, paykit.HMACSigner(*secret))
	if err != nil {
		return err
	}

	// Create. CreatePayout is safe to retry: the ext_id makes sure a lost
	// answer never turns into a second payout.
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{
		ExtID:      *extID,
		Amount:     amt,
		Method:     paykit.PayoutMethodCard,
		Requisites: *card,
		HolderName: *holder,
	})
	switch {
	case errors.Is(err, paykit.ErrDuplicateExtID):
		return fmt.Errorf("a payout with ext_id %q exists already; pass another -ext-id", *extID)
	case errors.Is(err, paykit.ErrUnauthorized):
		return fmt.Errorf("%s refused the API key or signature: check -api-key and -secret", *baseURL)
	case err != nil:
		var apiErr *paykit.Error
		if !errors.As(err, &apiErr) && !errors.Is(err, paykit.ErrInvalidParameters) {
			return fmt.Errorf("%w\n(is the sandbox running? start it with: go run ./cmd/paykit-sandbox)", err)
		}
		return err
	}
	fmt.Fprintf(out, "created  %s\n", describe(po))

	// Read it back, by id.
	po, err = c.GetPayout(ctx, po.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "read     %s\n", describe(po))

	// List every payout; AllPayouts fetches the pages as the loop goes.
	n := 0
	for p, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 100}) {
		if err != nil {
			return err
		}
		n++
		fmt.Fprintf(out, "listed   %s\n", describe(&p))
	}
	fmt.Fprintf(out, "%d payout(s) in all\n", n)
	fmt.Fprintf(out, "\nOn the sandbox, play the provider with:\n  curl -X POST %s/sandbox/payouts/%s/status -H 'Content-Type: application/json' -d '{\"status\":\"completed\"}'\n", *baseURL, po.ID)
	return nil
}

// describe prints a payout without its full card or phone number.
func describe(p *paykit.Payout) string {
	s := fmt.Sprintf("%s  %-10s %s %s to %s %s, %s", p.ExtID, p.Status, p.Amount.StringFixed(2), p.Currency,
		p.Method, mask(p.Requisites), p.ID)
	if !p.CompletedAt.IsZero() {
		s += ", completed " + p.CompletedAt.Format(time.RFC3339)
	}
	return s
}

// mask keeps the last four digits of a card or phone number.
func mask(s string) string {
	var digits []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, s[i])
		}
	}
	if len(digits) < 4 {
		return "****"
	}
	return "****" + string(digits[len(digits)-4:])
}
