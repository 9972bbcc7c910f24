package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// Result is the end state of a run, for tests and for anyone who wants to
// check what the quickstart did.
type Result struct {
	// Sandbox is true when the run used the in-process sandbox.
	Sandbox bool
	// Payment is the CARD payment, read back at the end (COMPLETED on the
	// sandbox); CrossBorder the CROSS_BORDER one, cancelled and disputed.
	Payment, CrossBorder *paykit.Payment
	// Webhooks are the notifications the receiver accepted, in order.
	Webhooks []Delivery
	// Terminal balances by terminal id: at the start, after the payment was
	// credited, after the transfer and after the withdrawal.
	Start, Credited, Transferred, Withdrawn map[string]paykit.Terminal
	// Transfer moved USDT from its FromTerminalID to its ToTerminalID.
	Transfer *paykit.Transfer
	// Withdrawal left WithdrawalTerminal; it is still pending.
	Withdrawal         *paykit.Withdrawal
	WithdrawalTerminal string
	// Payouts are the payouts this run created, as AllPayouts listed them.
	Payouts []paykit.Payout
	// DuplicateErr is the error of creating the CARD payment a second time.
	DuplicateErr error
}

// Delivery is one webhook notification the receiver accepted.
type Delivery struct {
	Kind   string // "payment" or "payout"
	ID     string
	ExtID  string
	Status string
}

// Amounts and destinations of the flow. The sandbox accepts any destination;
// against a real service, payouts and withdrawals need PAYKIT_PAYOUT_CARD
// and PAYKIT_WITHDRAWAL_ADDRESS.
var (
	cardAmount       = decimal.RequireFromString("1500.50")
	crossAmount      = decimal.RequireFromString("2500.00")
	payoutAmount     = decimal.RequireFromString("2500.00")
	transferAmount   = decimal.RequireFromString("10.00")
	withdrawalAmount = decimal.RequireFromString("5.00")
)

const (
	sandboxPayoutCard = "2200700000000004"
	sandboxWallet     = "TQuickstartSandboxWallet00000000001"
	webhookPath       = "/paykit/webhook"
)

// flow carries what the steps share.
type flow struct {
	ctx   context.Context
	out   *syncWriter
	env   func(string) string
	c     *paykit.Client
	sb    *sandbox.Server // nil against a real service
	res   *Result
	n     int    // step number
	sfx   string // ext_id suffix, unique per run against a real service
	token string // NotificationToken of this run's payments
	hook  string // NotifyURL, "" when webhooks are skipped
	mu    sync.Mutex
}

// run runs the quickstart, writing its narrative to out. env reads the
// configuration (os.Getenv in main); with PAYKIT_BASE_URL, PAYKIT_API_KEY
// and PAYKIT_SECRET all empty it runs against an in-process sandbox.
func run(ctx context.Context, out io.Writer, env func(string) string) (*Result, error) {
	f := &flow{ctx: ctx, out: &syncWriter{w: out}, env: env, res: &Result{}, token: rand.Text()}
	cleanup, err := f.setup()
	defer cleanup()
	if err != nil {
		return f.res, err
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"list banks", f.banks},
		{"create payments", f.createPayments},
		{"confirm payment", f.confirm},
		{"verify payment", f.verify},
		{"cancel and dispute", f.cancelAndDispute},
		{"payouts", f.payouts},
		{"transfer", f.transfer},
		{"withdrawal", f.withdraw},
		{"typed errors", f.typedErrors},
		{"summary", f.summary},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return f.res, fmt.Errorf("%s: %w", s.name, err)
		}
		if err := s.fn(); err != nil {
			return f.res, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	f.say("\nDone: every step succeeded.")
	return f.res, nil
}

