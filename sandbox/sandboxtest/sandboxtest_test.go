package sandboxtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/sandbox/sandboxtest"
)

func TestNewGivesASandboxAClientAndTheWebhooks(t *testing.T) {
	env := sandboxtest.New(t)
	ctx := context.Background()
	p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "o-1", Amount: decimal.NewFromInt(1500),
		NotifyURL: env.WebhookURL + "/orders", NotificationToken: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := env.Sandbox.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	env.Flush()
	got := env.Deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2", len(got))
	}
	for i, want := range []string{"PROCESSING", "COMPLETED"} {
		var body struct{ ID, Status string }
		if err := json.Unmarshal(got[i].Body, &body); err != nil {
			t.Fatal(err)
		}
		if body.ID != p.ID || body.Status != want || !got[i].TokenIs("tok-1") || got[i].Path != "/orders" {
			t.Fatalf("delivery %d: %+v %s", i, body, got[i].Path)
		}
	}
}

// A failing test's %+v of a delivery shows no token.
func TestDeliveryKeepsNoToken(t *testing.T) {
	env := sandboxtest.New(t)
	p, err := env.Client.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: "o-2",
		Amount: decimal.NewFromInt(1500), NotifyURL: env.WebhookURL, NotificationToken: "tok-secret-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CancelPayment(context.Background(), p.ID); err != nil {
		t.Fatal(err)
	}
	env.Flush()
	d := env.Deliveries()[0]
	if !d.TokenIs("tok-secret-9") || d.TokenIs("other") {
		t.Fatal("TokenIs does not tell the token")
	}
	if s := fmt.Sprintf("%+v %#v", d, d); strings.Contains(s, "tok-secret-9") {
		t.Fatalf("the token shows: %s", s)
	}
}

// A merchant configured with only a Signer gets a client that signs with it.
func TestNewUsesTheMerchantsSigner(t *testing.T) {
	m := sandbox.DefaultMerchant("pk_signer", "")
	m.Signer = paykit.HMACSigner("sk_only_in_the_signer")
	env := sandboxtest.New(t, sandboxtest.WithConfig(sandbox.Config{Merchants: []sandbox.Merchant{m}}))
	if err := env.Client.CheckCredentials(context.Background()); err != nil {
		t.Fatalf("the client does not sign as the merchant: %v", err)
	}
}

func TestNewWithConfigAndClientOptions(t *testing.T) {
	m := sandbox.DefaultMerchant("pk_other", "sk_other")
	env := sandboxtest.New(t, sandboxtest.WithConfig(sandbox.Config{Merchants: []sandbox.Merchant{m}}),
		sandboxtest.WithClientOptions(paykit.WithMaxRetries(0)))
	if err := env.Client.CheckCredentials(context.Background()); err != nil {
		t.Fatalf("the client does not speak for the configured merchant: %v", err)
	}
}

// TestReadmeInGoTests runs the Go blocks of "In Go tests" in the
// sandbox's README.md (the first of them is also in the top-level README)
// as they stand (their lines are checked to be this test's lines) and
// asserts what they promise: the webhooks have arrived when Flush or
// FlushWebhooks returns.
func TestReadmeInGoTests(t *testing.T) {
	checkReadmeLines(t)
	ctx := context.Background()
	t.Run("sandboxtest", func(t *testing.T) {
		env := sandboxtest.New(t)
		p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "o-1",
			Amount: decimal.NewFromInt(1500), NotifyURL: env.WebhookURL, NotificationToken: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Client.CancelPayment(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		env.Flush()             // deliveries are asynchronous: wait for them before asserting
		got := env.Deliveries() // what the receiver got, oldest first
		if len(got) != 1 || !got[0].TokenIs("tok") || !strings.Contains(string(got[0].Body), `"status":"CANCELLED"`) {
			t.Fatalf("deliveries: %d %+v", len(got), got)
		}
	})
	t.Run("by hand", func(t *testing.T) {
		var mu sync.Mutex
		var statuses []string
		hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b struct{ Status string }
			json.NewDecoder(r.Body).Decode(&b)
			mu.Lock()
			statuses = append(statuses, b.Status)
			mu.Unlock()
		}))
		t.Cleanup(hooks.Close)

		sb := sandbox.New(sandbox.Config{WebhookRetryWait: time.Millisecond})
		t.Cleanup(sb.Close)
		srv := httptest.NewServer(sb)
		t.Cleanup(srv.Close)
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret),
			paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "o-1", Amount: decimal.NewFromInt(1500),
			NotifyURL: hooks.URL, NotificationToken: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ConfirmPayment(ctx, p.ID, nil); err != nil {
			t.Fatal(err)
		}
		if err := sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil { // the service's verification
			t.Fatal(err)
		}
		if err := sb.FlushWebhooks(ctx); err != nil { // PROCESSING and COMPLETED have reached hooks
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(statuses, ",") != "PROCESSING,COMPLETED" {
			t.Fatalf("webhooks after FlushWebhooks: %v", statuses)
		}
	})
}

