// Package sandboxcmd is the command line of the paykit sandbox: flags,
// environment variables, the configuration file and the server's life. The
// binary cmd/paykit-sandbox and the paykit CLI's "paykit sandbox" both call
// Main, so they take exactly the same flags. It serves the paykit sandbox,
// a stateful in-memory stand-in for the payment service, so that merchants
// and the SDK's examples can run the whole API offline:
//
//	go run ./cmd/paykit-sandbox [-addr 127.0.0.1:8080] [-api-key KEY] [-secret SECRET]
//	    [-payment-validity 20m] [-max-same-amount 5] [-withdrawal-fee 1.50]
//	    [-start-balance 1000.00] [-webhook-attempts 5] [-webhook-retry-wait 1s]
//	    [-allow-remote] [-log-format text|json]
//
// It serves one merchant (sandbox.DefaultMerchant) with the given
// credentials, verifying X-Signature with paykit.HMACSigner(secret), and
// prints the base URL, the credentials and the terminal ids at start. It
// binds to loopback by default because the /sandbox/ controls are
// unauthenticated, and warns on stderr when bound elsewhere. It logs one
// line per request and per webhook delivery attempt on stderr. SIGINT or
// SIGTERM shuts it down gracefully. Run it with -help for the routes, the
// controls and the inspection endpoints; the sandbox package documentation
// has the details.
package sandboxcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// Main runs the sandbox command with args (without the program name) until
// ctx ends or SIGINT or SIGTERM arrives, and returns the process exit code: 0 after a graceful
// shutdown or -help, 1 on a bad flag, a bad configuration or a failure to
// serve, the error written to stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, args, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "paykit-sandbox:", err)
		return 1
	}
	return 0
}

const routesHelp = `
API routes (signed: X-Identity and X-Signature on every request; see the SDK's HMACSigner):
  POST /v1/payments                          create a payment (JSON)
  GET  /v1/payments/{id}                     get a payment
  GET  /v1/payments/by-ext-id/{extId}        get a payment by ext_id
  POST /v1/payments/{id}/confirm             confirm (multipart/form-data, optional "attachment" image <= 10,000,000 bytes)
  POST /v1/payments/{id}/cancel              cancel a PENDING payment
  POST /v1/payments/{id}/dispute             open a dispute (JSON)
  POST /v1/payments/{id}/dispute/cancel      cancel a dispute
  POST /v1/payouts                           create a payout (JSON)
  GET  /v1/payouts                           list payouts (?status=&from=&to=&limit=&offset=)
  GET  /v1/payouts/{id}                      get a payout
  GET  /v1/payouts/by-ext-id/{extId}         get a payout by ext_id
  GET  /v1/terminals                         list terminals
  GET  /v1/balance                           total balance
  GET  /v1/banks                             list banks
  POST /v1/transfers                         move USDT between terminals (JSON)
  POST /v1/withdrawals                       withdraw USDT (JSON)
  GET  /v1/withdrawals/fee                   current withdrawal fee
  GET  /v1/withdrawals/{id}                  get a withdrawal
The whole contract: openapi.yaml at the repository root.

Controls (unsigned JSON POSTs, loopback Host only unless -allow-remote, and
Content-Type: application/json required; each answers the changed resource or {}):
  /sandbox/payments/{id}/verify          {"outcome":"completed"} or {"outcome":"cancelled"}   payment in PROCESSING
  /sandbox/payments/{id}/dispute/review  {"outcome":"approved"} or {"outcome":"rejected"}     payment in DISPUTE
  /sandbox/payouts/{id}/status           {"status":"processing"}  (or completed, failed, cancelled)
  /sandbox/withdrawals/{id}/status       {"status":"completed","tx_hash":"..."}  (or processing, failed)
  /sandbox/clock/advance                 {"seconds":3600}   expires PENDING payments past valid_until
  /sandbox/faults                        {"method":"POST","path":"/v1/transfers","mode":"drop_after","count":1}
                                         modes: error_before (status, code), drop_after, delay (delay_ms),
                                         retry_after (retry_after_s); path may use {id} segments
  /sandbox/reset                         {}   back to the starting state
A wrong transition answers 409, an unknown id 404, a foreign Host 403, a
missing JSON Content-Type 415. For example:
  curl -X POST http://127.0.0.1:8080/sandbox/payments/$ID/verify -H 'Content-Type: application/json' -d '{"outcome":"completed"}'
  curl -X POST http://127.0.0.1:8080/sandbox/clock/advance -H 'Content-Type: application/json' -d '{"seconds":1200}'
  curl -X POST http://127.0.0.1:8080/sandbox/reset -H 'Content-Type: application/json' -d '{}'

Inspection (JSON GETs, loopback Host only unless -allow-remote):
  GET /sandbox/requests   the latest requests: method, route, status, error code, duration (no headers or bodies)
  GET /sandbox/webhooks   the latest webhook deliveries with every attempt and the receiver's answer
  GET /sandbox/state      terminals with balances; payments, payouts and withdrawals counted by status
  curl http://127.0.0.1:8080/sandbox/webhooks -H 'Content-Type: application/json'

Health (no credentials, any Host): GET /healthz (up), GET /readyz (ready to serve);
"paykit-sandbox healthcheck [-addr host:port]" exits 0 only when /readyz answers 200.

The hosted payment page is GET /pay/{id}; its I-paid button confirms the payment.
In a browser, /sandbox/ui is a dashboard of all of the above (loopback Host only).
Logs: one line per request and per webhook attempt on stderr (-log-format text|json).
`

