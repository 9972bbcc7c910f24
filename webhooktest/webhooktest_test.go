package webhooktest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/webhooktest"
)

// got is one POST a receiver got: the reference NewRequest must equal.
type got struct {
	header http.Header
	body   []byte
}

// world is a served sandbox, a client of its merchant, a receiver of its
// deliveries and a listener of its feed (for withdrawals, which have no
// notify_url).
type world struct {
	sb       *sandbox.Server
	c        *paykit.Client
	recvURL  string
	received chan got
	feed     chan *sandbox.ListenNotification
}

const feedToken = "feed-token-1"

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{received: make(chan got, 16), feed: make(chan *sandbox.ListenNotification, 16)}
	recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.received <- got{header: r.Header.Clone(), body: b}
	}))
	w.sb = sandbox.New(sandbox.Config{WebhookRetryWait: time.Millisecond})
	srv := httptest.NewServer(w.sb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.Cleanup(func() { cancel(); <-done; srv.Close(); w.sb.Close(); recv.Close() })
	w.recvURL = recv.URL + "/paykit/webhook"
	c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	r, err := sandbox.NewRemote(srv.URL, sandbox.WithMerchant(sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret)))
	if err != nil {
		t.Fatal(err)
	}
	session := make(chan struct{})
	go func() {
		done <- r.Listen(ctx, func(ev sandbox.ListenEvent) error {
			switch {
			case ev.Session != nil:
				select {
				case <-session:
				default:
					close(session)
				}
			case ev.Notification != nil:
				w.feed <- ev.Notification
			}
			return nil
		}, sandbox.ListenToken(feedToken))
	}()
	select {
	case <-session:
	case err := <-done:
		t.Fatalf("Listen: %v", err)
	}
	return w
}

// delivery is the next POST the receiver got.
func (w *world) delivery(t *testing.T) got {
	t.Helper()
	select {
	case g := <-w.received:
		return g
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10s")
	}
	return got{}
}

// note is the next notification of the feed.
func (w *world) note(t *testing.T) *sandbox.ListenNotification {
	t.Helper()
	select {
	case n := <-w.feed:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification on the feed within 10s")
	}
	return nil
}

// same fails unless req is what the sandbox sent: method, the headers a
// receiver reads, the body byte for byte. The token is compared, never
// printed.
func same(t *testing.T, what string, req *http.Request, header http.Header, body []byte) {
	t.Helper()
	if req.Method != http.MethodPost {
		t.Errorf("%s: method %s, want POST", what, req.Method)
	}
	if g, w := req.Header.Get("Content-Type"), header.Get("Content-Type"); g != w {
		t.Errorf("%s: Content-Type %q, the sandbox sent %q", what, g, w)
	}
	if g, w := req.Header.Values("X-Notification-Token"), header.Values("X-Notification-Token"); len(g) != len(w) || len(g) == 1 && g[0] != w[0] {
		t.Errorf("%s: X-Notification-Token differs from the sandbox's (%d values, it sent %d)", what, len(g), len(w))
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, body) {
		t.Errorf("%s: %s (NewRequest's, then the sandbox's)", what, bodyDiff(b, body))
	}
	if req.ContentLength != int64(len(body)) {
		t.Errorf("%s: ContentLength %d, want %d", what, req.ContentLength, len(body))
	}
}

