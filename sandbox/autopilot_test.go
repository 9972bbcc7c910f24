package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
)

func pilotEnv(t *testing.T, ap Autopilot) (*env, *paykit.Client) {
	t.Helper()
	e := newEnv(t, Config{Autopilot: ap})
	c, err := paykit.NewClient(e.ts.URL, e.key, paykit.HMACSigner(e.sec), paykit.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

func mainBalance(t *testing.T, sb *Server) decimal.Decimal {
	t.Helper()
	return sb.Terminals(DefaultAPIKey)[0].Balance
}

// TestAutopilotTestValues drives every row of TestValues end to end
// through the SDK, with the clock moved only by Advance. A row added to
// the table without a case here fails the test.
func TestAutopilotTestValues(t *testing.T) {
	ap := Autopilot{Enabled: true}.WithDefaults()
	want := map[string]string{ // Example -> final status
		"1500.00": "COMPLETED", "1500.11": "COMPLETED", "1500.12": "CANCELLED", "1500.13": "PROCESSING",
		"404.04": "PAY_004", "receipt attached": "COMPLETED", "please reject": "CANCELLED",
		"4111111111111111": "completed", "4000000000000002": "failed", "4000000000000003": "cancelled",
		"TXYZsandboxAddress": "completed", "TXYZsandboxFAIL": "failed",
	}
	if len(want) != len(TestValues) {
		t.Fatalf("%d test values, %d cases", len(TestValues), len(want))
	}
	for i, tv := range TestValues {
		exp, ok := want[tv.Example]
		if !ok {
			t.Fatalf("row %d (%s %s) has no case", i, tv.Resource, tv.Example)
		}
		t.Run(strconv.Itoa(i)+"_"+tv.Resource+"_"+tv.Example, func(t *testing.T) {
			ctx := context.Background()
			e, c := pilotEnv(t, Autopilot{Enabled: true})
			switch tv.Resource {
			case "payment":
				pilotPayment(t, ctx, e, c, ap, decimal.RequireFromString(tv.Example), exp)
			case "dispute":
				pilotDispute(t, ctx, e, c, ap, tv.Example, exp)
			case "payout":
				pilotPayout(t, ctx, e, c, ap, tv.Example, exp)
			case "withdrawal":
				pilotWithdrawal(t, ctx, e, c, ap, tv.Example, exp)
			default:
				t.Fatalf("unknown resource %q", tv.Resource)
			}
		})
	}
}

func paymentStatus(t *testing.T, ctx context.Context, c *paykit.Client, id string) string {
	t.Helper()
	p, err := c.GetPayment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != id {
		t.Fatalf("id %s, want %s", p.ID, id)
	}
	return string(p.Status)
}

func pilotPayment(t *testing.T, ctx context.Context, e *env, c *paykit.Client, ap Autopilot, amt decimal.Decimal, want string) {
	before := mainBalance(t, e.sb)
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "tv-" + amt.String(), Amount: amt, Method: paykit.MethodCard})
	if want == "PAY_004" {
		var pe *paykit.Error
		if !errors.As(err, &pe) || pe.Code != "PAY_004" || pe.HTTPStatus != 503 {
			t.Fatalf("create %s: %v, want 503 PAY_004", amt, err)
		}
		if got := e.sb.Stats(DefaultAPIKey).Payments; got != 0 {
			t.Fatalf("%d payments stored, want 0", got)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !p.Amount.Equal(amt) || p.Status != paykit.PaymentStatusPending {
		t.Fatalf("created %s %s", p.Amount, p.Status)
	}
	e.sb.Advance(ap.PayerDelay)
	got := paymentStatus(t, ctx, c, p.ID)
	if autopilot.Kopecks(amt) == 11 {
		if got != "PROCESSING" {
			t.Fatalf("after the payer delay: %s, want PROCESSING (payer pressed I paid)", got)
		}
	} else {
		if got != "PENDING" {
			t.Fatalf("after the payer delay: %s, want PENDING (nobody paid)", got)
		}
		cp, err := c.ConfirmPayment(ctx, p.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Status != paykit.PaymentStatusProcessing {
			t.Fatalf("confirm answered %s", cp.Status)
		}
	}
	e.sb.Advance(ap.VerifyDelay - time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != "PROCESSING" {
		t.Fatalf("a second before the verify delay: %s", got)
	}
	e.sb.Advance(time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != want {
		t.Fatalf("after the verify delay: %s, want %s", got, want)
	}
	e.sb.Advance(time.Hour)
	if got := paymentStatus(t, ctx, c, p.ID); got != want {
		t.Fatalf("an hour later: %s, want %s", got, want)
	}
	credit := decimal.Zero
	if want == "COMPLETED" {
		credit = amt.DivRound(DefaultUSDTRate, 2)
	}
	if got := mainBalance(t, e.sb); !got.Equal(before.Add(credit)) {
		t.Fatalf("balance %s, want %s", got, before.Add(credit))
	}
	if n := e.sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps left", n)
	}
}

func pilotDispute(t *testing.T, ctx context.Context, e *env, c *paykit.Client, ap Autopilot, comment, want string) {
	amt := decimal.RequireFromString("1500.12") // verification cancels it
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "tv-dispute", Amount: amt, Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(ap.VerifyDelay)
	if got := paymentStatus(t, ctx, c, p.ID); got != "CANCELLED" {
		t.Fatalf("before the dispute: %s", got)
	}
	before := mainBalance(t, e.sb)
	d, err := c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Comment: comment})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != paykit.PaymentStatusDispute {
		t.Fatalf("open dispute answered %s", d.Status)
	}
	e.sb.Advance(ap.ReviewDelay - time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != "DISPUTE" {
		t.Fatalf("a second before the review: %s", got)
	}
	e.sb.Advance(time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != want {
		t.Fatalf("after the review: %s, want %s", got, want)
	}
	credit := decimal.Zero
	if want == "COMPLETED" {
		credit = amt.DivRound(DefaultUSDTRate, 2)
	}
	if got := mainBalance(t, e.sb); !got.Equal(before.Add(credit)) {
		t.Fatalf("balance %s, want %s", got, before.Add(credit))
	}
}

func pilotPayout(t *testing.T, ctx context.Context, e *env, c *paykit.Client, ap Autopilot, requisites, want string) {
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "tv-po", Amount: decimal.RequireFromString("2500.00"),
		Method: paykit.PayoutMethodCard, Requisites: requisites, HolderName: "IVAN IVANOV"})
	if err != nil {
		t.Fatal(err)
	}
	if po.Status != paykit.PayoutStatusPending || po.Requisites != requisites {
		t.Fatalf("created %s %q", po.Status, po.Requisites)
	}
	for _, step := range []string{"processing", want} {
		e.sb.Advance(ap.PayoutDelay)
		got, err := c.GetPayout(ctx, po.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Status) != step {
			t.Fatalf("status %s, want %s", got.Status, step)
		}
		if got.ProviderOrderID == "" {
			t.Fatal("no provider_order_id once processing")
		}
		if (step == "completed") != !got.CompletedAt.IsZero() {
			t.Fatalf("status %s with completed_at %v", step, got.CompletedAt)
		}
	}
}

var txHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func pilotWithdrawal(t *testing.T, ctx context.Context, e *env, c *paykit.Client, ap Autopilot, address, want string) {
	w, err := c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: DefaultMainTerminalID,
		Amount: decimal.RequireFromString("10.00"), Address: address})
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != paykit.WithdrawalStatusPending || w.Address != address || w.TxHash != "" {
		t.Fatalf("created %s %q %q", w.Status, w.Address, w.TxHash)
	}
	for _, step := range []string{"processing", want} {
		e.sb.Advance(ap.WithdrawalDelay)
		got, err := c.GetWithdrawal(ctx, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Status) != step {
			t.Fatalf("status %s, want %s", got.Status, step)
		}
		if hashed := txHashRE.MatchString(got.TxHash); hashed != (step == "completed") {
			t.Fatalf("status %s with tx_hash %q", step, got.TxHash)
		}
	}
	term := e.sb.Terminals(DefaultAPIKey)[0]
	wantBal := decimal.RequireFromString("1000.00")
	if want == "completed" {
		wantBal = decimal.RequireFromString("988.50") // 10.00 + fee 1.50 gone
	}
	if !term.Balance.Equal(wantBal) || !term.BalanceFrozen.IsZero() {
		t.Fatalf("balance %s frozen %s, want %s and 0", term.Balance, term.BalanceFrozen, wantBal)
	}
}