// checkReadmeLines fails unless every line of the Go blocks under "In Go
// tests" in the top-level README (the sandboxtest block) and in the
// sandbox's README.md (that block and the by-hand one) is a line of this
// file (indentation aside), so the documentation shows code this test runs.
func checkReadmeLines(t *testing.T) {
	t.Helper()
	self, err := os.ReadFile("sandboxtest_test.go")
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, l := range strings.Split(string(self), "\n") {
		mine[strings.TrimSpace(l)] = true
	}
	for _, doc := range []struct {
		file, heading string
		blocks        int
	}{
		{"../../README.md", "\n### In Go tests\n", 1},
		{"../README.md", "\n## In Go tests\n", 2},
	} {
		readme, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(readme), doc.heading)
		if !ok {
			t.Fatalf("%s has no %q section", doc.file, strings.TrimSpace(doc.heading))
		}
		for _, next := range []string{"\n## ", "\n### "} {
			section, _, _ = strings.Cut(section, next)
		}
		blocks := 0
		for rest := section; ; blocks++ {
			_, after, ok := strings.Cut(rest, "```go\n")
			if !ok {
				break
			}
			block, tail, _ := strings.Cut(after, "```")
			for _, l := range strings.Split(block, "\n") {
				if l = strings.TrimSpace(l); l != "" && !mine[l] {
					t.Errorf("%s line not in TestReadmeInGoTests: %s", doc.file, l)
				}
			}
			rest = tail
		}
		if blocks != doc.blocks {
			t.Fatalf("%d Go blocks in %s's In Go tests, want %d", blocks, doc.file, doc.blocks)
		}
	}
}

// Everything New starts ends with the test: afterwards neither the
// sandbox's URL nor the receiver's answers.
func TestEnvClosedWithTheTest(t *testing.T) {
	var env *sandboxtest.Env
	t.Run("inner", func(t *testing.T) {
		env = sandboxtest.New(t)
		if err := env.Client.CheckCredentials(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	hc := &http.Client{Timeout: 5 * time.Second}
	for _, u := range []string{env.URL + "/v1/balance", env.WebhookURL} {
		if res, err := hc.Get(u); err == nil {
			res.Body.Close()
			t.Errorf("%s still answers after the test: HTTP %d", u, res.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := env.Sandbox.FlushWebhooks(ctx); err != nil {
		t.Errorf("the closed sandbox still has webhooks queued: %v", err)
	}
}

// The listen feed works against a sandboxtest sandbox, in the test's own
// process: a payment created without notify_url or token is heard with
// the session's token, and the stream ends with the test.
func TestListenInProcess(t *testing.T) {
	env := sandboxtest.New(t)
	r, err := sandbox.NewRemote(env.URL, sandbox.WithMerchant(sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret)))
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan sandbox.ListenEvent, 16)
	go r.Listen(t.Context(), func(ev sandbox.ListenEvent) error { events <- ev; return nil }, sandbox.ListenToken("tok-listen"))
	next := func() sandbox.ListenEvent {
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no listen event within 10 s")
		}
		return sandbox.ListenEvent{}
	}
	if ev := next(); ev.Session == nil || ev.Session.Token != "tok-listen" {
		t.Fatalf("first event %+v, want the session", ev)
	}
	ctx := context.Background()
	p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "l-1", Amount: decimal.NewFromInt(1500)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CancelPayment(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	ev := next()
	if n := ev.Notification; n == nil || n.ID != p.ID || n.Status != "CANCELLED" || n.Headers["X-Notification-Token"] != "tok-listen" {
		t.Fatalf("got %+v, want the cancelled payment with the session's token", ev)
	}
	var body paykit.Payment
	if err := json.Unmarshal(ev.Notification.Body, &body); err != nil || body.ID != p.ID || body.Status != paykit.PaymentStatusCancelled {
		t.Fatalf("body does not decode as the payment: %v %+v", err, body)
	}
}
