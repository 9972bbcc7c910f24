package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestWaitInterrupted: SIGINT (Ctrl-C) while wait polls is exit 130,
// "interrupted", not exit 1 (an API refusal) with "context canceled".
func TestWaitInterrupted(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("wait-int")
	before := e.sb.RequestCount("GET", "/v1/payments/{id}")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "wait", "payment", p.ID, "--interval", "10ms")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "TZ=UTC", "PAYKIT_CONFIG=/nonexistent/x",
		"PAYKIT_BASE_URL=" + e.srv.URL, "PAYKIT_API_KEY=" + testKey, "PAYKIT_SECRET=" + testSecret}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	polled := time.NewTimer(30 * time.Second)
	defer polled.Stop()
	for e.sb.RequestCount("GET", "/v1/payments/{id}") < before+2 {
		select {
		case <-polled.C:
			t.Fatal("wait never polled the payment")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := exitCode(cmd.Wait())
	if code != 130 || errb.String() != "paykit: interrupted\n" {
		t.Fatalf("SIGINT during wait: exit %d, stderr %q; want 130 and \"interrupted\"", code, errb.String())
	}
}

// TestWaitExitStatus: with --exit-status, a resource that settles
// unsuccessfully exits 5 (after printing it), one still unsettled when
// --timeout runs out exits 6; success is 0. Without it both print and
// exit as before (0, and 1 for the timeout). wait withdrawal waits for a
// withdrawal the same way.
func TestWaitExitStatus(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pay := func(ext string) string {
		p, err := e.sdk.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString("300.00")})
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	cancelled, completed, pending := pay("w-1"), pay("w-2"), pay("w-3")
	if _, err := e.sdk.CancelPayment(ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sdk.ConfirmPayment(ctx, completed, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.VerifyPayment(completed, "completed"); err != nil {
		t.Fatal(err)
	}
	po, err := e.sdk.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "wp-1", Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard,
		Requisites: testCard, HolderName: "I P"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(po.ID, "failed"); err != nil {
		t.Fatal(err)
	}
	w, err := e.sdk.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: "term_sandbox_main", Amount: decimal.RequireFromString("5"), Address: "TXYZ"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetWithdrawalStatus(w.ID, "failed", ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"wait", "payment", cancelled, "--exit-status"}, 5, "payment " + cancelled + " settled as CANCELLED\n"},
		{[]string{"wait", "payment", cancelled}, 0, ""},
		{[]string{"wait", "payment", completed, "--exit-status"}, 0, ""},
		{[]string{"wait", "payout", po.ID, "--exit-status"}, 5, "payout " + po.ID + " settled as failed\n"},
		{[]string{"wait", "withdrawal", w.ID, "--exit-status"}, 5, "withdrawal " + w.ID + " settled as failed\n"},
		{[]string{"wait", "payment", pending, "--exit-status", "--interval", "10ms", "--timeout", "200ms"}, 6, "payment " + pending + " not settled within --timeout\n"},
		{[]string{"wait", "payment", pending, "--interval", "10ms", "--timeout", "200ms"}, 1, "payment " + pending + " not settled within --timeout\n"},
	} {
		r := e.run("", append(c.args, "-o", "json")...)
		if r.code != c.code || r.stderr != strings.TrimSuffix("paykit: "+c.stderr, "paykit: ") || id(t, r) == "" {
			t.Errorf("paykit %v: exit %d, stderr %q; want %d and %q with the resource printed", c.args, r.code, r.stderr, c.code, c.stderr)
		}
	}
}

// TestWaitIntervalEveryState: --interval is the pause in every state, a
// PENDING payment included (the SDK alone would wait up to 30s, until
// just after its expiry, between two reads of one).
func TestWaitIntervalEveryState(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("iv-1")
	before := e.sb.RequestCount("GET", "/v1/payments/{id}")
	r := e.run("", "wait", "payment", p.ID, "--interval", "20ms", "--timeout", "1s")
	if n := e.sb.RequestCount("GET", "/v1/payments/{id}") - before; r.code != 1 || n < 5 {
		t.Fatalf("a PENDING payment with --interval 20ms over 1s: exit %d, %d reads; want 1 and at least 5", r.code, n)
	}
}

// TestWaitStatusLine: on a terminal, wait keeps one status line on stderr,
// rewritten at each read and cleared before the result; off a terminal
// stderr stays empty.
func TestWaitStatusLine(t *testing.T) {
	e := newEnv(t)
	p := e.pendingPayment("sl-1")
	r := e.inProcess("", "wait", "payment", p.ID, "--interval", "10ms", "--timeout", "300ms", "--exit-status")
	if r.code != 6 || !strings.Contains(r.stderr, "\r\x1b[Kpayment "+p.ID+": PENDING (read 1, ") ||
		!strings.Contains(r.stderr, "\r\x1b[Kpayment "+p.ID+": PENDING (read 2, ") ||
		!strings.HasSuffix(r.stderr, "\r\x1b[Kpaykit: payment "+p.ID+" not settled within --timeout\n") {
		t.Fatalf("status line: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "wait", "payment", p.ID, "--interval", "10ms", "--timeout", "100ms", "--exit-status"); strings.Contains(r.stderr, "\r") {
		t.Fatalf("a status line off a terminal: %q", r.stderr)
	}
}

// TestWaitWithdrawalGrowth protects wait withdrawal's own loop: its
// interval grows from any positive start (1ns included, whose half is 0)
// up to the ceiling and never wraps to a negative pause, which would spin
// or make the jitter's rand.N panic.
func TestWaitWithdrawalGrowth(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	for _, c := range []struct{ d, ceil, want time.Duration }{
		{1, 10, 2},
		{2, 10, 3},
		{time.Second, 30 * time.Second, 1500 * time.Millisecond},
		{20 * time.Second, 30 * time.Second, 30 * time.Second},
		{30 * time.Second, 30 * time.Second, 30 * time.Second},
		{maxD / 10 * 9, maxD, maxD},
		{maxD, maxD, maxD},
	} {
		if got := grow(c.d, c.ceil); got != c.want {
			t.Errorf("grow(%d, %d) = %d, want %d", c.d, c.ceil, got, c.want)
		}
	}
	for _, d := range []time.Duration{1, time.Second, maxD / 10 * 9, maxD} {
		for range 100 {
			if got := jittered(d); got < d || got-d > d/10 {
				t.Fatalf("jittered(%d) = %d: want %d plus at most a tenth", d, got, d)
			}
		}
	}
}
