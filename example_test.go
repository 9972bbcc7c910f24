package paykit_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// exampleNow is the sandbox clock of the examples, so that printed times are
// stable.
var exampleNow = time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)

// newSandboxClient starts an in-process sandbox, which stands in for the
// service in these examples, and returns a client of it. In your code the
// client comes from paykit.NewClient with your service's URL and credentials.
func newSandboxClient() (*paykit.Client, *sandbox.Server, func()) {
	sb := sandbox.New(sandbox.Config{Now: func() time.Time { return exampleNow }})
	srv := httptest.NewServer(sb)
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		log.Fatal(err)
	}
	return c, sb, func() { sb.Close(); srv.Close() }
}

func ExampleNewClient() {
	// The sandbox, served over HTTP, plays the service here.
	sb := sandbox.New(sandbox.Config{})
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()

	// One client per API key, shared by all goroutines.
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
		paykit.WithMaxRetries(3),
		paykit.WithUserAgent("shop/1.2"),
	)
	if err != nil {
		log.Fatal(err)
	}

	total, err := c.GetBalance(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("balance:", total.Balance.StringFixed(2), total.Currency)
	// Output:
	// balance: 1000.00 USDT
}

func ExampleClient_CreatePayment() {
	c, _, stop := newSandboxClient()
	defer stop()

	p, err := c.CreatePayment(context.Background(), paykit.CreatePaymentParams{
		ExtID:  "order-1001",                         // your order id: also what makes retries safe
		Amount: decimal.RequireFromString("1500.50"), // RUB
		Method: paykit.MethodCard,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Show the payer p.Requisites (or redirect them to p.PaymentURL).
	fmt.Println(p.ExtID, p.Status, p.Amount.StringFixed(2), p.Currency)
	fmt.Println("pay by", p.Requisites.Type, "at", p.Requisites.BankName, "until", p.ValidUntil.Format(time.RFC3339))
	fmt.Println("usdt_rate:", p.USDTRate.StringFixed(2))
	// Output:
	// order-1001 PENDING 1500.50 RUB
	// pay by card at Sberbank until 2025-03-14T12:20:00Z
	// usdt_rate: 92.50
}

func Example_errorHandling() {
	c, _, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	params := paykit.CreatePaymentParams{ExtID: "order-1001", Amount: decimal.NewFromInt(1500)}
	if _, err := c.CreatePayment(ctx, params); err != nil {
		log.Fatal(err)
	}

	// The same order again: the API refuses it with PAY_003.
	_, err := c.CreatePayment(ctx, params)
	var apiErr *paykit.Error
	switch {
	case errors.Is(err, paykit.ErrDuplicateExtID) && errors.As(err, &apiErr):
		fmt.Println("already exists:", apiErr.ExtID(), apiErr.Code, apiErr.HTTPStatus)
	case errors.Is(err, paykit.ErrNoRequisites):
		fmt.Println("try another bank or method")
	case err != nil:
		log.Fatal(err)
	}

	// Invalid input is refused before anything is sent.
	_, err = c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "order-1002", Amount: decimal.NewFromInt(50)})
	var invalid *paykit.ValidationError
	if errors.As(err, &invalid) {
		fmt.Println("invalid:", invalid.Field, errors.Is(err, paykit.ErrInvalidParameters))
	}
	// Output:
	// already exists: order-1001 PAY_003 409
	// invalid: amount true
}