// setup makes the client, the sandbox when no service is configured, and
// the webhook receiver. cleanup is always safe to call.
func (f *flow) setup() (cleanup func(), err error) {
	var closers []func()
	cleanup = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	base, key, secret := f.env("PAYKIT_BASE_URL"), f.env("PAYKIT_API_KEY"), f.env("PAYKIT_SECRET")
	switch {
	case base == "" && key == "" && secret == "":
		f.res.Sandbox = true
		f.sb = sandbox.New(sandbox.Config{WebhookRetryWait: 10 * time.Millisecond})
		closers = append(closers, f.sb.Close)
		sbURL, stop, err := serve("127.0.0.1:0", f.sb, false)
		if err != nil {
			return cleanup, fmt.Errorf("start the sandbox: %w", err)
		}
		closers = append(closers, stop)
		base, key, secret = sbURL, sandbox.DefaultAPIKey, sandbox.DefaultSecret
		f.say("paykit quickstart against the in-process sandbox at %s", base)
		f.say("(set PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET to target a service)")
	case base == "" || key == "" || secret == "":
		return cleanup, errors.New("set all of PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET, or none to use the sandbox")
	default:
		f.sfx = "-" + time.Now().UTC().Format("20060102-150405")
		f.say("paykit quickstart against %s (use a test account)", base)
	}
	if f.c, err = paykit.NewClient(base, key, paykit.HMACSigner(secret), paykit.WithUserAgent("paykit-quickstart")); err != nil {
		return cleanup, err
	}

	receiver := &paykit.WebhookHandler{
		Token:     f.token,
		Client:    f.c, // act on the API's copy of what was notified
		OnPayment: f.onPayment,
		OnPayout:  f.onPayout,
	}
	mux := http.NewServeMux()
	if f.sb != nil {
		mux.Handle(webhookPath, receiver)
		hookURL, stop, err := serve("127.0.0.1:0", mux, false)
		if err != nil {
			return cleanup, fmt.Errorf("start the webhook receiver: %w", err)
		}
		closers = append(closers, stop)
		f.hook = hookURL + webhookPath
		f.say("webhook receiver at %s", f.hook)
		f.say("(a paykit.WebhookHandler: it checks the token and reads each notified resource back from the API)")
		return cleanup, nil
	}
	notify := f.env("PAYKIT_NOTIFY_URL")
	if notify == "" {
		f.say("note: webhooks skipped; set PAYKIT_NOTIFY_URL to a public URL that reaches PAYKIT_WEBHOOK_ADDR (default 127.0.0.1:8090)")
		return cleanup, nil
	}
	u, err := url.Parse(notify)
	if err != nil || u.Host == "" {
		return cleanup, errors.New("PAYKIT_NOTIFY_URL is not an absolute URL")
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	mux.Handle(path, receiver)
	addr := f.env("PAYKIT_WEBHOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8090"
	}
	_, stop, err := serve(addr, mux, true)
	if err != nil {
		return cleanup, fmt.Errorf("start the webhook receiver: %w", err)
	}
	closers = append(closers, stop)
	f.hook = notify
	f.say("webhook receiver on %s%s, notified at PAYKIT_NOTIFY_URL", addr, path)
	return cleanup, nil
}

func (f *flow) banks() error {
	f.step("List banks")
	banks, err := f.c.ListBanks(f.ctx)
	if err != nil {
		return err
	}
	var active []string
	for _, b := range banks {
		if b.IsActive {
			active = append(active, b.Code)
		}
	}
	shown := active
	if len(shown) > 6 {
		shown = append(shown[:6:6], "…")
	}
	f.say("   %d banks, %d active: %s", len(banks), len(active), strings.Join(shown, ", "))
	return nil
}

func (f *flow) createPayments() error {
	f.step("Create a CARD payment and a CROSS_BORDER payment")
	var err error
	if f.res.Start, err = f.terminals(); err != nil {
		return err
	}
	p, err := f.c.CreatePayment(f.ctx, paykit.CreatePaymentParams{
		ExtID:             "order-1001" + f.sfx,
		Amount:            cardAmount,
		Method:            paykit.MethodCard,
		ClientID:          "customer-42",
		NotifyURL:         f.hook,
		NotificationToken: f.token,
	})
	if err != nil {
		return err
	}
	f.res.Payment = p
	f.say("   %s: %s %s RUB by %s, pay to %s %s at %s (%s)", p.ExtID, p.Status, money(p.Amount), p.Method,
		p.Requisites.Type, mask(p.Requisites.Value), p.Requisites.BankName, p.Requisites.Holder)
	f.say("     payment_url %s", p.PaymentURL)
	f.say("     valid_until %s (%s from creation), usdt_rate %s RUB", p.ValidUntil.Format(time.RFC3339),
		p.ValidUntil.Sub(p.CreatedAt).Round(time.Second), money(p.USDTRate))

	x, err := f.c.CreatePayment(f.ctx, paykit.CreatePaymentParams{
		ExtID:             "order-1002" + f.sfx,
		Amount:            crossAmount,
		Method:            paykit.MethodCrossBorder,
		Country:           paykit.CountryTJ,
		NotifyURL:         f.hook,
		NotificationToken: f.token,
	})
	if err != nil {
		return err
	}
	f.res.CrossBorder = x
	r := x.Requisites
	f.say("   %s: %s %s RUB by %s = %s %s, pay to %s %s at %s (%s, %s)", x.ExtID, x.Status, money(x.Amount), x.Method,
		money(r.AmountLocal), r.Currency, r.Type, mask(r.Value), r.BankName, r.BankCode, r.Country)
	f.say("     payment_url %s", x.PaymentURL)
	f.say("     valid_until %s, usdt_rate %s RUB", x.ValidUntil.Format(time.RFC3339), money(x.USDTRate))
	return nil
}

func (f *flow) confirm() error {
	f.step("Confirm the CARD payment with a receipt image")
	receipt, err := receiptPNG()
	if err != nil {
		return err
	}
	p, err := f.c.ConfirmPayment(f.ctx, f.res.Payment.ID, &paykit.Attachment{
		Filename: "receipt.png",
		Content:  bytes.NewReader(receipt),
	})
	if err != nil {
		return err
	}
	f.say("   %s: %s (%d-byte PNG sent) %q", p.ExtID, p.Status, len(receipt), p.Message)
	return f.flush()
}

func (f *flow) verify() error {
	f.step("Let the service verify the transfer")
	if f.sb == nil {
		f.say("   note: skipped; the service verifies on its own once the payer has really paid")
		return f.readBack()
	}
	if err := f.sb.VerifyPayment(f.res.Payment.ID, sandbox.OutcomeCompleted); err != nil {
		return err
	}
	f.say("   sandbox control VerifyPayment(%s): transfer found", f.res.Payment.ExtID)
	if err := f.flush(); err != nil {
		return err
	}
	if err := f.readBack(); err != nil {
		return err
	}
	p := f.res.Payment
	if p.Status != paykit.PaymentStatusCompleted {
		return fmt.Errorf("payment %s is %s, want COMPLETED", p.ExtID, p.Status)
	}
	f.say("   GetPayment(%s): %s", p.ExtID, p.Status)
	return f.credited()
}

// readBack refreshes the CARD payment, and the balances after crediting.
func (f *flow) readBack() error {
	p, err := f.c.GetPayment(f.ctx, f.res.Payment.ID)
	if err != nil {
		return err
	}
	f.res.Payment = p
	f.res.Credited, err = f.terminals()
	return err
}

func (f *flow) credited() error {
	p := f.res.Payment
	for id, now := range f.res.Credited {
		before, ok := f.res.Start[id]
		if !ok || now.Balance.Equal(before.Balance) {
			continue
		}
		f.say("   terminal %s credited: %s -> %s USDT (+%s = %s RUB / %s, rounded half up)", id,
			money(before.Balance), money(now.Balance), money(now.Balance.Sub(before.Balance)),
			money(p.Amount), money(p.USDTRate))
	}
	return nil
}

func (f *flow) cancelAndDispute() error {
	f.step("Cancel the CROSS_BORDER payment, then open and cancel a dispute on it")
	id := f.res.CrossBorder.ID
	p, err := f.c.CancelPayment(f.ctx, id)
	if err != nil {
		return err
	}
	f.say("   CancelPayment: %s", p.Status)
	if err := f.flush(); err != nil {
		return err
	}
	p, err = f.c.OpenDispute(f.ctx, id, paykit.OpenDisputeParams{
		Amount:     crossAmount,
		ReceiptURL: "https://shop.example/receipts/order-1002.png",
		Comment:    "the payer sent a bank receipt",
	})
	if err != nil {
		return err
	}
	f.say("   OpenDispute: %s, disputed amount %s RUB", p.Status, money(p.Dispute.Amount.Decimal))
	if err := f.flush(); err != nil {
		return err
	}
	p, err = f.c.CancelDispute(f.ctx, id)
	if err != nil {
		return err
	}
	f.say("   CancelDispute: %s", p.Status)
	if err := f.flush(); err != nil {
		return err
	}
	f.res.CrossBorder, err = f.c.GetPayment(f.ctx, id)
	return err
}

func (f *flow) payouts() error {
	f.step("Create a payout and list payouts with AllPayouts")
	card := sandboxPayoutCard
	if f.sb == nil {
		if card = f.env("PAYKIT_PAYOUT_CARD"); card == "" {
			f.say("   note: skipped; a payout sends real money: set PAYKIT_PAYOUT_CARD to the card to pay")
			return nil
		}
	}
	po, err := f.c.CreatePayout(f.ctx, paykit.CreatePayoutParams{
		ExtID:      "payout-2001" + f.sfx,
		Amount:     payoutAmount,
		Method:     paykit.PayoutMethodCard,
		Requisites: card,
		HolderName: "IVAN IVANOV",
		NotifyURL:  f.hook,
	})
	if err != nil {
		return err
	}
	f.say("   %s: %s %s RUB to card %s", po.ExtID, po.Status, money(po.Amount), mask(po.Requisites))
	if f.sb != nil {
		if err := f.sb.SetPayoutStatus(po.ID, sandbox.PayoutCompleted); err != nil {
			return err
		}
		f.say("   sandbox control SetPayoutStatus(%s, completed): the provider paid", po.ExtID)
		if err := f.flush(); err != nil {
			return err
		}
	}
	seen := 0
	for p, err := range f.c.AllPayouts(f.ctx, paykit.ListPayoutsParams{Limit: 50}) {
		if err != nil {
			return err
		}
		seen++
		if p.ID == po.ID {
			f.res.Payouts = append(f.res.Payouts, p)
			f.say("   AllPayouts: %s %s %s RUB, provider order %q", p.ExtID, p.Status, money(p.Amount), p.ProviderOrderID)
		}
	}
	if len(f.res.Payouts) != 1 {
		return fmt.Errorf("AllPayouts listed %s %d times, want once", po.ExtID, len(f.res.Payouts))
	}
	f.say("   AllPayouts: %d payout(s) listed in all", seen)
	return nil
}

func (f *flow) transfer() error {
	f.step("Transfer USDT between two terminals")
	from, to := f.pickTerminals(transferAmount)
	if from == "" {
		f.say("   note: skipped; it needs two active terminals and %s USDT on one of them", money(transferAmount))
		f.res.Transferred = f.res.Credited
		return nil
	}
	t, err := f.c.CreateTransfer(f.ctx, paykit.CreateTransferParams{FromTerminalID: from, ToTerminalID: to, Amount: transferAmount})
	if err != nil {
		return err
	}
	f.res.Transfer = t
	if f.res.Transferred, err = f.terminals(); err != nil {
		return err
	}
	before, after := f.res.Credited, f.res.Transferred
	f.say("   %s USDT %s -> %s, success=%v, no fee", money(t.Amount), from, to, t.Success)
	for _, id := range []string{from, to} {
		f.say("   %s: %s -> %s USDT", id, money(before[id].Balance), money(after[id].Balance))
	}
	return nil
}

func (f *flow) withdraw() error {
	f.step("Query the withdrawal fee and withdraw with subtract_fee_from_amount")
	fee, err := f.c.GetWithdrawalFee(f.ctx)
	if err != nil {
		return err
	}
	f.say("   GetWithdrawalFee: %s %s per withdrawal", money(fee.Fee), fee.Currency)
	address := sandboxWallet
	if f.sb == nil {
		if address = f.env("PAYKIT_WITHDRAWAL_ADDRESS"); address == "" {
			f.say("   note: skipped; a withdrawal sends real USDT: set PAYKIT_WITHDRAWAL_ADDRESS to your TRC-20 wallet")
			f.res.Withdrawn = f.res.Transferred
			return nil
		}
	}
	// Withdraw from the transfer's destination when there was a transfer.
	from := ""
	if f.res.Transfer != nil {
		from = f.res.Transfer.ToTerminalID
	} else if from, _ = f.pickTerminals(withdrawalAmount); from == "" {
		f.say("   note: skipped; no active terminal holds %s USDT", money(withdrawalAmount))
		f.res.Withdrawn = f.res.Transferred
		return nil
	}
	w, err := f.c.CreateWithdrawal(f.ctx, paykit.CreateWithdrawalParams{
		TerminalID: from, Amount: withdrawalAmount, Address: address, SubtractFeeFromAmount: true,
	})
	if err != nil {
		return err
	}
	if w, err = f.c.GetWithdrawal(f.ctx, w.ID); err != nil {
		return err
	}
	f.res.Withdrawal, f.res.WithdrawalTerminal = w, from
	if f.res.Withdrawn, err = f.terminals(); err != nil {
		return err
	}
	before, after := f.res.Transferred[from], f.res.Withdrawn[from]
	f.say("   withdrawal %s: %s USDT, fee %s, the wallet receives %s", w.Status, money(w.Amount), money(w.Fee), money(w.Amount.Sub(w.Fee)))
	f.say("   %s: available %s -> %s, frozen %s -> %s USDT", from, money(before.Balance), money(after.Balance),
		money(before.BalanceFrozen), money(after.BalanceFrozen))
	return nil
}

func (f *flow) typedErrors() error {
	f.step("Handle typed errors")
	p := f.res.Payment
	_, err := f.c.CreatePayment(f.ctx, paykit.CreatePaymentParams{ExtID: p.ExtID, Amount: cardAmount})
	f.res.DuplicateErr = err
	var apiErr *paykit.Error
	switch {
	case errors.Is(err, paykit.ErrDuplicateExtID) && errors.As(err, &apiErr):
		f.say("   CreatePayment(%s) again: errors.Is(err, paykit.ErrDuplicateExtID); *paykit.Error %s, HTTP %d, ext_id %s",
			p.ExtID, apiErr.Code, apiErr.HTTPStatus, apiErr.ExtID())
	case err == nil:
		return fmt.Errorf("a second payment with ext_id %s was accepted", p.ExtID)
	default:
		return fmt.Errorf("want ErrDuplicateExtID, got %w", err)
	}

	_, err = f.c.CreatePayment(f.ctx, paykit.CreatePaymentParams{ExtID: "order-1003" + f.sfx, Amount: decimal.NewFromInt(50)})
	var vErr *paykit.ValidationError
	if !errors.As(err, &vErr) || !errors.Is(err, paykit.ErrInvalidParameters) {
		return fmt.Errorf("want a *paykit.ValidationError for 50 RUB, got %v", err)
	}
	f.say("   CreatePayment(50 RUB): *paykit.ValidationError on %q before sending (errors.Is ErrInvalidParameters): %v", vErr.Field, err)
	return nil
}

func (f *flow) summary() error {
	f.step("Final state")
	if err := f.flush(); err != nil {
		return err
	}
	b, err := f.c.GetBalance(f.ctx)
	if err != nil {
		return err
	}
	f.say("   %s %s, %s %s", f.res.Payment.ExtID, f.res.Payment.Status, f.res.CrossBorder.ExtID, f.res.CrossBorder.Status)
	f.say("   GetBalance: %s %s available, %s frozen, over all terminals", money(b.Balance), b.Currency, money(b.BalanceFrozen))
	f.mu.Lock()
	n := len(f.res.Webhooks)
	f.mu.Unlock()
	f.say("   webhooks accepted: %d", n)
	return nil
}

// onPayment is the receiver's callback. With WebhookHandler.Client set, p is
// the API's copy, read back by the notified id. A real receiver records
// (p.ID, p.Status) once and acts on it: deliveries can repeat.
func (f *flow) onPayment(_ context.Context, p *paykit.Payment) error {
	f.record(Delivery{Kind: "payment", ID: p.ID, ExtID: p.ExtID, Status: string(p.Status)})
	f.say("   webhook: payment %s %s", p.ExtID, p.Status)
	return nil
}

func (f *flow) onPayout(_ context.Context, p *paykit.Payout) error {
	f.record(Delivery{Kind: "payout", ID: p.ID, ExtID: p.ExtID, Status: string(p.Status)})
	f.say("   webhook: payout %s %s", p.ExtID, p.Status)
	return nil
}

func (f *flow) record(d Delivery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.res.Webhooks = append(f.res.Webhooks, d)
}

// flush waits until the sandbox has delivered every queued webhook, so the
// receiver's lines appear right after the step that caused them. Against a
// real service notifications arrive whenever the service sends them.
func (f *flow) flush() error {
	if f.sb == nil {
		return nil
	}
	return f.sb.FlushWebhooks(f.ctx)
}

// terminals snapshots the balances by terminal id.
func (f *flow) terminals() (map[string]paykit.Terminal, error) {
	ts, err := f.c.ListTerminals(f.ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]paykit.Terminal, len(ts))
	for _, t := range ts {
		m[t.ID] = t
	}
	return m, nil
}

