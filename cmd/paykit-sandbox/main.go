// Command paykit-sandbox serves the paykit sandbox, a stateful in-memory
// stand-in for the payment service, so that merchants and the SDK's
// examples can run the whole API offline:
//
//	go run ./cmd/paykit-sandbox [-addr 127.0.0.1:8080] [-api-key KEY] [-secret SECRET]
//
// It serves one merchant (sandbox.DefaultMerchant) with the given
// credentials, verifying X-Signature with paykit.HMACSigner(secret), and
// prints the base URL, the credentials and the terminal ids at start. It
// binds to loopback by default because the /sandbox/ controls are
// unauthenticated. SIGINT or SIGTERM shuts it down gracefully. Run it with
// -help for the list of controls; the sandbox package documentation has the
// details.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paykit-sandbox:", err)
		os.Exit(1)
	}
}

const controlsHelp = `
Controls (unsigned JSON POSTs; each answers the changed resource or {}):
  /sandbox/payments/{id}/verify          {"outcome":"completed"} or {"outcome":"cancelled"}   payment in PROCESSING
  /sandbox/payments/{id}/dispute/review  {"outcome":"approved"} or {"outcome":"rejected"}     payment in DISPUTE
  /sandbox/payouts/{id}/status           {"status":"processing"}  (or completed, failed, cancelled)
  /sandbox/withdrawals/{id}/status       {"status":"completed","tx_hash":"..."}  (or processing, failed)
  /sandbox/clock/advance                 {"seconds":3600}   expires PENDING payments past valid_until
  /sandbox/faults                        {"method":"POST","path":"/v1/transfers","mode":"drop_after","count":1}
                                         modes: error_before (status, code), drop_after, delay (delay_ms),
                                         retry_after (retry_after_s); path may use {id} segments
  /sandbox/reset                         {}   back to the starting state
A wrong transition answers 409, an unknown id 404.
The hosted payment page is GET /pay/{id}; its I-paid button confirms the payment.
`

// run serves until ctx ends, then shuts down gracefully. It is main without
// the process: tests call it with a cancellable context.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("paykit-sandbox", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default: the controls are unauthenticated)")
	apiKey := fs.String("api-key", sandbox.DefaultAPIKey, "API key of the merchant (X-Identity)")
	secret := fs.String("secret", sandbox.DefaultSecret, "signing secret of the merchant (HMACSigner)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: paykit-sandbox [flags]\n\nServes the paykit sandbox API on -addr.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), controlsHelp)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *apiKey == "" || *secret == "" {
		return errors.New("-api-key and -secret must not be empty")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	merchant := sandbox.DefaultMerchant(*apiKey, *secret)
	sb := sandbox.New(sandbox.Config{Merchants: []sandbox.Merchant{merchant}})
	defer sb.Close()
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second}

	fmt.Fprintf(stdout, "paykit sandbox listening on %s\n", baseURL(ln.Addr()))
	fmt.Fprintf(stdout, "  api key:   %s\n  secret:    %s\n", *apiKey, *secret)
	for _, t := range merchant.Terminals {
		fmt.Fprintf(stdout, "  terminal:  %s (%s, %s USDT)\n", t.ID, t.Name, t.Balance.StringFixed(2))
	}
	fmt.Fprintln(stdout, "  controls:  POST /sandbox/... (see -help)")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// A short grace period for requests in flight, then close whatever is
	// left: a connection that never sends a request (a browser's
	// preconnect to the payment page) would otherwise hold Shutdown for the
	// whole timeout, and an interrupt the user asked for is not a failure.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// baseURL is the URL clients use: an unspecified listen address (":8080",
// "0.0.0.0:8080") is reachable on loopback.
func baseURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		port := 0
		if ok {
			port = tcp.Port
		}
		return fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	return "http://" + tcp.String()
}
