package main

// ADAPTER: `paykit sandbox` parses the flags of cmd/paykit-sandbox (single
// dash, Go flag syntax) and serves sandbox.New on them. cmd/paykit-sandbox
// is package main and cannot be imported; when its flag parsing moves to a
// shared package (internal/sandboxcmd, Main(ctx, args, stdout, stderr) int),
// this file becomes a call to it.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/paykit-dev/paykit-go/sandbox"
)

func sandboxCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "sandbox [-addr 127.0.0.1:8080] [paykit-sandbox flags]",
		Short: "Run the local sandbox (the flags of paykit-sandbox; -help lists them)",
		Long: "sandbox serves a stateful stand-in for the payment service, exactly as paykit-sandbox does, with\n" +
			"the same flags. The built-in profile \"sandbox\" talks to it at " + sandboxBaseURL + ".",
		Example:            "  paykit sandbox &\n  paykit --profile sandbox doctor",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serveSandbox(cmd.Context(), args, a.env.stdout, a.env.stderr)
		},
	}
}

// sandboxDecimal is a USDT figure flag, as paykit-sandbox takes it.
type sandboxDecimal struct{ d decimal.Decimal }

func (f *sandboxDecimal) String() string {
	if f == nil {
		return ""
	}
	return money(f.d)
}

func (f *sandboxDecimal) Set(s string) error {
	d, err := decimal.NewFromString(s)
	if err != nil || !plainDecimal.MatchString(s) {
		return errors.New("want a non-negative USDT amount with at most 6 decimal places")
	}
	f.d = d
	return nil
}

func serveSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paykit sandbox", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default: the controls are unauthenticated)")
	apiKey := fs.String("api-key", sandbox.DefaultAPIKey, "API key of the merchant (X-Identity)")
	secret := fs.String("secret", sandbox.DefaultSecret, "signing secret of the merchant (HMACSigner)")
	ttl := fs.Duration("payment-validity", sandbox.DefaultPaymentTTL, "span from created_at to valid_until of a payment")
	samePending := fs.Int("max-same-amount", sandbox.DefaultMaxSamePendingAmount, "PENDING payments that may share an amount before PAY_005")
	fee := &sandboxDecimal{d: decimal.RequireFromString("1.50")}
	fs.Var(fee, "withdrawal-fee", "withdrawal fee of each terminal, USDT")
	balance := &sandboxDecimal{d: decimal.RequireFromString("1000.00")}
	fs.Var(balance, "start-balance", "starting balance of "+sandbox.DefaultMainTerminalID+", USDT")
	attempts := fs.Int("webhook-attempts", sandbox.DefaultWebhookMaxAttempts, "attempts per webhook delivery before giving up")
	retryWait := fs.Duration("webhook-retry-wait", sandbox.DefaultWebhookRetryWait, "wait after the first failed webhook attempt, doubled after each")
	allowRemote := fs.Bool("allow-remote", false, "let the /sandbox/ controls answer a non-loopback Host (only on a trusted network)")
	controlToken := fs.String("control-token", os.Getenv("PAYKIT_SANDBOX_CONTROL_TOKEN"),
		"token required on /sandbox/ controls, inspection and dashboard (Authorization: Bearer, or the dashboard's login); "+
			"required with -allow-remote; default $PAYKIT_SANDBOX_CONTROL_TOKEN")
	unsigned := fs.Bool("accept-unsigned", false,
		"accept the merchant's requests without a valid X-Signature (for a validation proxy that re-serialises bodies); loud in the log and the dashboard")
	hookTotal := fs.Int("webhook-concurrency", sandbox.DefaultWebhookConcurrency, "webhook attempts in flight at once")
	hookPer := fs.Int("webhook-per-receiver", sandbox.DefaultWebhookPerReceiver, "webhook attempts in flight to one receiver (host:port)")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %v", fs.Args())
	}
	if *apiKey == "" || *secret == "" {
		return usagef("-api-key and -secret must not be empty")
	}
	if *ttl <= 0 || *samePending <= 0 || *attempts <= 0 || *retryWait <= 0 || *hookTotal <= 0 || *hookPer <= 0 {
		return usagef("-payment-validity, -max-same-amount, -webhook-attempts, -webhook-retry-wait, " +
			"-webhook-concurrency and -webhook-per-receiver must be positive")
	}
	if *allowRemote && *controlToken == "" {
		return usagef("-allow-remote needs a control token: set -control-token or PAYKIT_SANDBOX_CONTROL_TOKEN " +
			"(anyone who reaches a remote sandbox could otherwise reset it and settle its money)")
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(stderr, nil)
	default:
		return usagef("-log-format must be text or json, not %q", *logFormat)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	merchant := sandbox.DefaultMerchant(*apiKey, *secret)
	for i := range merchant.Terminals {
		merchant.Terminals[i].WithdrawalFee = fee.d
	}
	merchant.Terminals[0].Balance = balance.d
	merchant.AcceptUnsigned = *unsigned
	sb := sandbox.New(sandbox.Config{
		Merchants: []sandbox.Merchant{merchant}, PaymentTTL: *ttl, MaxSamePendingAmount: *samePending,
		WebhookMaxAttempts: *attempts, WebhookRetryWait: *retryWait, AllowRemote: *allowRemote,
		ControlToken: *controlToken, ListenAddrs: []string{ln.Addr().String()},
		WebhookConcurrency: *hookTotal, WebhookPerReceiver: *hookPer,
		Logger: slog.New(handler), RequestBodyTimeout: 30 * time.Second,
	})
	defer sb.Close()
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if tcp, ok := ln.Addr().(*net.TCPAddr); (!ok || !tcp.IP.IsLoopback()) && *controlToken == "" {
		fmt.Fprintln(stderr, "WARNING: the sandbox listens on "+ln.Addr().String()+", beyond loopback: anyone who can reach it can use "+
			"its well-known credentials and drive its controls. Bind to 127.0.0.1 unless this network is trusted.")
	}
	// The banner names the profile rather than printing the secret: the
	// sandbox's credentials are the defaults the "sandbox" profile holds.
	fmt.Fprintf(stdout, "paykit sandbox listening on http://%s\n", ln.Addr())
	if *addr == "127.0.0.1:8080" && *apiKey == sandbox.DefaultAPIKey && *secret == sandbox.DefaultSecret {
		fmt.Fprintln(stdout, "  use it with: paykit --profile sandbox <command>")
	}
	for _, t := range merchant.Terminals {
		fmt.Fprintf(stdout, "  terminal:  %s (%s, %s USDT)\n", t.ID, t.Name, money(t.Balance))
	}
	if *controlToken != "" {
		fmt.Fprintln(stdout, "  control token: set; send it as Authorization: Bearer TOKEN, or log in at /sandbox/login")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
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
