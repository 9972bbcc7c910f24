package sandboxcli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

func TestRunServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "k1", "-secret", "s1"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	first := lines.Text()
	const prefix = "paykit sandbox listening on "
	if !strings.HasPrefix(first, prefix) {
		t.Fatalf("first line %q", first)
	}
	base := strings.TrimPrefix(first, prefix)
	var out strings.Builder
	for i := 0; i < 5 && lines.Scan(); i++ {
		out.WriteString(lines.Text() + "\n")
	}
	go io.Copy(io.Discard, pr)
	for _, want := range []string{"k1", "s1", sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%q not in banner:\n%s", want, out.String())
		}
	}

	req, _ := http.NewRequest("GET", base+"/v1/banks", nil)
	sig, _ := paykit.HMACSigner("s1").Sign(req, nil)
	req.Header.Set("X-Identity", "k1")
	req.Header.Set("X-Signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"code":"sber"`) {
		t.Fatalf("banks: %d %s", res.StatusCode, body)
	}

	// A connection that never sends a request (a browser's preconnect)
	// must not turn an interrupt into a failed exit.
	idle, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(base + "/v1/banks"); err == nil {
		t.Fatal("server still answering after cancel")
	}
}

func TestRunHelpAndBadFlags(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-help"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-addr", "-api-key", "-secret", "/sandbox/payments/{id}/verify", "drop_after", "/sandbox/reset",
		"-payment-validity", "-max-same-amount", "-withdrawal-fee", "-start-balance", "-webhook-attempts", "-allow-remote",
		"-log-format", "-control-token", "-webhook-concurrency", "-webhook-per-receiver", "GET /sandbox/requests", "GET /sandbox/webhooks", "GET /sandbox/state", "openapi.yaml",
		"POST /v1/payments/{id}/confirm", "GET  /v1/withdrawals/fee", "POST /v1/transfers"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("%q not in help:\n%s", want, out.String())
		}
	}
	// Every one of the 18 operations is listed, and every curl example
	// carries the JSON Content-Type the controls require.
	if n := strings.Count(out.String(), " /v1/"); n != 18 {
		t.Fatalf("%d /v1 routes in help, want 18:\n%s", n, out.String())
	}
	curls := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "curl ") {
			curls++
			if !strings.Contains(line, "-H 'Content-Type: application/json'") {
				t.Fatalf("curl line without the header: %s", line)
			}
		}
	}
	if curls < 3 {
		t.Fatalf("%d curl examples", curls)
	}
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-secret", ""}, {"-addr", "256.0.0.1:x"},
		{"-log-format", "xml"}, {"-withdrawal-fee", "-1"}, {"-start-balance", "0.0000001"}, {"-payment-validity", "0s"},
		{"-webhook-attempts", "0"}, {"-max-same-amount", "-1"}} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Fatalf("%v: no error", args)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv4zero, Port: 80}:            "http://127.0.0.1:80",
		&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 9}: "http://127.0.0.1:9",
		&net.UnixAddr{Name: "x"}:                            "http://127.0.0.1:0",
	} {
		if got := baseURL(addr); got != want {
			t.Fatalf("%v: %q, want %q", addr, got, want)
		}
	}
}

func TestExposureWarning(t *testing.T) {
	if w := exposureWarning(&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}, false, false); w != "" {
		t.Fatalf("loopback warned: %s", w)
	}
	if w := exposureWarning(&net.TCPAddr{IP: net.IPv6loopback, Port: 8080}, true, true); w != "" {
		t.Fatalf("loopback warned: %s", w)
	}
	for _, ip := range []net.IP{net.IPv4zero, net.ParseIP("192.168.1.5"), net.IPv6unspecified} {
		w := exposureWarning(&net.TCPAddr{IP: ip, Port: 8080}, false, false)
		for _, want := range []string{"WARNING", "beyond loopback", "/sandbox/ controls", "credentials", "127.0.0.1"} {
			if !strings.Contains(w, want) {
				t.Fatalf("%v: %q not in %q", ip, want, w)
			}
		}
	}
	if w := exposureWarning(&net.TCPAddr{IP: net.IPv4zero, Port: 1}, true, false); !strings.Contains(w, "-allow-remote") {
		t.Fatalf("allow-remote not named: %s", w)
	}
}

