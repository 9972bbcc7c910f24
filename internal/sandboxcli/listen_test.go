package sandboxcli

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestListenInTheBinary: the binary's http.Server (its read and write
// timeouts) serves the listen feed and the request log's follow; with a
// database too when PAYKIT_SANDBOX_TEST_DB=file.
func TestListenInTheBinary(t *testing.T) {
	base := startRun(t, []string{"-addr", "127.0.0.1:0"}, nil)
	r, err := sandbox.NewRemote(base, sandbox.WithMerchant(sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, reqs := make(chan sandbox.ListenEvent, 16), make(chan sandbox.RequestEvent, 64)
	go r.Listen(ctx, func(ev sandbox.ListenEvent) error { notes <- ev; return nil })
	go r.FollowRequests(ctx, func(ev sandbox.RequestEvent) error { reqs <- ev; return nil })
	sess := within(t, notes, "the session", func(ev sandbox.ListenEvent) bool { return ev.Session != nil }).Session
	c, err := paykit.NewClient(base, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "bin-1", Amount: decimal.NewFromInt(1500)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelPayment(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	n := within(t, notes, "the notification", func(ev sandbox.ListenEvent) bool { return ev.Notification != nil }).Notification
	if n.ID != p.ID || n.Status != "CANCELLED" || n.Headers["X-Notification-Token"] != sess.Token {
		t.Fatalf("notification %s %s, want the cancelled payment with the session's token", n.ID, n.Status)
	}
	cancelRec := within(t, reqs, "the cancel in the request log", func(ev sandbox.RequestEvent) bool {
		return ev.Record != nil && ev.Record.Route == "/v1/payments/{id}/cancel"
	}).Record
	if cancelRec.Status != 200 || cancelRec.Merchant != "pk_s…" {
		t.Fatalf("cancel record %+v", cancelRec)
	}
}

// within is the first value from ch that match takes, failing the test
// after 10 s.
func within[T any](t *testing.T, ch chan T, what string, match func(T) bool) T {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v := <-ch:
			if match(v) {
				return v
			}
		case <-deadline:
			t.Fatalf("no %s within 10 s", what)
		}
	}
}