// pickTerminals returns the active terminal with the largest balance, if it
// holds at least amount, and another active terminal ("" when there is none).
// On the sandbox these are the default main and reserve terminals.
func (f *flow) pickTerminals(amount decimal.Decimal) (from, to string) {
	if f.sb != nil {
		return sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID
	}
	var best *paykit.Terminal
	for _, t := range f.res.Credited {
		if t.IsActive && (best == nil || t.Balance.GreaterThan(best.Balance)) {
			best = &t
		}
	}
	if best == nil || best.Balance.LessThan(amount) {
		return "", ""
	}
	for id, t := range f.res.Credited {
		if t.IsActive && id != best.ID {
			return best.ID, id
		}
	}
	return best.ID, ""
}

func (f *flow) step(title string) {
	f.n++
	f.say("\n%d. %s", f.n, title)
}

func (f *flow) say(format string, args ...any) {
	fmt.Fprintf(f.out, format+"\n", args...)
}

// money prints an amount with two decimals: decimal's String drops
// trailing zeros (1500.50 would print as 1500.5).
func money(d decimal.Decimal) string { return d.StringFixed(2) }

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

// receiptPNG draws a small image to send as the transfer receipt.
func receiptPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for y := range 16 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{R: uint8(8 * x), G: uint8(16 * y), B: 160, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// serve serves h on addr over real HTTP and returns its base URL and a stop
// function. A graceful stop lets requests in flight finish (up to 5 s);
// otherwise stop closes every connection at once, which is right once all
// the work is done: http.Server.Shutdown would wait 5 s for a connection that
// a client dialled but never used, which net/http's dialling can leave.
func serve(addr string, h http.Handler, graceful bool) (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Shutdown or Close
	}()
	stop = func() {
		if graceful {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if srv.Shutdown(ctx) == nil {
				<-done
				return
			}
		}
		_ = srv.Close()
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// syncWriter serialises writes: the webhook receiver prints from the
// server's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
