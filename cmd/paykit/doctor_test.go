package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestDoctor: every line's verdict against a healthy sandbox; a skewed
// Date header warns; refused credentials fail with exit 4; and TLS is
// checked on an https base URL (the test's CA trusted by SSL_CERT_FILE).
func TestDoctor(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "doctor")
	for _, want := range []string{"ok    base URL", "ok    clock", "ok    credentials", "ok    latency", "ok    banks                18 banks listed",
		"info  refusals             a wrong signature: HTTP 401 AUTH_001; an unknown key: HTTP 401 AUTH_001",
		"info  payout list limit    a larger limit is lowered to 1000, not refused (asked 10000)",
		"info  payout list order    not learnt: there is no payout to look at"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor: no %q in\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("doctor: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts") + e.sb.RequestCount("POST", "/v1/transfers") + e.sb.RequestCount("POST", "/v1/withdrawals"); n != 0 {
		t.Errorf("doctor moved money: %d requests", n)
	}
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": "nope"}, "", "doctor")
	if r.code != 4 || !strings.Contains(r.stdout, "FAIL  credentials") {
		t.Errorf("doctor, wrong secret: exit %d\n%s", r.code, r.stdout)
	}
	// Base URLs the SDK refuses: a line saying why, exit 4, no request
	// (the addresses are not reachable from a test), no password shown.
	for base, want := range map[string]string{
		"http://10.255.255.1:1":                    "FAIL  base URL             http://10.255.255.1:1: plain http beyond loopback would send the key and signatures in clear text; the SDK refuses it: use https://\n",
		"ftp://example.com":                        "FAIL  base URL             ftp://example.com: the scheme must be https (or http on loopback)\n",
		"ht tp://u:" + testSecret + "@example.com": "FAIL  base URL             not an absolute http(s) URL\n",
		"http://u:" + testSecret + "@127.0.0.1:1": "ok    base URL             http://u:xxxxx@127.0.0.1:1 (plain http on loopback: a local sandbox)\n" +
			"FAIL  client               credentials (from the environment): NewClient: base URL must not carry credentials\n",
	} {
		r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "doctor")
		if r.code != 4 || r.stdout != want || strings.Contains(r.stdout+r.stderr, testSecret) {
			t.Errorf("doctor with base URL %q: exit %d\n%s%s", base, r.code, r.stdout, r.stderr)
		}
	}

	// A service whose clock is an hour behind, over TLS.
	skewed := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
		e.sb.ServeHTTP(w, r)
	}))
	defer skewed.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: skewed.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": skewed.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "SSL_CERT_FILE": ca}, "", "doctor")
	for _, want := range []string{"ok    TLS", "TLS 1.3", "warn  clock                skew 1h0m", "ok    credentials"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor over TLS with a skewed clock: no %q in\n%s\nstderr %s", want, r.stdout, r.stderr)
		}
	}
}

// TestDoctorLearns: what doctor learns of the spec's unsaid points, from
// a service that differs from the sandbox where the spec is silent: it
// refuses a payout-list limit over 2500 (doctor bisects to the largest
// accepted), lists newest first, sends rate-limit headers; and from the
// sandbox (oldest first, both bounds inclusive) with payouts created a
// minute apart. Every probe is a read.
func TestDoctorLearns(t *testing.T) {
	var mu sync.Mutex
	now := frozen
	sb := sandbox.New(sandbox.Config{
		Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(testKey, testSecret)},
		Now:       func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	sdk, err := paykit.NewClient(srv.URL, testKey, paykit.HMACSigner(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := sdk.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: fmt.Sprintf("po-%d", i),
			Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard, Requisites: testCard, HolderName: "I P"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	e := &testEnv{t: t}
	vars := map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	r := e.runEnv(vars, "", "doctor")
	for _, want := range []string{
		"info  payout list order    oldest first (created_at of the first and last of 3 payouts)\n",
		"info  payout list bounds   from is inclusive, to is inclusive",
		"info  rate limits          no rate-limit header on any answer",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor on the sandbox: no %q in\n%s", want, r.stdout)
		}
	}

	// Another service: newest first, from exclusive, a limit over 2500
	// refused, rate-limit headers on every answer.
	type po struct {
		ID        string `json:"id"`
		ExtID     string `json:"ext_id"`
		Amount    int    `json:"amount"`
		Currency  string `json:"currency"`
		Method    string `json:"method"`
		Status    string `json:"status"`
		CreatedAt string `json:"created_at"`
	}
	var list []po
	for i := 2; i >= 0; i-- {
		list = append(list, po{fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), fmt.Sprintf("po-%d", i), 10, "RUB", "card", "pending",
			frozen.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	var limits []int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", "599")
		if r.Method != "GET" || r.URL.Path != "/v1/payouts" {
			sb.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		offset, _ := strconv.Atoi(q.Get("offset"))
		mu.Lock()
		limits = append(limits, limit)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if limit > 2500 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"PAY_002","message":"limit is too large","data":{}}`)
			return
		}
		if limit == 0 {
			limit = 100
		}
		from, _ := time.Parse(time.RFC3339Nano, q.Get("from"))
		to, _ := time.Parse(time.RFC3339Nano, q.Get("to"))
		var match []po
		for _, p := range list {
			at, _ := time.Parse(time.RFC3339, p.CreatedAt)
			if !from.IsZero() && !at.After(from) || !to.IsZero() && at.After(to) {
				continue
			}
			match = append(match, p)
		}
		page := match[min(offset, len(match)):min(offset+limit, len(match))]
		_ = json.NewEncoder(w).Encode(map[string]any{"payouts": page, "total": len(match), "limit": limit, "offset": offset})
	}))
	t.Cleanup(other.Close)
	vars["PAYKIT_BASE_URL"] = other.URL
	r = e.runEnv(vars, "", "doctor")
	for _, want := range []string{
		"info  payout list limit    the largest limit accepted is 2500; limit=2501 is refused (PAY_002 (HTTP 400): limit is too large)\n",
		"info  payout list order    newest first (created_at of the first and last of 3 payouts)\n",
		"info  payout list bounds   from is exclusive, to is inclusive",
		`info  rate limits          X-RateLimit-Limit: "600", X-RateLimit-Remaining: "599"` + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor on another service: no %q in\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("doctor: exit %d, stderr %q", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(limits) > 25 {
		t.Errorf("doctor made %d payout-list reads to learn the limit: %v", len(limits), limits)
	}
}

// doctor's plain-http verdict must agree with what the SDK accepts: a
// loopback host in any case is allowed by NewClient, so doctor must not
// call it refused.
func TestDoctorLoopbackAgreesWithTheSDK(t *testing.T) {
	for _, host := range []string{"localhost", "LOCALHOST", "LocalHost", "127.0.0.1", "::1", "example.com", "10.0.0.1"} {
		hostport := host + ":8080"
		if strings.Contains(host, ":") {
			hostport = "[" + host + "]:8080"
		}
		_, err := paykit.NewClient("http://"+hostport, "pk_test", paykit.HMACSigner("s"))
		if sdk := err == nil; isLoopbackHost(host) != sdk {
			t.Errorf("%s: doctor says loopback=%v, the SDK accepts plain http=%v", host, isLoopbackHost(host), sdk)
		}
	}
}