// TestAutopilotOffNothingMoves: without the autopilot a test value is an
// ordinary value and nothing moves by itself but expiry.
func TestAutopilotOffNothingMoves(t *testing.T) {
	ctx := context.Background()
	e, c := pilotEnv(t, Autopilot{})
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "off-1", Amount: decimal.RequireFromString("404.04"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatalf("404.04 without the autopilot: %v", err)
	}
	q, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "off-2", Amount: decimal.RequireFromString("1500.11"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "off-po", Amount: decimal.RequireFromString("100"),
		Method: paykit.PayoutMethodCard, Requisites: "4111111111111111", HolderName: "I I"})
	if err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(time.Hour)
	if got := paymentStatus(t, ctx, c, p.ID); got != "PROCESSING" {
		t.Fatalf("confirmed payment: %s, want PROCESSING", got)
	}
	if st := e.sb.State().Autopilot; st != (AutopilotState{}) {
		t.Fatalf("state says the autopilot is %+v", st)
	}
	if got := paymentStatus(t, ctx, c, q.ID); got != "CANCELLED" {
		t.Fatalf("unpaid payment: %s, want CANCELLED (expired)", got)
	}
	got, err := c.GetPayout(ctx, po.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != paykit.PayoutStatusPending {
		t.Fatalf("payout %s, want pending", got.Status)
	}
}