func ExampleClient_AllPayouts() {
	c, _, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	for i, amount := range []string{"2500.00", "1200.00", "800.00"} {
		_, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{
			ExtID:      fmt.Sprintf("payout-%d", i+1),
			Amount:     decimal.RequireFromString(amount),
			Method:     paykit.PayoutMethodSBP,
			Requisites: "+79001234567",
			HolderName: "IVAN IVANOV",
			Bank:       "sber",
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	// Pages of two are fetched as the loop goes; an error ends it.
	for po, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Status: paykit.PayoutStatusPending, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(po.ExtID, po.Status, po.Amount.StringFixed(2), po.Currency)
	}
	// Output:
	// payout-1 pending 2500.00 RUB
	// payout-2 pending 1200.00 RUB
	// payout-3 pending 800.00 RUB
}

func ExampleWebhookHandler() {
	c, sb, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	h := &paykit.WebhookHandler{
		Token:  "my-notification-token", // the NotificationToken of your payments
		Client: c,                       // act on the API's copy of each payment, read back by id
		OnPayment: func(ctx context.Context, p *paykit.Payment) error {
			// Deliveries can repeat: record (p.ID, p.Status) once, then act.
			fmt.Println("webhook:", p.ExtID, p.Status)
			return nil
		},
	}
	mux := http.NewServeMux()
	mux.Handle("/paykit/webhook", h)
	receiver := httptest.NewServer(mux)
	defer receiver.Close()

	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{
		ExtID:             "order-1001",
		Amount:            decimal.NewFromInt(1500),
		NotifyURL:         receiver.URL + "/paykit/webhook",
		NotificationToken: "my-notification-token",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		log.Fatal(err)
	}
	// The sandbox delivers webhooks in the background: wait for them.
	if err := sb.FlushWebhooks(ctx); err != nil {
		log.Fatal(err)
	}
	// Play the service's verification of the transfer.
	if err := sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		log.Fatal(err)
	}
	if err := sb.FlushWebhooks(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// webhook: order-1001 PROCESSING
	// webhook: order-1001 COMPLETED
}

func ExampleClient_CreateTransfer() {
	c, sb, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	tr, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{
		FromTerminalID: sandbox.DefaultMainTerminalID,
		ToTerminalID:   sandbox.DefaultReserveTerminalID,
		Amount:         decimal.RequireFromString("10.00"), // USDT, no fee
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("moved", tr.Amount.StringFixed(2), tr.Currency, "success:", tr.Success)

	// Transfers have no idempotency key: when the answer is lost, the SDK
	// does not send the transfer again, and you must not either before
	// looking. Here the sandbox applies the next transfer, then drops the
	// connection.
	if err := sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter}); err != nil {
		log.Fatal(err)
	}
	before, err := terminalBalance(ctx, c, sandbox.DefaultReserveTerminalID)
	if err != nil {
		log.Fatal(err)
	}
	amount := decimal.RequireFromString("5.00")
	_, err = c.CreateTransfer(ctx, paykit.CreateTransferParams{
		FromTerminalID: sandbox.DefaultMainTerminalID,
		ToTerminalID:   sandbox.DefaultReserveTerminalID,
		Amount:         amount,
	})
	switch {
	case errors.Is(err, paykit.ErrUnknownOutcome):
		fmt.Println("outcome unknown:", true)
		// Settle it by reading the balances, then decide.
		after, err := terminalBalance(ctx, c, sandbox.DefaultReserveTerminalID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("applied:", after.Equal(before.Add(amount)), "- reserve holds", after.StringFixed(2), "USDT")
	case errors.Is(err, paykit.ErrInsufficientFunds):
		fmt.Println("not enough USDT on the source terminal")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("moved", amount.StringFixed(2), "USDT")
	}
	// Output:
	// moved 10.00 USDT success: true
	// outcome unknown: true
	// applied: true - reserve holds 15.00 USDT
}

// terminalBalance reads one terminal's available USDT from the API.
func terminalBalance(ctx context.Context, c *paykit.Client, id string) (decimal.Decimal, error) {
	terminals, err := c.ListTerminals(ctx)
	if err != nil {
		return decimal.Decimal{}, err
	}
	for _, t := range terminals {
		if t.ID == id {
			return t.Balance, nil
		}
	}
	return decimal.Decimal{}, fmt.Errorf("terminal %s not found", id)
}

func ExampleClient_CreateWithdrawal() {
	c, sb, stop := newSandboxClient()
	defer stop()
	ctx := context.Background()

	fee, err := c.GetWithdrawalFee(ctx)
	if err != nil {
		log.Fatal(err)
	}
	w, err := c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{
		TerminalID:            sandbox.DefaultMainTerminalID,
		Amount:                decimal.RequireFromString("100.00"),
		Address:               "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", // TRC-20 wallet
		SubtractFeeFromAmount: true,                                 // the wallet receives amount - fee
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fee:", fee.Fee.StringFixed(2), fee.Currency)
	fmt.Println(w.Status, w.Amount.StringFixed(2), "USDT, the wallet receives", w.Amount.Sub(w.Fee).StringFixed(2))

	// A withdrawal whose answer is lost: the sandbox applies it, then drops
	// the connection. Never withdraw again before reading the terminal:
	// a pending withdrawal shows as frozen USDT.
	if err := sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/withdrawals", Mode: sandbox.FaultDropAfter}); err != nil {
		log.Fatal(err)
	}
	_, err = c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{
		TerminalID:            sandbox.DefaultMainTerminalID,
		Amount:                decimal.RequireFromString("50.00"),
		Address:               "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
		SubtractFeeFromAmount: true,
	})
	switch {
	case errors.Is(err, paykit.ErrUnknownOutcome):
		fmt.Println("outcome unknown:", true)
		terminals, err := c.ListTerminals(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("frozen on", terminals[0].ID+":", terminals[0].BalanceFrozen.StringFixed(2), "USDT (100.00 + 50.00: applied)")
	case errors.Is(err, paykit.ErrInsufficientFunds):
		fmt.Println("not enough USDT on the terminal")
	case err != nil:
		log.Fatal(err)
	}
	// Output:
	// fee: 1.50 USDT
	// pending 100.00 USDT, the wallet receives 98.50
	// outcome unknown: true
	// frozen on term_sandbox_main: 150.00 USDT (100.00 + 50.00: applied)
}

// ExampleSignerFunc plugs in a signing scheme other than HMACSigner's. The
// sandbox is told to verify with the same scheme, as the service would.
func ExampleSignerFunc() {
	const apiKey, secret = "pk_example", "sk_example_secret"
	// A made-up scheme: base64 HMAC-SHA512 over "METHOD URI" and the body.
	signer := paykit.SignerFunc(func(r *http.Request, body []byte) (string, error) {
		m := hmac.New(sha512.New, []byte(secret))
		m.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
		m.Write(body) // the exact bytes sent; empty for a GET
		return base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
	})

	merchant := sandbox.DefaultMerchant(apiKey, secret)
	merchant.Signer = signer
	sb := sandbox.New(sandbox.Config{Merchants: []sandbox.Merchant{merchant}})
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()
	ctx := context.Background()

	c, err := paykit.NewClient(srv.URL, apiKey, signer)
	if err != nil {
		log.Fatal(err)
	}
	// At startup: does the service accept this key and scheme?
	if err := c.CheckCredentials(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("custom scheme accepted")

	// The SDK's default scheme is refused by this service.
	def, err := paykit.NewClient(srv.URL, apiKey, paykit.HMACSigner(secret))
	if err != nil {
		log.Fatal(err)
	}
	err = def.CheckCredentials(ctx)
	fmt.Println("HMACSigner refused:", errors.Is(err, paykit.ErrUnauthorized))
	// Output:
	// custom scheme accepted
	// HMACSigner refused: true
}

func ExampleClient_CheckCredentials() {
	sb := sandbox.New(sandbox.Config{})
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()
	ctx := context.Background()

	for _, secret := range []string{sandbox.DefaultSecret, "sk_mistyped_secret"} {
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(secret))
		if err != nil {
			log.Fatal(err)
		}
		// Run once at startup, before taking payments.
		err = c.CheckCredentials(ctx)
		var apiErr *paykit.Error
		switch {
		case err == nil:
			fmt.Println("credentials accepted")
		case errors.Is(err, paykit.ErrUnauthorized) && errors.As(err, &apiErr):
			// err's text says what to check: key, secret, signing scheme.
			fmt.Println("credentials refused, HTTP", apiErr.HTTPStatus)
		default:
			fmt.Println("service not reachable; credentials not checked")
		}
	}
	// Output:
	// credentials accepted
	// credentials refused, HTTP 401
}

// checkoutAPI is the part of the client that an order service uses. The
// merchant declares it in their own package, next to the code that needs
// it: *paykit.Client satisfies it, and tests pass a fake instead.
type checkoutAPI interface {
	CreatePayment(ctx context.Context, params paykit.CreatePaymentParams) (*paykit.Payment, error)
	GetPayment(ctx context.Context, id string) (*paykit.Payment, error)
}

// The compiler checks that the real client fits the interface.
var _ checkoutAPI = (*paykit.Client)(nil)

// startCheckout is merchant code under test: it depends on checkoutAPI,
// not on *paykit.Client.
func startCheckout(ctx context.Context, api checkoutAPI, orderID string, amount decimal.Decimal) (string, error) {
	p, err := api.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: orderID, Amount: amount})
	if err != nil {
		return "", fmt.Errorf("checkout %s: %w", orderID, err)
	}
	return p.PaymentURL, nil
}

