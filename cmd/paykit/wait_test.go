package main

import (
	"bytes"
	"context"
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
	p, err := e.sdk.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: "wait-int", Amount: decimal.RequireFromString("300.00")})
	if err != nil {
		t.Fatal(err)
	}
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
	if code != 130 || !strings.Contains(errb.String(), "interrupted") || strings.Contains(errb.String(), "context canceled") {
		t.Fatalf("SIGINT during wait: exit %d, stderr %q; want 130 and \"interrupted\"", code, errb.String())
	}
}