// lockedBuffer collects stderr from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The knobs reach the sandbox, and the logs are JSON lines on stderr.
func TestRunFlags(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-start-balance", "5.25", "-withdrawal-fee", "0.75",
			"-payment-validity", "5m", "-max-same-amount", "1", "-webhook-attempts", "2", "-webhook-retry-wait", "1ms",
			"-log-format", "json"}, pw, &stderr)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	base := strings.TrimPrefix(lines.Text(), "paykit sandbox listening on ")
	go io.Copy(io.Discard, pr)

	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, base+path, rd)
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
		d := json.NewDecoder(res.Body)
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, m
	}
	_, terms := call("GET", "/v1/terminals", "")
	main := terms["terminals"].([]any)[0].(map[string]any)
	if main["balance"].(json.Number) != "5.25" || main["withdrawal_fee"].(json.Number) != "0.75" {
		t.Fatalf("terminal: %v", main)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	code, p := call("POST", "/v1/payments", `{"ext_id":"f1","amount":150,"notify_url":"`+deadURL+`"}`)
	if code != 200 {
		t.Fatalf("create: %d %v", code, p)
	}
	created, _ := time.Parse(time.RFC3339, p["created_at"].(string))
	valid, _ := time.Parse(time.RFC3339, p["valid_until"].(string))
	if valid.Sub(created) != 5*time.Minute {
		t.Fatalf("validity %v", valid.Sub(created))
	}
	if code, e := call("POST", "/v1/payments", `{"ext_id":"f2","amount":150}`); code != 429 || e["error"] != "PAY_005" {
		t.Fatalf("second same-amount payment: %d %v", code, e)
	}
	call("POST", "/v1/payments/"+p["id"].(string)+"/cancel", "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, wh := call("GET", "/sandbox/webhooks", "")
		ds := wh["deliveries"].([]any)
		if len(ds) == 1 && ds[0].(map[string]any)["state"] == "failed" {
			if n := len(ds[0].(map[string]any)["attempts"].([]any)); n != 2 {
				t.Fatalf("%d attempts, want 2", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery never failed: %v", wh)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var requests, attempts int
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stderr line %q is not JSON: %v", l, err)
		}
		switch m["msg"] {
		case "request":
			requests++
		case "webhook attempt":
			attempts++
		}
	}
	if requests < 5 || attempts != 2 {
		t.Fatalf("%d request lines, %d attempt lines:\n%s", requests, attempts, stderr.String())
	}
	if strings.Contains(stderr.String(), sandbox.DefaultSecret) || strings.Contains(stderr.String(), sandbox.DefaultAPIKey) {
		t.Fatalf("credentials in the log:\n%s", stderr.String())
	}
}

func TestHTTPServerTimeouts(t *testing.T) {
	srv := newHTTPServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 ||
		srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Fatalf("server limits: %+v", srv)
	}
	if srv.ReadTimeout < bodyTimeout {
		t.Fatalf("ReadTimeout %v cuts bodies before the sandbox's own %v", srv.ReadTimeout, bodyTimeout)
	}
}

// The http.Server is hardened: a header block over MaxHeaderBytes is
// refused (431) rather than buffered.
func TestServerLimits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	base := strings.TrimPrefix(lines.Text(), "paykit sandbox listening on ")
	go io.Copy(io.Discard, pr)
	req, _ := http.NewRequest("GET", base+"/v1/banks", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 2*maxHeaderBytes))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Remote mode without a control token is refused at start: anyone who