func TestPaymentsAsTheSandboxSendsThem(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		params  paykit.CreatePaymentParams
		outcome string
	}{
		{"sbp kopecks completed", paykit.CreatePaymentParams{ExtID: "o-1", Amount: decimal.RequireFromString("1500.50"), Method: paykit.MethodSBP}, sandbox.OutcomeCompleted},
		{"card whole cancelled", paykit.CreatePaymentParams{ExtID: "o-2", Amount: decimal.RequireFromString("2000"), Method: paykit.MethodCard}, sandbox.OutcomeCancelled},
		{"cross-border", paykit.CreatePaymentParams{ExtID: "o-3", Amount: decimal.RequireFromString("1000.0"), Method: paykit.MethodCrossBorder, Country: paykit.CountryTJ}, sandbox.OutcomeCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.params.NotifyURL, tc.params.NotificationToken = w.recvURL, "tok-"+tc.params.ExtID
			p, err := w.c.CreatePayment(ctx, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			check := func(step string) {
				g := w.delivery(t)
				n := w.note(t)
				cur, err := w.c.GetPayment(ctx, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				req, err := webhooktest.NewRequest(w.recvURL, tc.params.NotificationToken, cur)
				if err != nil {
					t.Fatal(err)
				}
				same(t, step+" (delivery)", req, g.header, g.body)
				// The feed carries the very bytes, with the resource's token.
				req, _ = webhooktest.NewRequest(w.recvURL, tc.params.NotificationToken, cur)
				same(t, step+" (feed)", req, http.Header{"Content-Type": {n.Headers["Content-Type"]}, "X-Notification-Token": {n.Headers["X-Notification-Token"]}}, n.Body)
			}
			if _, err := w.c.ConfirmPayment(ctx, p.ID, nil); err != nil {
				t.Fatal(err)
			}
			check("PROCESSING")
			if err := w.sb.VerifyPayment(p.ID, tc.outcome); err != nil {
				t.Fatal(err)
			}
			check(tc.outcome)
		})
	}
}

func TestPayoutsAsTheSandboxSendsThem(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p, err := w.c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po-1", Amount: decimal.RequireFromString("2500.00"),
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "Ivan Ivanov", NotifyURL: w.recvURL})
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{"processing", "completed"} {
		if err := w.sb.SetPayoutStatus(p.ID, status); err != nil {
			t.Fatal(err)
		}
		g := w.delivery(t)
		n := w.note(t)
		cur, err := w.c.GetPayout(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The service sends a payout no token.
		req, err := webhooktest.NewRequest(w.recvURL, "", cur)
		if err != nil {
			t.Fatal(err)
		}
		same(t, status+" (delivery)", req, g.header, g.body)
		// The feed adds the session's token.
		req, _ = webhooktest.NewRequest(w.recvURL, feedToken, cur)
		same(t, status+" (feed)", req, http.Header{"Content-Type": {n.Headers["Content-Type"]}, "X-Notification-Token": {n.Headers["X-Notification-Token"]}}, n.Body)
	}
}

func TestWithdrawalsAsTheFeedCarriesThem(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ts, err := w.c.ListTerminals(ctx)
	if err != nil || len(ts) == 0 {
		t.Fatalf("terminals: %v %d", err, len(ts))
	}
	wd, err := w.c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: ts[0].ID, Amount: decimal.RequireFromString("10.5"),
		Address: "TXYZabcdefghijklmnopqrstuvwxyz1234"})
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []string{"processing", "completed"} {
		if err := w.sb.SetWithdrawalStatus(wd.ID, status, ""); err != nil {
			t.Fatal(err)
		}
		n := w.note(t)
		cur, err := w.c.GetWithdrawal(ctx, wd.ID)
		if err != nil {
			t.Fatal(err)
		}
		req, err := webhooktest.NewRequest(w.recvURL, feedToken, cur)
		if err != nil {
			t.Fatal(err)
		}
		same(t, status, req, http.Header{"Content-Type": {n.Headers["Content-Type"]}, "X-Notification-Token": {n.Headers["X-Notification-Token"]}}, n.Body)
	}
}

