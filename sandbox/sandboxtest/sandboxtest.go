// Package sandboxtest starts a paykit sandbox for a Go test in one call: a
// served sandbox, a ready *paykit.Client, and a webhook receiver that
// records every delivery, all closed when the test ends.
//
//	func TestCheckout(t *testing.T) {
//		env := sandboxtest.New(t)
//		p, err := env.Client.CreatePayment(ctx, paykit.CreatePaymentParams{
//			ExtID: "o-1", Amount: decimal.NewFromInt(1500), NotifyURL: env.WebhookURL, NotificationToken: "tok"})
//		…
//		env.Flush()             // every webhook queued so far has arrived
//		got := env.Deliveries() // what the receiver got, oldest first
//	}
//
// The client retries within milliseconds and the sandbox retries webhooks
// after a millisecond, so retry paths cost a test nothing; the sandbox's
// clock is the real one unless WithConfig gives Config.Now.
package sandboxtest

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// Env is one test's sandbox. Its client speaks for the first merchant of
// the configuration, with that merchant's Signer (or HMACSigner(Secret)).
type Env struct {
	// Sandbox is the sandbox itself: its Go controls (VerifyPayment,
	// SetPayoutStatus, Advance, …) play the service's side.
	Sandbox *sandbox.Server
	// URL is the sandbox's base URL, for a second client or a raw request.
	URL string
	// Client is a client of the sandbox with its first merchant's
	// credentials and test-speed retries.
	Client *paykit.Client
	// WebhookURL is the receiver's address: give it as NotifyURL, and the
	// deliveries show up in Deliveries.
	WebhookURL string

	t        testing.TB
	mu       sync.Mutex
	received []Delivery
}

// Delivery is one webhook the receiver got.
type Delivery struct {
	// Path is the request path (with its query), so several NotifyURLs of
	// one test can be told apart: WebhookURL + "/orders" and so on.
	Path string
	// Body is the payload as sent.
	Body []byte
	// tokenSum is a hash of the X-Notification-Token header: the token
	// itself is a secret, and a failing test's %+v must not print it.
	tokenSum [sha256.Size]byte
	hasToken bool
}

// TokenIs reports whether the delivery carried X-Notification-Token want.
func (d Delivery) TokenIs(want string) bool {
	return d.hasToken && d.tokenSum == sha256.Sum256([]byte(want))
}

type options struct {
	cfg        sandbox.Config
	clientOpts []paykit.Option
}

// Option configures New.
type Option func(*options)

// WithConfig starts the sandbox with cfg. Webhook retry waits left at zero
// become a millisecond.
func WithConfig(cfg sandbox.Config) Option { return func(o *options) { o.cfg = cfg } }

// WithClientOptions adds options to Env.Client (after the test-speed retry
// wait, which they may override).
func WithClientOptions(opts ...paykit.Option) Option {
	return func(o *options) { o.clientOpts = append(o.clientOpts, opts...) }
}

// New starts a sandbox, its client and a webhook receiver, and closes them
// all when the test ends. It fails the test if the client cannot be made.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.cfg.WebhookRetryWait == 0 {
		o.cfg.WebhookRetryWait = time.Millisecond
	}
	e := &Env{t: t}
	recv := httptest.NewServer(http.HandlerFunc(e.receive))
	sb := sandbox.New(o.cfg)
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); sb.Close(); recv.Close() })

	key, signer := sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret)
	if len(o.cfg.Merchants) > 0 {
		m := o.cfg.Merchants[0]
		key, signer = m.APIKey, m.Signer
		if signer == nil {
			signer = paykit.HMACSigner(m.Secret)
		}
	}
	copts := append([]paykit.Option{paykit.WithRetryWait(time.Millisecond, 5*time.Millisecond)}, o.clientOpts...)
	c, err := paykit.NewClient(srv.URL, key, signer, copts...)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	e.Sandbox, e.URL, e.Client, e.WebhookURL = sb, srv.URL, c, recv.URL
	return e
}

func (e *Env) receive(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	e.mu.Lock()
	d := Delivery{Path: r.URL.RequestURI(), Body: body}
	if tok := r.Header.Get("X-Notification-Token"); tok != "" {
		d.tokenSum, d.hasToken = sha256.Sum256([]byte(tok)), true
	}
	e.received = append(e.received, d)
	e.mu.Unlock()
}

// Flush waits until every webhook queued so far has been delivered or given
// up on (at most ten seconds, then the test fails). Call it before asserting
// what a webhook did: deliveries are asynchronous.
func (e *Env) Flush() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Sandbox.FlushWebhooks(ctx); err != nil {
		e.t.Fatalf("sandboxtest: webhooks still pending: %v", err)
	}
}

// Deliveries returns what the receiver got so far, oldest first.
func (e *Env) Deliveries() []Delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Delivery(nil), e.received...)
}