// reached the port could otherwise reset the sandbox and settle its money.
// The token may come from the environment, and the banner never prints it.
func TestRemoteModeNeedsAControlToken(t *testing.T) {
	// Bounded, so that a sandbox that does start ends the call (err nil).
	refused, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	err := run(refused, []string{"-addr", "127.0.0.1:0", "-allow-remote"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-control-token") {
		t.Fatalf("remote mode without a token: %v", err)
	}
	// A token that could be guessed is refused as a usage error, from the
	// flag and from the environment, saying how to make one.
	for _, args := range [][]string{{"-addr", "127.0.0.1:0", "-allow-remote", "-control-token", "a"},
		{"-addr", "127.0.0.1:0", "-control-token", "team-token-42"}} {
		err = run(refused, args, io.Discard, io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "too easy to guess") ||
			!strings.Contains(err.Error(), "openssl rand -hex 32") || strings.Contains(err.Error(), "team-token-42") {
			t.Fatalf("%v: %v", args, err)
		}
	}
	t.Setenv("PAYKIT_SANDBOX_CONTROL_TOKEN", "password1234")
	if err := run(refused, []string{"-addr", "127.0.0.1:0", "-allow-remote"}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "too easy to guess") {
		t.Fatalf("a weak token from the environment: %v", err)
	}
	t.Setenv("PAYKIT_SANDBOX_CONTROL_TOKEN", "ctl-secret-77-9f3c2a7b1e8d4c6f0a5b9e2d")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-allow-remote"}, pw, io.Discard)
		pw.Close()
	}()
	buf := make([]byte, 4096)
	var banner strings.Builder
	for !strings.Contains(banner.String(), "control token") {
		n, err := pr.Read(buf)
		if err != nil {
			t.Fatalf("banner: %v\n%s", err, banner.String())
		}
		banner.Write(buf[:n])
	}
	cancel()
	go io.Copy(io.Discard, pr)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(banner.String(), "ctl-secret-77-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatal("the banner printed the control token")
	}
}

// -help names the team knobs, the health endpoints and the healthcheck
// subcommand, and renders every row of sandbox.TestValues (no second copy
// of the table).
func TestHelpRendersTestValues(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"-help"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"-config", "-print-config", "-autopilot", "-autopilot-payer-delay", "-autopilot-verify-delay",
		"-autopilot-review-delay", "-autopilot-payout-delay", "-autopilot-withdrawal-delay", "-autopilot-ignore-test-values",
		"paykit-sandbox healthcheck", "GET /healthz", "GET /readyz", "PAYKIT_SANDBOX_<NAME>", testValuesHelp()} {
		if !strings.Contains(help, want) {
			t.Fatalf("%q not in help:\n%s", want, help)
		}
	}
	for _, v := range sandbox.TestValues {
		if !strings.Contains(testValuesHelp(), v.Example+"): "+v.Outcome+"\n") {
			t.Fatalf("row %s %s not rendered", v.Resource, v.Example)
		}
	}
}

// run is Run as paykit-sandbox calls it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return Run(ctx, args, stdout, stderr, Options{Name: "paykit-sandbox"})
}

// TestVersion protects -version: what the go command recorded, said as a
// development build unless it is a tag (internal/buildversion; a test
// binary records nothing, and .ci/install-check.sh checks an installed
// one), and the SDK's version, printed without serving.
func TestVersion(t *testing.T) {
	var out, errOut strings.Builder
	if err := run(context.Background(), []string{"-version"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	// A test binary records no version: a development build of the SDK's
	// version, never a bare pseudo-version or "(devel)" beside a release.
	want := regexp.MustCompile(`^paykit-sandbox ` + regexp.QuoteMeta(paykit.Version) + ` \(development build [^;]+; paykit-go SDK ` + regexp.QuoteMeta(paykit.Version) + `\)\n$`)
	if !want.MatchString(out.String()) || errOut.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q; want stdout to match %s", out.String(), errOut.String(), want)
	}
	if err := run(context.Background(), []string{"-version", "extra"}, io.Discard, io.Discard); err == nil {
		t.Fatal("-version with an argument: no usage error")
	}
}
