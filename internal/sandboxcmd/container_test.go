package sandboxcmd

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestContainer drives a sandbox running in a container (.ci/container.sh).
// It runs only with PAYKIT_CONTAINER_URL set. PAYKIT_CONTAINER_PHASE
// "create" makes a payment, a payout and a transfer and records the
// payment id in PAYKIT_CONTAINER_STATE; "check", after the container was
// restarted on the same volume, finds them with their state.
func TestContainer(t *testing.T) {
	base := os.Getenv("PAYKIT_CONTAINER_URL")
	if base == "" {
		t.Skip("PAYKIT_CONTAINER_URL not set: run by .ci/container.sh")
	}
	stateFile := os.Getenv("PAYKIT_CONTAINER_STATE")
	ctx := context.Background()
	c, err := paykit.NewClient(base, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{sandbox.HealthzPath, sandbox.ReadyzPath} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	amount := decimal.RequireFromString("1500.00")
	switch phase := os.Getenv("PAYKIT_CONTAINER_PHASE"); phase {
	case "create":
		p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "container-1", Amount: amount, Method: paykit.MethodCard})
		if err != nil {
			t.Fatal(err)
		}
		cp, err := c.ConfirmPayment(ctx, p.ID, nil)
		if err != nil || cp.Status != paykit.PaymentStatusProcessing {
			t.Fatalf("confirm: %v", err)
		}
		tr, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: decimal.RequireFromString("100.00")})
		if err != nil {
			t.Fatalf("transfer: %v %+v", err, tr)
		}
		if err := os.WriteFile(stateFile, []byte(p.ID), 0o600); err != nil {
			t.Fatal(err)
		}
	case "check":
		id, err := os.ReadFile(stateFile)
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.GetPaymentByExtID(ctx, "container-1")
		if err != nil {
			t.Fatalf("the payment did not survive the restart: %v", err)
		}
		if p.ID != strings.TrimSpace(string(id)) || p.Status != paykit.PaymentStatusProcessing || !p.Amount.Equal(amount) {
			t.Fatalf("after restart: %s %s %s", p.ID, p.Status, p.Amount)
		}
		terms, err := c.ListTerminals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(terms) != 2 || !terms[0].Balance.Equal(decimal.RequireFromString("900.00")) || !terms[1].Balance.Equal(decimal.RequireFromString("100.00")) {
			t.Fatalf("balances after restart: %+v", terms)
		}
	default:
		t.Fatalf("PAYKIT_CONTAINER_PHASE %q: want create or check", phase)
	}
}