// TestAutopilotRealClock: with the real clock the pilot's own timer moves
// a payout along with no request at all: the receiver sees the webhooks of
// both steps, in order.
func TestAutopilotRealClock(t *testing.T) {
	got := make(chan string, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v struct {
			Status string `json:"status"`
		}
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		got <- v.Status
	}))
	defer rcv.Close()
	sb := New(Config{Autopilot: Autopilot{Enabled: true, PayoutDelay: 20 * time.Millisecond}, WebhookRetryWait: time.Millisecond})
	ts := httptest.NewServer(sb)
	defer func() { ts.Close(); sb.Close() }()
	c, err := paykit.NewClient(ts.URL, DefaultAPIKey, paykit.HMACSigner(DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	po, err := c.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: "rc", Amount: decimal.RequireFromString("100"),
		Method: paykit.PayoutMethodCard, Requisites: "4111111111111111", HolderName: "I I", NotifyURL: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for _, want := range []string{"processing", "completed"} {
		select {
		case st := <-got:
			if st != want {
				t.Fatalf("webhook status %q, want %q", st, want)
			}
		case <-deadline:
			t.Fatalf("no %s webhook within 10s", want)
		}
	}
	if n := sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps left", n)
	}
	final, err := c.GetPayout(context.Background(), po.ID)
	if err != nil || final.Status != paykit.PayoutStatusCompleted {
		t.Fatalf("payout %v %v", final, err)
	}
}

// The dashboard's test values page renders every row of TestValues and
// says whether the autopilot is on.
func TestDashboardTestValues(t *testing.T) {
	for _, on := range []bool{false, true} {
		e := newEnv(t, Config{Autopilot: Autopilot{Enabled: on}})
		status, _, body := e.uiGet("/sandbox/ui/testvalues?refresh=0")
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		for _, v := range TestValues {
			row := "<li><strong>" + template.HTMLEscapeString(v.Value) + "</strong>, e.g. <code>" + v.Example + "</code>: " +
				template.HTMLEscapeString(v.Outcome) + "</li>"
			if !strings.Contains(body, row) {
				t.Fatalf("row missing: %s", row)
			}
		}
		if n := strings.Count(body, "<li><strong>"); n != len(TestValues) {
			t.Fatalf("%d rows on the page, want %d", n, len(TestValues))
		}
		for _, h := range []string{"Payments: the amount", "Disputes: the comment", "Payouts: the requisites", "Withdrawals: the address"} {
			if strings.Count(body, "<h2>"+h+"</h2>") != 1 {
				t.Fatalf("heading %q not once on the page", h)
			}
		}
		if strings.Contains(body, "The autopilot is on") != on {
			t.Fatalf("autopilot %v, page says otherwise", on)
		}
	}
}