func TestAWebhookHandlerAcceptsIt(t *testing.T) {
	created := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	pay := &paykit.Payment{ID: "6f1c2a5e-8d0b-4d7e-9b1a-2f3c4d5e6f70", ExtID: "order-1", Amount: decimal.RequireFromString("1500.50"),
		Currency: "RUB", Status: paykit.PaymentStatusCompleted, Method: paykit.MethodSBP, CreatedAt: created, ValidUntil: created.Add(20 * time.Minute),
		Requisites: paykit.Requisites{Type: "sbp", Value: "+79001234567", BankName: "Sber", Holder: "Ivan I."}, USDTRate: decimal.RequireFromString("92.5")}
	po := &paykit.Payout{ID: "9d2a0000-8d0b-4d7e-9b1a-2f3c4d5e6f70", ExtID: "payout-1", Amount: decimal.RequireFromString("2500"), Currency: "RUB",
		Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "Ivan Ivanov", Status: paykit.PayoutStatusFailed, CreatedAt: created}
	var gotPay *paykit.Payment
	var gotPo *paykit.Payout
	h := &paykit.WebhookHandler{Token: "tok", AllowUnverifiedPayouts: true,
		OnPayment: func(_ context.Context, p *paykit.Payment) error { gotPay = p; return nil },
		OnPayout:  func(_ context.Context, p *paykit.Payout) error { gotPo = p; return nil }}
	serve := func(token string, v any) int {
		req, err := webhooktest.NewRequest("/paykit/webhook", token, v)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := serve("tok", pay); code != http.StatusOK || gotPay == nil {
		t.Fatalf("payment: %d, callback called: %v", code, gotPay != nil)
	}
	if gotPay.ID != pay.ID || gotPay.ExtID != pay.ExtID || !gotPay.Amount.Equal(pay.Amount) || gotPay.Amount.String() != "1500.5" ||
		gotPay.Status != pay.Status || gotPay.Method != pay.Method || !gotPay.CreatedAt.Equal(created) || !gotPay.ValidUntil.Equal(pay.ValidUntil) ||
		gotPay.Requisites.BankName != "Sber" || gotPay.Requisites.Value != pay.Requisites.Value || !gotPay.USDTRate.Equal(pay.USDTRate) {
		t.Errorf("the handler decoded %+v", gotPay)
	}
	if code := serve("wrong", pay); code != http.StatusUnauthorized {
		t.Errorf("a payment with another token: %d, want 401", code)
	}
	if code := serve("", po); code != http.StatusOK || gotPo == nil {
		t.Fatalf("payout: %d, callback called: %v", code, gotPo != nil)
	}
	if gotPo.ID != po.ID || gotPo.Status != po.Status || !gotPo.Amount.Equal(po.Amount) || gotPo.HolderName != po.HolderName {
		t.Errorf("the handler decoded %+v", gotPo)
	}
}

func TestBadInputIsRefused(t *testing.T) {
	p := &paykit.Payment{ID: "x"}
	for _, tc := range []struct {
		name, target, token string
		v                   any
		want                string
	}{
		{"nil payment", "/h", "", (*paykit.Payment)(nil), "nil"},
		{"nil payout", "/h", "", (*paykit.Payout)(nil), "nil"},
		{"nil withdrawal", "/h", "", (*paykit.Withdrawal)(nil), "nil"},
		{"a value, not a pointer", "/h", "", paykit.Payment{}, "is not a *paykit.Payment"},
		{"a transfer", "/h", "", &paykit.Transfer{}, "is not a *paykit.Payment"},
		{"nil", "/h", "", nil, "is not a"},
		{"no target", "", "", p, "not a URL"},
		{"ftp", "ftp://host/x", "", p, "http(s)"},
		{"no host", "http:///x", "", p, "http(s)"},
		{"relative", "hook", "", p, "neither"},
		{"token with a space", "/h", "a b", p, "space"},
		{"token with a line break", "/h", "a\r\nX-Evil: 1", p, "control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := webhooktest.NewRequest(tc.target, tc.token, tc.v)
			if err == nil || req != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewRequest = %v, %v; want an error with %q", req, err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Error("the error repeats the token")
			}
		})
	}
	if _, err := webhooktest.NewRequest("/h", "", p); err != nil || errors.Unwrap(err) != nil {
		t.Fatalf("a path: %v", err)
	}
}

// bodyDiff says where two bodies part, without their text: a body holds
// card and phone numbers, which no test output may show.
func bodyDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("bodies of %d and %d bytes differ from byte %d", len(got), len(want), i)
}
