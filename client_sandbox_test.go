package paykit_test

// Tests of Client construction and its shared transport (client.go)
// through the public API.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Point 13: an empty HMAC secret is refused when the client is made.
func TestEmptySecretRefusedAtNewClient(t *testing.T) {
	t.Parallel()
	_, err := paykit.NewClient("https://api.example", "pk", paykit.HMACSigner(""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "empty secret")
}

// Issue 16, point 10: Clients made without WithHTTPClient share one
// transport; CloseIdleConnections releases it; a merchant's transport is
// never closed.
func TestSharedDefaultTransport(t *testing.T) {
	t.Parallel()
	var opened atomic.Int32
	closed := make(chan struct{}, 64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"balance":1,"balance_frozen":0,"currency":"USDT"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	var last *paykit.Client
	for range 20 {
		c, err := paykit.NewClient(srv.URL, "pk", paykit.HMACSigner("s")) // a Client per tenant, discarded
		require.NoError(t, err)
		_, err = c.GetBalance(bg)
		require.NoError(t, err)
		last = c
	}
	assert.Equal(t, int32(1), opened.Load(), "20 Clients, one pooled connection")
	last.CloseIdleConnections()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection was not closed")
	}

	var closes atomic.Int32
	mine := &closeCounter{RoundTripper: &http.Transport{}, n: &closes}
	c, err := paykit.NewClient(srv.URL, "pk", paykit.HMACSigner("s"), paykit.WithHTTPClient(&http.Client{Transport: mine}))
	require.NoError(t, err)
	_, err = c.GetBalance(bg)
	require.NoError(t, err)
	c.CloseIdleConnections()
	assert.Equal(t, int32(0), closes.Load(), "the merchant's transport is theirs")
}

type closeCounter struct {
	http.RoundTripper
	n *atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.n.Add(1) }

// TestUnsaidVersioning: the spec shows no versioning policy. /v1 is fixed
// in every path the SDK sends; a server that serves only /v2 answers 404,
// which surfaces as an *Error with HTTPStatus 404 (not retried, not an
// unknown outcome).
func TestUnsaidVersioning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type op struct {
		name string
		want string // "METHOD path" of the op's first request
		call func(c *paykit.Client, ids map[string]string) error
	}
	ops := []op{
		{"CreatePayment", "POST /v1/payments", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "v-1", Amount: dec("1000")})
			if err == nil {
				ids["payment"] = p.ID
			}
			return err
		}},
		{"GetPayment", "GET /v1/payments/{payment}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayment(ctx, ids["payment"])
			return err
		}},
		{"GetPaymentByExtID", "GET /v1/payments/by-ext-id/v-1", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPaymentByExtID(ctx, "v-1")
			return err
		}},
		{"ConfirmPayment", "POST /v1/payments/{payment}/confirm", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ConfirmPayment(ctx, ids["payment"], nil)
			return err
		}},
		{"CreatePayment", "POST /v1/payments", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "v-2", Amount: dec("1001")})
			if err == nil {
				ids["payment"] = p.ID
			}
			return err
		}},
		{"CancelPayment", "POST /v1/payments/{payment}/cancel", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CancelPayment(ctx, ids["payment"])
			return err
		}},
		{"OpenDispute", "POST /v1/payments/{payment}/dispute", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.OpenDispute(ctx, ids["payment"], paykit.OpenDisputeParams{})
			return err
		}},
		{"CancelDispute", "POST /v1/payments/{payment}/dispute/cancel", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CancelDispute(ctx, ids["payment"])
			return err
		}},
		{"CreatePayout", "POST /v1/payouts", func(c *paykit.Client, ids map[string]string) error {
			p, err := c.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "vp-1", Amount: dec("10"),
				Method: paykit.PayoutMethodSBP, Requisites: "+79001234567", HolderName: "H"})
			if err == nil {
				ids["payout"] = p.ID
			}
			return err
		}},
		{"GetPayout", "GET /v1/payouts/{payout}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayout(ctx, ids["payout"])
			return err
		}},
		{"GetPayoutByExtID", "GET /v1/payouts/by-ext-id/vp-1", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetPayoutByExtID(ctx, "vp-1")
			return err
		}},
		{"ListPayouts", "GET /v1/payouts?limit=10", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListPayouts(ctx, paykit.ListPayoutsParams{Limit: 10})
			return err
		}},
		{"AllPayouts", "GET /v1/payouts?limit=10", func(c *paykit.Client, ids map[string]string) error {
			for _, err := range c.AllPayouts(ctx, paykit.ListPayoutsParams{Limit: 10}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"ListTerminals", "GET /v1/terminals", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListTerminals(ctx)
			return err
		}},
		{"GetBalance", "GET /v1/balance", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetBalance(ctx)
			return err
		}},
		{"ListBanks", "GET /v1/banks", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.ListBanks(ctx)
			return err
		}},
		{"CreateTransfer", "POST /v1/transfers", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.CreateTransfer(ctx, paykit.CreateTransferParams{FromTerminalID: sandbox.DefaultMainTerminalID,
				ToTerminalID: sandbox.DefaultReserveTerminalID, Amount: dec("1")})
			return err
		}},
		{"CreateWithdrawal", "POST /v1/withdrawals", func(c *paykit.Client, ids map[string]string) error {
			w, err := c.CreateWithdrawal(ctx, paykit.CreateWithdrawalParams{TerminalID: sandbox.DefaultMainTerminalID,
				Amount: dec("10"), Address: "TXyzWallet"})
			if err == nil {
				ids["withdrawal"] = w.ID
			}
			return err
		}},
		{"GetWithdrawal", "GET /v1/withdrawals/{withdrawal}", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetWithdrawal(ctx, ids["withdrawal"])
			return err
		}},
		{"GetWithdrawalFee", "GET /v1/withdrawals/fee", func(c *paykit.Client, ids map[string]string) error {
			_, err := c.GetWithdrawalFee(ctx)
			return err
		}},
		{"CheckCredentials", "GET /v1/balance", func(c *paykit.Client, ids map[string]string) error {
			return c.CheckCredentials(ctx)
		}},
	}

	t.Run("every path starts with /v1", func(t *testing.T) {
		t.Parallel()
		sb := sandbox.New(sandbox.Config{})
		log := &wireLog{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			sb.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { srv.Close(); sb.Close() })
		c, err := paykit.NewClient(srv.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
		require.NoError(t, err)
		ids := map[string]string{}
		for _, o := range ops {
			before := len(log.all())
			require.NoError(t, o.call(c, ids), o.name)
			reqs := log.all()[before:]
			require.NotEmpty(t, reqs, o.name)
			want := o.want
			for k, v := range ids {
				want = strings.ReplaceAll(want, "{"+k+"}", v)
			}
			assert.Equal(t, want, reqs[0].Method+" "+reqs[0].URI, o.name)
		}
		for _, r := range log.all() {
			assert.True(t, strings.HasPrefix(r.URI, "/v1/"), "%s %s", r.Method, r.URI)
		}
	})

	t.Run("a /v2-only server answers 404", func(t *testing.T) {
		t.Parallel()
		log := &wireLog{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.add(r)
			if strings.HasPrefix(r.URL.Path, "/v2/") {
				_, _ = w.Write([]byte(`{}`))
				return
			}
			http.NotFound(w, r) // text/plain "404 page not found", as net/http's mux answers
		}))
		t.Cleanup(srv.Close)
		c, err := paykit.NewClient(srv.URL, credKey, paykit.HMACSigner(credSecret),
			paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond))
		require.NoError(t, err)
		ids := map[string]string{"payment": unsaidPaymentID, "payout": unsaidPayoutID, "withdrawal": unsaidWithdrawalID}
		for _, o := range ops {
			before := len(log.all())
			err := o.call(c, ids)
			var apiErr *paykit.Error
			if assert.True(t, errors.As(err, &apiErr), "%s: %v", o.name, err) {
				assert.Equal(t, http.StatusNotFound, apiErr.HTTPStatus, o.name)
			}
			assert.NotErrorIs(t, err, paykit.ErrUnknownOutcome, o.name)
			assert.Len(t, log.all()[before:], 1, "%s: a 404 is not retried", o.name)
		}
	})
}