// Timeouts of the http.Server: a sandbox is often left running, so slow or
// stalled clients must not pin its connections. Reading a 10 MB receipt
// over loopback takes milliseconds; a minute leaves room for slow links.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = 2 * time.Minute // longer than any delay fault a test should inject
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	bodyTimeout       = 30 * time.Second
)

// decimalFlag is a USDT figure given on the command line.
type decimalFlag struct{ d decimal.Decimal }

func (f *decimalFlag) String() string {
	if f == nil {
		return ""
	}
	return f.d.StringFixed(max(2, -f.d.Exponent()))
}

func (f *decimalFlag) Set(s string) error {
	d, err := decimal.NewFromString(s)
	if err != nil || d.IsNegative() || !d.Equal(d.Truncate(6)) || len(s) > 40 {
		return errors.New("want a non-negative USDT amount with at most 6 decimal places")
	}
	f.d = d
	return nil
}

// run serves until ctx ends, then shuts down gracefully. It is main without
// the process: tests call it with a cancellable context. The banner goes
// to stdout; logs and warnings go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runEnv(ctx, args, os.Getenv, stdout, stderr)
}

// runEnv is run with the environment as a function, so tests set
// variables without touching the process's.
func runEnv(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("paykit-sandbox", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default: the controls are unauthenticated)")
	apiKey := fs.String("api-key", sandbox.DefaultAPIKey, "API key of the merchant (X-Identity)")
	secret := fs.String("secret", sandbox.DefaultSecret, "signing secret of the merchant (HMACSigner)")
	ttl := fs.Duration("payment-validity", sandbox.DefaultPaymentTTL, "span from created_at to valid_until of a payment")
	samePending := fs.Int("max-same-amount", sandbox.DefaultMaxSamePendingAmount,
		"PENDING payments that may share an amount before the next create answers PAY_005")
	fee := &decimalFlag{d: decimal.RequireFromString("1.50")}
	fs.Var(fee, "withdrawal-fee", "withdrawal fee of each terminal, USDT")
	balance := &decimalFlag{d: decimal.RequireFromString("1000.00")}
	fs.Var(balance, "start-balance", "starting balance of "+sandbox.DefaultMainTerminalID+", USDT")
	attempts := fs.Int("webhook-attempts", sandbox.DefaultWebhookMaxAttempts, "attempts per webhook delivery before giving up")
	retryWait := fs.Duration("webhook-retry-wait", sandbox.DefaultWebhookRetryWait, "wait after the first failed webhook attempt, doubled after each")
	allowRemote := fs.Bool("allow-remote", false,
		"let the /sandbox/ controls and inspection answer a non-loopback Host (only on a trusted network)")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	configPath := fs.String("config", "", "JSON configuration file: merchants, terminals, rates, autopilot (see the README); flags and PAYKIT_SANDBOX_* override it")
	printConfig := fs.Bool("print-config", false, "print the effective configuration, secrets masked, and exit")
	autopilot := fs.Bool("autopilot", false, "move payments, disputes, payouts and withdrawals along by themselves; test values choose outcomes")
	payerDelay := fs.Duration("autopilot-payer-delay", sandbox.DefaultPayerDelay, "autopilot: wait before a payer presses I paid (amount kopecks .11)")
	verifyDelay := fs.Duration("autopilot-verify-delay", sandbox.DefaultVerifyDelay, "autopilot: wait before a confirmed payment is verified")
	reviewDelay := fs.Duration("autopilot-review-delay", sandbox.DefaultReviewDelay, "autopilot: wait before a dispute is reviewed")
	payoutDelay := fs.Duration("autopilot-payout-delay", sandbox.DefaultPayoutDelay, "autopilot: each payout step")
	ignoreTV := fs.Bool("autopilot-ignore-test-values", false, "autopilot: default outcomes for every value, no PAY_004 by amount")
	withdrawalDelay := fs.Duration("autopilot-withdrawal-delay", sandbox.DefaultWithdrawalDelay, "autopilot: each withdrawal step")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: paykit-sandbox [flags]\n       paykit-sandbox healthcheck [-addr host:port]\n\n"+
			"Serves the paykit sandbox API on -addr. Every flag can also be given as an environment variable\n"+
			"PAYKIT_SANDBOX_<NAME> (upper case, dashes as underscores: PAYKIT_SANDBOX_API_KEY); a flag on the\n"+
			"command line wins over the variable, and both win over -config.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), routesHelp)
		fmt.Fprint(fs.Output(), "\nTest values (with -autopilot; also at /sandbox/ui/testvalues):\n")
		for _, v := range sandbox.TestValues {
			fmt.Fprintf(fs.Output(), "  %-10s %-10s %s (e.g. %s): %s\n", v.Resource, v.Field, v.Value, v.Example, v.Outcome)
		}
	}
	if len(args) > 0 && args[0] == "healthcheck" {
		return healthcheck(ctx, args[1:], getenv, stdout)
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
	if err := applyEnv(fs, getenv); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var fc FileConfig
	if *configPath != "" {
		var err error
		if fc, err = loadConfigFile(*configPath); err != nil {
			return err
		}
	}
	// A flag given explicitly (or through its variable) overrides the
	// file; the file overrides a flag's default.
	pick := func(name string, fileZero bool) bool { return set[name] || fileZero }
	if pick("addr", fc.Addr == "") {
		fc.Addr = *addr
	}
	if set["allow-remote"] {
		fc.AllowRemote = *allowRemote
	}
	if pick("log-format", fc.LogFormat == "") {
		fc.LogFormat = *logFormat
	}
	if pick("payment-validity", fc.PaymentValidity.Duration == 0) {
		fc.PaymentValidity.Duration = *ttl
	}
	if pick("max-same-amount", fc.MaxSameAmount == 0) {
		fc.MaxSameAmount = *samePending
	}
	if pick("webhook-attempts", fc.WebhookAttempts == 0) {
		fc.WebhookAttempts = *attempts
	}
	if pick("webhook-retry-wait", fc.WebhookRetryWait.Duration == 0) {
		fc.WebhookRetryWait.Duration = *retryWait
	}
	if fc.USDTRate.IsZero() {
		fc.USDTRate = sandbox.DefaultUSDTRate
	}
	ap := &fc.Autopilot
	if set["autopilot"] {
		ap.Enabled = *autopilot
	}
	if set["autopilot-ignore-test-values"] {
		ap.IgnoreTestValues = *ignoreTV
	}
	for _, d := range []struct {
		name string
		dst  *Duration
		v    time.Duration
	}{{"autopilot-payer-delay", &ap.PayerDelay, *payerDelay}, {"autopilot-verify-delay", &ap.VerifyDelay, *verifyDelay},
		{"autopilot-review-delay", &ap.ReviewDelay, *reviewDelay}, {"autopilot-payout-delay", &ap.PayoutDelay, *payoutDelay},
		{"autopilot-withdrawal-delay", &ap.WithdrawalDelay, *withdrawalDelay}} {
		if pick(d.name, d.dst.Duration == 0) {
			d.dst.Duration = d.v
		}
	}
	fromFlags := len(fc.Merchants) == 0
	if fromFlags {
		if *apiKey == "" || *secret == "" {
			return errors.New("-api-key and -secret must not be empty")
		}
		m := sandbox.DefaultMerchant(*apiKey, *secret)
		fm := FileMerchant{APIKey: *apiKey, Secret: *secret}
		for i, t := range m.Terminals {
			t.WithdrawalFee = fee.d
			if i == 0 {
				t.Balance = balance.d
			}
			fm.Terminals = append(fm.Terminals, FileTerminal{ID: t.ID, Name: t.Name, Balance: t.Balance,
				BalanceFrozen: t.BalanceFrozen, WithdrawalFee: t.WithdrawalFee, Inactive: !t.IsActive})
		}
		fc.Merchants = []FileMerchant{fm}
	} else {
		for _, name := range []string{"api-key", "secret", "start-balance", "withdrawal-fee"} {
			if set[name] {
				return fmt.Errorf("-%s cannot be combined with merchants in -config: describe them in the file", name)
			}
		}
	}
	if fc.PaymentValidity.Duration <= 0 || fc.MaxSameAmount <= 0 || fc.WebhookAttempts <= 0 || fc.WebhookRetryWait.Duration <= 0 {
		return errors.New("-payment-validity, -max-same-amount, -webhook-attempts and -webhook-retry-wait must be positive")
	}
	if !fc.USDTRate.IsPositive() {
		return errors.New("usdt_rate must be positive")
	}
	for c, r := range fc.LocalRates {
		if _, ok := sandbox.DefaultLocalRates()[c]; !ok || !r.IsPositive() {
			return fmt.Errorf("local_rates.%s: want one of TJ, KZ, UZ, KG with a positive rate", c)
		}
	}
	merchants, err := fc.merchants(getenv)
	if err != nil {
		return err
	}
	if *printConfig {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(fc.printable())
	}
	var handler slog.Handler
	switch fc.LogFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(stderr, nil)
	default:
		return fmt.Errorf("-log-format must be text or json, not %q", fc.LogFormat)
	}

	ln, err := net.Listen("tcp", fc.Addr)
	if err != nil {
		return err
	}
	sb := sandbox.New(sandbox.Config{
		Merchants:            merchants,
		PaymentTTL:           fc.PaymentValidity.Duration,
		USDTRate:             fc.USDTRate,
		LocalRates:           fc.LocalRates,
		MaxSamePendingAmount: fc.MaxSameAmount,
		WebhookMaxAttempts:   fc.WebhookAttempts,
		WebhookRetryWait:     fc.WebhookRetryWait.Duration,
		AllowRemote:          fc.AllowRemote,
		Logger:               slog.New(handler),
		RequestBodyTimeout:   bodyTimeout,
		Autopilot: sandbox.Autopilot{Enabled: ap.Enabled, PayerDelay: ap.PayerDelay.Duration, VerifyDelay: ap.VerifyDelay.Duration,
			ReviewDelay: ap.ReviewDelay.Duration, PayoutDelay: ap.PayoutDelay.Duration, WithdrawalDelay: ap.WithdrawalDelay.Duration,
			IgnoreTestValues: ap.IgnoreTestValues},
	})
	defer sb.Close()
	srv := newHTTPServer(sb)

	if w := exposureWarning(ln.Addr(), fc.AllowRemote); w != "" {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "paykit sandbox listening on %s\n", baseURL(ln.Addr()))
	for _, m := range merchants {
		// The flags' merchant is a local playground whose secret the user
		// typed; a configured team's secrets stay masked.
		sec := "****"
		if fromFlags {
			sec = m.Secret
		}
		fmt.Fprintf(stdout, "  api key:   %s\n  secret:    %s\n", m.APIKey, sec)
		for _, t := range m.Terminals {
			fmt.Fprintf(stdout, "  terminal:  %s (%s, %s USDT)\n", t.ID, t.Name, t.Balance.StringFixed(max(2, -t.Balance.Exponent())))
		}
	}
	if ap.Enabled {
		fmt.Fprintln(stdout, "  autopilot: on (test values: see sandbox.TestValues or /sandbox/ui)")
	}
	fmt.Fprintln(stdout, "  controls:  POST /sandbox/... with Content-Type: application/json; inspection: GET /sandbox/state, /sandbox/requests, /sandbox/webhooks (see -help)")

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

// newHTTPServer sets every timeout and the header cap: the zero values of
// http.Server mean "forever" and "1 MB", wrong for a server people leave
// running.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// exposureWarning is printed when the sandbox listens beyond loopback. The
// Host check on the controls stops browsers (DNS rebinding), not a program
// on the network, which can send any Host header.
func exposureWarning(a net.Addr, allowRemote bool) string {
	tcp, ok := a.(*net.TCPAddr)
	if ok && tcp.IP.IsLoopback() {
		return ""
	}
	w := "WARNING: paykit-sandbox listens on " + a.String() + ", beyond loopback: anyone who can reach it can call the API " +
		"with the printed credentials and can drive the unauthenticated /sandbox/ controls (complete payments, move the clock, " +
		"reset all state) by sending a loopback Host header"
	if allowRemote {
		w += " or, with -allow-remote, any Host at all"
	}
	return w + ". Bind to 127.0.0.1 unless this network is trusted."
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