// fakeCheckout is the merchant's test double.
type fakeCheckout struct {
	created []paykit.CreatePaymentParams
	err     error
}

func (f *fakeCheckout) CreatePayment(_ context.Context, params paykit.CreatePaymentParams) (*paykit.Payment, error) {
	if f.err != nil {
		return nil, f.err
	}
	f.created = append(f.created, params)
	return &paykit.Payment{ExtID: params.ExtID, Amount: params.Amount, Status: paykit.PaymentStatusPending,
		PaymentURL: "https://pay.test/" + params.ExtID}, nil
}

func (f *fakeCheckout) GetPayment(context.Context, string) (*paykit.Payment, error) {
	return nil, &paykit.Error{Code: "PAY_006", HTTPStatus: http.StatusNotFound}
}

// Example_mockingTheClient shows the consumer-defined interface pattern for
// testing merchant code without a server.
func Example_mockingTheClient() {
	ctx := context.Background()
	fake := &fakeCheckout{}
	url, err := startCheckout(ctx, fake, "order-1", decimal.RequireFromString("1500.50"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(url, len(fake.created), fake.created[0].Amount.StringFixed(2))

	// A fake can return the SDK's own errors, which match its sentinels.
	fake.err = &paykit.Error{Code: "PAY_004", HTTPStatus: http.StatusServiceUnavailable}
	_, err = startCheckout(ctx, fake, "order-2", decimal.NewFromInt(500))
	fmt.Println("no requisites:", errors.Is(err, paykit.ErrNoRequisites))

	// In production the same function takes the real client.
	c, _, stop := newSandboxClient()
	defer stop()
	url, err = startCheckout(ctx, c, "order-3", decimal.NewFromInt(500))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("real client:", strings.Contains(url, "/pay/"))
	// Output:
	// https://pay.test/order-1 1 1500.50
	// no requisites: true
	// real client: true
}
