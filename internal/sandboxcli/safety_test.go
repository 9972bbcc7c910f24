package sandboxcli

// The binary's part of a sandbox safe to share (issue 20): the listener's
// own address is guarded from webhooks, and the delivery pool's flags
// reach the sandbox.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// startBinary runs the sandbox with args and returns its base URL; it is
// stopped with the test.
func startBinary(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, io.Discard)
		pw.CloseWithError(fmt.Errorf("sandbox stopped: %v", err))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("no output: %v", lines.Err())
	}
	go io.Copy(io.Discard, pr)
	base, ok := strings.CutPrefix(lines.Text(), "paykit sandbox listening on ")
	if !ok {
		t.Fatalf("the sandbox did not start: %s", lines.Text())
	}
	return base
}

// call sends one request to the binary at base (signed for /v1/) and
// decodes its JSON answer.
func call(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if strings.HasPrefix(path, "/v1/") {
		sig, _ := paykit.HMACSigner(sandbox.DefaultSecret).Sign(req, []byte(body))
		req.Header.Set("X-Identity", sandbox.DefaultAPIKey)
		req.Header.Set("X-Signature", sig)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode, m
}

// The binary listening on every address never delivers a webhook to
// itself, even through an address no request has arrived on (this
// machine's own network address): the listener's address is guarded.
func TestBinaryNeverDeliversToItself(t *testing.T) {
	var ip netip.Addr
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() {
			ip = p.Addr()
			break
		}
	}
	if !ip.IsValid() {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	base := startBinary(t, "-addr", "0.0.0.0:0", "-webhook-attempts", "1")
	port := base[strings.LastIndex(base, ":")+1:]
	code, other := call(t, base, "POST", "/v1/payments", `{"ext_id":"someone-elses","amount":1500}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, other)
	}
	target := "http://" + netip.AddrPortFrom(ip, 0).Addr().String() + ":" + port + "/sandbox/reset"
	code, p := call(t, base, "POST", "/v1/payments", `{"ext_id":"attacker","amount":1600,"notify_url":"`+target+`"}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, p)
	}
	call(t, base, "POST", "/v1/payments/"+p["id"].(string)+"/cancel", "")
	if code, m := call(t, base, "POST", "/sandbox/webhooks/flush", `{}`); code != 200 {
		t.Fatalf("flush: %d %v", code, m)
	}
	_, wh := call(t, base, "GET", "/sandbox/webhooks", "")
	ds := wh["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("deliveries: %v", wh)
	}
	d := ds[0].(map[string]any)
	attempts := d["attempts"].([]any)
	if d["state"] != "failed" || len(attempts) != 1 ||
		!strings.Contains(fmt.Sprint(attempts[0].(map[string]any)["error"]), "sandbox itself") {
		t.Fatalf("the delivery to %s was not refused at the dial: %v", target, d)
	}
	if code, m := call(t, base, "GET", "/v1/payments/"+other["id"].(string), ""); code != 200 {
		t.Fatalf("the other merchant's payment is gone: %d %v", code, m)
	}
}

// -webhook-per-receiver and -webhook-concurrency reach the sandbox: raised
// above their defaults, that many deliveries to one slow receiver are in
// flight at once (the defaults would hold them at 4).
func TestBinaryDeliveryPoolFlags(t *testing.T) {
	const n = sandbox.DefaultWebhookPerReceiver + 2
	release := make(chan struct{})
	var inFlight atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		select {
		case <-release:
		case <-r.Context().Done(): // the attempt timed out
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // before slow.Close, which waits for the handlers
	base := startBinary(t, "-addr", "127.0.0.1:0", "-webhook-per-receiver", fmt.Sprint(n), "-webhook-concurrency", fmt.Sprint(n))
	for i := range n {
		code, p := call(t, base, "POST", "/v1/payments", fmt.Sprintf(`{"ext_id":"slow-%d","amount":%d,"notify_url":%q}`, i, 1000+i, slow.URL))
		if code != 200 {
			t.Fatalf("create: %d %v", code, p)
		}
		if code, c := call(t, base, "POST", "/v1/payments/"+p["id"].(string)+"/cancel", ""); code != 200 {
			t.Fatalf("cancel: %d %v", code, c)
		}
	}
	// Look for less than the 5 s attempt timeout: once attempts time out,
	// later deliveries take their slots and in-flight counts blur.
	deadline := time.Now().Add(4 * time.Second)
	for inFlight.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline until the pool is full
	}
	if got := inFlight.Load(); got != n {
		t.Fatalf("%d deliveries in flight, want %d: the flags did not reach the pool", got, n)
	}
}

// The control token from PAYKIT_SANDBOX_CONTROL_TOKEN is what a remote
// sandbox asks for: a request from another host (any Host) without it is
// 401, with it as a bearer token it is served.
func TestBinaryControlTokenFromTheEnvironment(t *testing.T) {
	t.Setenv("PAYKIT_SANDBOX_CONTROL_TOKEN", "ctl-env-31-9f3c2a7b1e8d4c6f0a5b9e2d")
	base := startBinary(t, "-addr", "127.0.0.1:0", "-allow-remote")
	send := func(method, path, bearer string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{}`))
		req.Host = "sandbox.team.internal"
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, c := range []struct {
		method, path, bearer string
		want                 int
	}{
		{"GET", "/sandbox/state", "", http.StatusUnauthorized},
		{"GET", "/sandbox/state", "wrong", http.StatusUnauthorized},
		{"POST", "/sandbox/reset", "", http.StatusUnauthorized},
		{"GET", "/sandbox/state", "ctl-env-31-9f3c2a7b1e8d4c6f0a5b9e2d", http.StatusOK},
		{"POST", "/sandbox/reset", "ctl-env-31-9f3c2a7b1e8d4c6f0a5b9e2d", http.StatusOK},
	} {
		if got := send(c.method, c.path, c.bearer); got != c.want {
			t.Errorf("%s %s with bearer %q: %d, want %d", c.method, c.path, c.bearer, got, c.want)
		}
	}
}
