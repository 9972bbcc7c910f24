// Command quickstart runs the whole merchant flow of paykit-go and prints one
// short line per step:
//
//	go run ./examples/quickstart
//
// With no configuration it starts the sandbox in-process, serves it on a
// loopback port and talks to it over real HTTP, so it needs nothing but Go.
// With PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET set it targets that
// service instead; use a test account. The steps that only the sandbox can
// play (the service's verification of a payment, waiting for webhooks) are
// then skipped with a note, and so are the steps that send money to third
// parties unless you name the destination:
//
//	PAYKIT_NOTIFY_URL          public URL that reaches this program's webhook
//	                           receiver (a tunnel to PAYKIT_WEBHOOK_ADDR)
//	PAYKIT_WEBHOOK_ADDR        where the receiver listens, default 127.0.0.1:8090
//	PAYKIT_PAYOUT_CARD         card number for the payout step
//	PAYKIT_WITHDRAWAL_ADDRESS  TRC-20 wallet for the withdrawal step
//
// It exits 0 when every step succeeded and 1 with the failing step otherwise.
// The flow itself is run in flow.go, which main_test.go also calls.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, err := run(ctx, os.Stdout, os.Getenv)
	cancel()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart failed:", err)
		os.Exit(1)
	}
}
