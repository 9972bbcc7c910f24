package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// base is the frozen start of the sandbox clock in tests.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable base clock for tests of lazy expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type env struct {
	t   *testing.T
	sb  *Server
	ts  *httptest.Server
	key string
	sec string
}

// newEnv serves a sandbox over real loopback. cfg.Now defaults to the
// frozen base time.
func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return base }
	}
	if cfg.WebhookRetryWait == 0 {
		cfg.WebhookRetryWait = time.Millisecond
	}
	sb := New(cfg)
	ts := httptest.NewServer(sb)
	t.Cleanup(func() { ts.Close(); sb.Close() })
	key, sec := DefaultAPIKey, DefaultSecret
	if len(cfg.Merchants) > 0 {
		key, sec = cfg.Merchants[0].APIKey, cfg.Merchants[0].Secret
	}
	return &env{t: t, sb: sb, ts: ts, key: key, sec: sec}
}

// resp is a decoded answer. Numbers decode as json.Number, never float64.
type resp struct {
	status int
	header http.Header
	raw    string
	m      map[string]any
}

func (r resp) str(path ...string) string {
	var v any = r.m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "<nil>"
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (r resp) has(key string) bool { _, ok := r.m[key]; return ok }

// as returns the same request signed by another merchant.
func (e *env) as(key, secret string) *env {
	c := *e
	c.key, c.sec = key, secret
	return &c
}

func (e *env) do(method, path, body string) resp {
	e.t.Helper()
	return e.doCT(method, path, "application/json", []byte(body))
}

func (e *env) doCT(method, path, ct string, body []byte) resp {
	e.t.Helper()
	var rd io.Reader
	if len(body) > 0 {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", ct)
	}
	if e.key != "" {
		sig, err := paykit.HMACSigner(e.sec).Sign(req, body)
		if err != nil {
			e.t.Fatal(err)
		}
		req.Header.Set("X-Identity", e.key)
		req.Header.Set("X-Signature", sig)
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) resp {
	e.t.Helper()
	res, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, raw: string(b)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&out.m); err != nil {
			e.t.Fatalf("decode %q: %v", b, err)
		}
	}
	return out
}

// control POSTs an unsigned control request.
func (e *env) control(path, body string) resp {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return e.send(req)
}

func (e *env) createPayment(body string) resp {
	e.t.Helper()
	r := e.do("POST", "/v1/payments", body)
	if r.status != http.StatusOK {
		e.t.Fatalf("create payment: %d %s", r.status, r.raw)
	}
	return r
}

func (e *env) flush() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.sb.FlushWebhooks(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) balance(id string) decimal.Decimal {
	e.t.Helper()
	for _, t := range e.sb.Terminals(e.key) {
		if t.ID == id {
			return t.Balance
		}
	}
	e.t.Fatalf("no terminal %s", id)
	return decimal.Decimal{}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func wantStatus(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if code != "" {
		if got := r.str("error"); got != code {
			t.Fatalf("error %q, want %q: %s", got, code, r.raw)
		}
		if !r.has("message") || r.str("data") == "<nil>" {
			t.Fatalf("error body lacks message or data: %s", r.raw)
		}
	}
}

func wantDec(t *testing.T, got decimal.Decimal, want string) {
	t.Helper()
	if !got.Equal(dec(want)) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// hookSink records webhook deliveries. fail answers 500 to the first fail
// attempts.
type hookSink struct {
	mu       sync.Mutex
	fail     int
	attempts int
	bodies   []map[string]any
	tokens   []string
	srv      *httptest.Server
}

func newHookSink(t *testing.T, fail int) *hookSink {
	h := &hookSink{fail: fail}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.attempts++
		if h.attempts <= h.fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var m map[string]any
		d := json.NewDecoder(r.Body)
		d.UseNumber()
		if err := d.Decode(&m); err != nil || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.bodies = append(h.bodies, m)
		h.tokens = append(h.tokens, r.Header.Get("X-Notification-Token"))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookSink) statuses() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		out = append(out, b["status"].(string))
	}
	return out
}

// confirm POSTs a confirm without a receipt, the way the SDK does: an
// empty multipart/form-data body.
func (e *env) confirm(paymentPath string) resp {
	e.t.Helper()
	return e.doCT("POST", paymentPath+"/confirm", "multipart/form-data; boundary=xyz", []byte("--xyz--\r\n"))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Payment statuses, by the names the tests were written with.
const (
	statusPending   = ledger.PaymentPending
	statusCompleted = ledger.PaymentCompleted
	statusCancelled = ledger.PaymentCancelled
	statusDispute   = ledger.PaymentDispute
)