// TestDefaultTransportHonoursProxyEnvironment holds the README's statement
// that the default transport, a clone of http.DefaultTransport, goes through
// HTTP_PROXY and HTTPS_PROXY. net/http reads them once per process, so the
// client runs in a child process of this test binary.
func TestDefaultTransportHonoursProxyEnvironment(t *testing.T) {
	if os.Getenv("PAYKIT_PROXY_CHILD") == "1" {
		ctx := context.Background()
		for _, base := range []string{"http://api.paykit.invalid", "https://api.paykit.invalid"} {
			c, err := paykit.NewClient(base, credKey, paykit.HMACSigner(credSecret), paykit.WithInsecureHTTP(), paykit.WithMaxRetries(0))
			require.NoError(t, err)
			_ = c.CheckCredentials(ctx) // the proxy answers the plain one and refuses the CONNECT
		}
		return
	}
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no tunnels here", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(proxy.Close)

	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultTransportHonoursProxyEnvironment$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PAYKIT_PROXY_CHILD=1", "HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL,
		"NO_PROXY=", "http_proxy=", "https_proxy=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"GET http://api.paykit.invalid/v1/balance", "CONNECT api.paykit.invalid:443"}, seen)
}

// The sandbox's 401 names what it signed; the SDK's error keeps that text
// readable (nothing in it looks like a card number) and carries no secret.
func TestSignerDebugMessageSurvivesRedaction(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Config{})
	ts := httptest.NewServer(sb)
	t.Cleanup(func() { ts.Close(); sb.Close() })
	c, err := paykit.NewClient(ts.URL, sandbox.DefaultAPIKey, paykit.HMACSigner("wrong-secret"))
	require.NoError(t, err)
	err = c.CheckCredentials(context.Background())
	require.ErrorIs(t, err, paykit.ErrUnauthorized)
	assert.Contains(t, err.Error(), "the sandbox signed method GET, request URI /v1/balance and a body of 0 bytes with SHA-256 "+
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	assert.NotContains(t, err.Error(), sandbox.DefaultSecret)
	assert.NotContains(t, err.Error(), "wrong-secret")
}