// With IgnoreTestValues every value takes its default outcome.
func TestAutopilotIgnoreTestValues(t *testing.T) {
	ctx := context.Background()
	e, c := pilotEnv(t, Autopilot{Enabled: true, IgnoreTestValues: true})
	ap := Autopilot{}.WithDefaults()
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "ign-1", Amount: decimal.RequireFromString("404.04"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatalf("404.04 with test values ignored: %v", err)
	}
	q, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "ign-2", Amount: decimal.RequireFromString("1500.12"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{p.ID, q.ID} {
		if _, err := c.ConfirmPayment(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "ign-po", Amount: decimal.RequireFromString("100"),
		Method: paykit.PayoutMethodCard, Requisites: "4000000000000002", HolderName: "I I"})
	if err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(ap.VerifyDelay + 2*ap.PayoutDelay)
	for _, id := range []string{p.ID, q.ID} {
		if got := paymentStatus(t, ctx, c, id); got != "COMPLETED" {
			t.Fatalf("payment %s, want COMPLETED", got)
		}
	}
	got, err := c.GetPayout(ctx, po.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != paykit.PayoutStatusCompleted {
		t.Fatalf("payout %s, want completed", got.Status)
	}
}

// A pilot started over state already in flight (a restart on a persistent
// store) schedules what it finds: here a Server built without the
// autopilot gets one over its state.
func TestAutopilotResume(t *testing.T) {
	ctx := context.Background()
	e, c := pilotEnv(t, Autopilot{})
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "rs-1", Amount: decimal.RequireFromString("1500.00"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "rs-po", Amount: decimal.RequireFromString("100"),
		Method: paykit.PayoutMethodCard, Requisites: "4000000000000003", HolderName: "I I"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(po.ID, PayoutProcessing); err != nil {
		t.Fatal(err)
	}
	pl := e.sb.svc.Probe().ReplacePilot(Autopilot{Enabled: true}) // safe: no request is in flight
	t.Cleanup(pl.Close)
	pl.Resume()
	if n := e.sb.AutopilotPending(); n != 2 {
		t.Fatalf("%d steps resumed, want 2", n)
	}
	e.sb.Advance(DefaultVerifyDelay + DefaultPayoutDelay)
	if got := paymentStatus(t, ctx, c, p.ID); got != "COMPLETED" {
		t.Fatalf("payment %s", got)
	}
	got, err := c.GetPayout(ctx, po.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != paykit.PayoutStatusCancelled {
		t.Fatalf("payout %s, want cancelled", got.Status)
	}
}

// A payout or withdrawal a person moves to processing is still finished by
// the autopilot (the step scheduled for pending finds its control refused
// and does nothing), and Reset drops every scheduled step.
func TestAutopilotManualMovesAndReset(t *testing.T) {
	ctx := context.Background()
	e, c := pilotEnv(t, Autopilot{Enabled: true})
	ap := Autopilot{}.WithDefaults()
	po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "mm-po", Amount: decimal.RequireFromString("100"),
		Method: paykit.PayoutMethodCard, Requisites: "4000000000000002", HolderName: "I I"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: DefaultMainTerminalID,
		Amount: decimal.RequireFromString("10.00"), Address: "TXYZsandboxAddress"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(po.ID, PayoutProcessing); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetWithdrawalStatus(w.ID, WithdrawalProcessing, ""); err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(max(ap.PayoutDelay, ap.WithdrawalDelay))
	gp, err := c.GetPayout(ctx, po.ID)
	if err != nil || gp.Status != paykit.PayoutStatusFailed {
		t.Fatalf("payout after one delay: %v %v, want failed", gp, err)
	}
	gw, err := c.GetWithdrawal(ctx, w.ID)
	if err != nil || gw.Status != paykit.WithdrawalStatusCompleted || !txHashRE.MatchString(gw.TxHash) {
		t.Fatalf("withdrawal after one delay: %v %v, want completed with a tx_hash", gw, err)
	}
	if n := e.sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps left", n)
	}

	if _, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "mm-1", Amount: decimal.RequireFromString("1500.11"),
		Method: paykit.MethodCard}); err != nil {
		t.Fatal(err)
	}
	if n := e.sb.AutopilotPending(); n != 1 {
		t.Fatalf("%d steps after a 1500.11 create, want 1 (the payer)", n)
	}
	// GET /sandbox/state says so to any language.
	r, err := NewRemote(e.ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.State(ctx)
	if err != nil || st.Autopilot != (AutopilotState{Enabled: true, PendingSteps: 1}) {
		t.Fatalf("state %+v %v, want the autopilot on with 1 step", st.Autopilot, err)
	}
	e.sb.Reset()
	if n := e.sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps after Reset", n)
	}
}

// With the autopilot on, a payment nobody pays still expires at
// valid_until (expiry's own timer, not an autopilot step), and its
// expiry leaves no step behind.
func TestAutopilotUnpaidExpires(t *testing.T) {
	ctx := context.Background()
	e, c := pilotEnv(t, Autopilot{Enabled: true})
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "ex-1", Amount: decimal.RequireFromString("1500.00"), Method: paykit.MethodCard})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps for an unpaid 1500.00, want 0", n)
	}
	e.sb.Advance(DefaultPaymentTTL - time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != "PENDING" {
		t.Fatalf("a second before valid_until: %s", got)
	}
	e.sb.Advance(time.Second)
	if got := paymentStatus(t, ctx, c, p.ID); got != "CANCELLED" {
		t.Fatalf("at valid_until: %s, want CANCELLED", got)
	}
	if n := e.sb.AutopilotPending(); n != 0 {
		t.Fatalf("%d steps after expiry", n)
	}
}
