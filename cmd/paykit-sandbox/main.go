// Command paykit-sandbox serves the paykit sandbox, a stateful stand-in for
// the payment service, so that merchants, their staging backends and the
// SDK's examples can run the whole API offline:
//
//	go run ./cmd/paykit-sandbox [-addr 127.0.0.1:8080] [-api-key KEY] [-secret SECRET]
//	    [-payment-validity 20m] [-max-same-amount 5] [-withdrawal-fee 1.50]
//	    [-start-balance 1000.00] [-webhook-attempts 5] [-webhook-retry-wait 1s]
//	    [-allow-remote -control-token TOKEN] [-log-format text|json]
//	    [-autopilot [-autopilot-verify-delay 10s ...]] [-config FILE] [-print-config]
//	go run ./cmd/paykit-sandbox healthcheck [-addr host:port]
//	paykit-sandbox -version
//
// Without -config it serves one merchant (sandbox.DefaultMerchant) with the
// given credentials, verifying X-Signature with paykit.HMACSigner(secret),
// and prints the base URL, the credentials and the terminal ids at start;
// -config FILE describes several merchants, banks, rates, webhooks and the
// autopilot. Every flag also reads PAYKIT_SANDBOX_<NAME>. It binds to
// loopback by default, and a remote sandbox needs a control token. It logs
// one line per request and per webhook delivery attempt on stderr. SIGINT
// or SIGTERM shuts it down gracefully: requests in progress finish and
// answer (for up to 25 s), connections without one are closed after a
// second, and it exits 0. Run it with -help for the routes,
// the controls, the inspection endpoints and the autopilot's test values;
// the paykit tool's "paykit sandbox" takes the same flags (both run
// internal/sandboxcli). -version prints the module version the go command
// recorded: a tag or pseudo-version when installed with go install or taken
// from a release, "(devel)" when built from a working tree.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/paykit-dev/paykit-go/internal/sandboxcli"
	_ "github.com/paykit-dev/paykit-go/sandbox/sqlite" // -db: the SQLite store
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sandboxcli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, sandboxcli.Options{Name: "paykit-sandbox"}); err != nil {
		fmt.Fprintln(os.Stderr, "paykit-sandbox:", err)
		var usage *sandboxcli.UsageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
