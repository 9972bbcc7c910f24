package sandboxcli

import (
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestContainer drives a sandbox running in a container (.ci/container.sh
// starts it with the autopilot on, 50 ms payout steps and a one-hour
// verification delay). It runs only with PAYKIT_CONTAINER_URL set.
// PAYKIT_CONTAINER_PHASE "create" makes a confirmed payment, a transfer and
// a payout the autopilot completes, and records the payment id in
// PAYKIT_CONTAINER_STATE; "check", after the container was restarted on the
// same volume, finds them with their state; "serve" (a binary without -db)
// checks only that the restarted container serves the API and its controls.
func TestContainer(t *testing.T) {
	base := os.Getenv("PAYKIT_CONTAINER_URL")
	if base == "" {
		t.Skip("PAYKIT_CONTAINER_URL not set: run by .ci/container.sh")
	}
	stateFile := os.Getenv("PAYKIT_CONTAINER_STATE")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := paykit.NewClient(base, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{sandbox.HealthzPath, sandbox.ReadyzPath} {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Host = "sandbox.staging.example:8080" // a probe's Host is never loopback
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", path, res.StatusCode)
		}
	}
	// The image runs remote mode: the controls want the token.
	remote, err := sandbox.NewRemote(base, sandbox.WithControlToken(os.Getenv("PAYKIT_CONTAINER_TOKEN")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.State(ctx); err != nil {
		t.Fatalf("state with the control token: %v", err)
	}
	anon, _ := sandbox.NewRemote(base)
	if _, err := anon.State(ctx); err == nil {
		t.Fatal("the container's controls answered without the token")
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
		if _, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
			ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: decimal.RequireFromString("100.00")}); err != nil {
			t.Fatalf("transfer: %v", err)
		}
		po, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "container-po", Amount: decimal.NewFromInt(500),
			Method: paykit.PayoutMethodCard, Requisites: "4111111111111111", HolderName: "IVAN IVANOV"})
		if err != nil {
			t.Fatal(err)
		}
		// The autopilot moves it (two 50 ms steps); WaitPayout polls with
		// the context's deadline.
		done, err := c.WaitPayout(ctx, po.ID, paykit.WaitOptions{MinInterval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond})
		if err != nil || done.Status != paykit.PayoutStatusCompleted {
			t.Fatalf("payout under the autopilot: %+v %v", done, err)
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
		po, err := c.GetPayoutByExtID(ctx, "container-po")
		if err != nil || po.Status != paykit.PayoutStatusCompleted {
			t.Fatalf("payout after restart: %+v %v", po, err)
		}
		terms, err := c.ListTerminals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(terms) != 2 || !terms[0].Balance.Equal(decimal.RequireFromString("900.00")) || !terms[1].Balance.Equal(decimal.RequireFromString("100.00")) {
			t.Fatalf("balances after restart: %+v", terms)
		}
	case "serve":
		if _, err := c.ListTerminals(ctx); err != nil {
			t.Fatalf("the restarted container does not serve: %v", err)
		}
	default:
		t.Fatalf("PAYKIT_CONTAINER_PHASE %q: want create, check or serve", phase)
	}
}

// TestDockerfilesAgree: CI tests .ci/Dockerfile.ci because it cannot pull
// the root Dockerfile's golang stage, so that file must keep the runtime
// stage's user, volume, ports, environment, health check and entry point.
func TestDockerfilesAgree(t *testing.T) {
	instructions := func(path string, fromLastStage bool) []string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "\\\n", " ")
		var out []string
		for _, line := range strings.Split(text, "\n") {
			line = strings.Join(strings.Fields(line), " ")
			if strings.HasPrefix(line, "FROM ") && fromLastStage {
				out = nil
			}
			switch strings.SplitN(line, " ", 2)[0] {
			case "FROM", "USER", "VOLUME", "EXPOSE", "ENV", "HEALTHCHECK", "ENTRYPOINT", "CMD":
				out = append(out, line)
			}
		}
		return out
	}
	want := instructions("../../Dockerfile", true)
	got := instructions("../../.ci/Dockerfile.ci", true)
	if !slices.Equal(want, got) || len(want) < 7 || want[0] != "FROM scratch" {
		t.Fatalf("the runtime stages differ:\nDockerfile:\n  %s\n.ci/Dockerfile.ci:\n  %s",
			strings.Join(want, "\n  "), strings.Join(got, "\n  "))
	}
}
