package e2e

// Browser tests of the sandbox dashboard (/sandbox/ui) and the hosted
// payment page (/pay/{id}), driven through Chromium with chromedp. They
// live in this nested module so that chromedp never reaches the root
// go.mod.
//
// They need a Chromium binary: Debian's "chromium" package, or any Chrome
// named by PAYKIT_E2E_CHROME. Without one they skip, unless
// PAYKIT_E2E_REQUIRE_BROWSER=1 (set by CI), which turns the skip into a
// failure so that a CI runner without a browser cannot pass silently.
//
// Run with -update to rewrite docs/dashboard.png and the screenshots of
// pages_test.go (docs/pay-*.png, docs/dashboard-390.png, docs/webhooks-1280.png).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	imgpng "image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// update is -update: rewrite the committed screenshot. It is looked up
// rather than owned, so that another test file of this package may define
// the same flag for its own golden files without a "flag redefined" panic.
func update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func init() {
	// Package-level flag variables of other files are initialised before
	// any init runs, so this sees theirs and defines the flag only if no
	// one else did.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite generated files (docs/dashboard.png)")
	}
}

// screenshotPath is where -update writes the dashboard image of sandbox/README.md.
const screenshotPath = "../docs/dashboard.png"

// maxScreenshotBytes keeps the committed image small enough for the repo
// and for sandbox/README.md to load quickly.
const maxScreenshotBytes = 200 << 10

// findBrowser returns the path of a Chromium or Chrome binary, or "".
func findBrowser() string {
	if p := os.Getenv("PAYKIT_E2E_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts a fresh headless Chromium for one test and returns a
// tab context bounded by a deadline, so that every wait below ends.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := findBrowser()
	if path == "" {
		msg := "no Chromium found (looked for chromium, chromium-browser, google-chrome in PATH and $PAYKIT_E2E_CHROME); " +
			"install it with `apt-get install -y chromium` to run the browser tests"
		if os.Getenv("PAYKIT_E2E_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg + " (PAYKIT_E2E_REQUIRE_BROWSER=1: a missing browser is a failure)")
		}
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.WindowSize(1280, 860),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	// The browser is newer than the protocol definitions chromedp was built
	// with; the events it cannot decode are harmless and only logged with -v.
	quiet := func(format string, args ...any) {
		if testing.Verbose() {
			t.Logf("chromedp: "+format, args...)
		}
	}
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(quiet), chromedp.WithLogf(quiet))
	t.Cleanup(func() {
		// Close the browser gracefully and wait for its process to exit, so
		// that it no longer writes into the user-data-dir TempDir removes.
		if err := chromedp.Cancel(tab); err != nil && testing.Verbose() {
			t.Logf("closing the browser: %v", err)
		}
		cancelTab()
		cancelAlloc()
		cancel()
	})
	if err := chromedp.Run(tab); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return tab
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// textOf reads the visible text of the first element matching sel, waiting
// (until the context's deadline) for it to be visible.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	run(t, ctx, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
	return strings.TrimSpace(s)
}

// waitJS polls a JavaScript condition until it is true or the test's
// deadline passes. Errors count as "not yet": while a form post navigates,
// the page's execution context is briefly gone.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var ok bool
		err := chromedp.Run(ctx, chromedp.Evaluate(expr, &ok))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error: %v)", expr, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// waitLocation waits until the tab has loaded a page whose URL starts with
// prefix: a form posted by script navigates on its own, with no element of
// ours to wait for.
func waitLocation(t *testing.T, ctx context.Context, prefix string) {
	t.Helper()
	waitJS(t, ctx, fmt.Sprintf(`location.href.startsWith(%q) && document.readyState === "complete"`, prefix))
}

// merchant is the merchant's webhook receiver: it answers 200 and keeps
// what it got.
type merchant struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	tokens []string
}

func newMerchant(t *testing.T) *merchant {
	m := &merchant{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var v map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		m.mu.Lock()
		m.bodies = append(m.bodies, v)
		m.tokens = append(m.tokens, r.Header.Get("X-Notification-Token"))
		m.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *merchant) statuses() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, b := range m.bodies {
		out = append(out, fmt.Sprint(b["status"]))
	}
	return out
}

// world is a sandbox on loopback and an SDK client for it.
type world struct {
	sb     *sandbox.Server
	ts     *httptest.Server
	client *paykit.Client
}

func newWorld(t *testing.T, cfg sandbox.Config) *world {
	t.Helper()
	if cfg.WebhookRetryWait == 0 {
		cfg.WebhookRetryWait = time.Millisecond
	}
	sb := sandbox.New(cfg)
	ts := httptest.NewServer(sb)
	t.Cleanup(func() { ts.Close(); sb.Close() })
	c, err := paykit.NewClient(ts.URL, sandbox.DefaultAPIKey, paykit.HMACSigner(sandbox.DefaultSecret))
	if err != nil {
		t.Fatal(err)
	}
	return &world{sb: sb, ts: ts, client: c}
}

func (w *world) pay(t *testing.T, p paykit.CreatePaymentParams) *paykit.Payment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := w.client.CreatePayment(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (w *world) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.sb.FlushWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
}

// The tester's whole path: the payer presses "I have paid" on the payment
// page, the tester sees PROCESSING on the dashboard, presses "completed",
// sees COMPLETED, and sees the webhook reach the merchant with its 200.
func TestBrowserCheckoutFlow(t *testing.T) {
	ctx := newBrowser(t)
	m := newMerchant(t)
	w := newWorld(t, sandbox.Config{})
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "order-1001", Amount: decimal.RequireFromString("1500.50"),
		Method: paykit.MethodCard, NotifyURL: m.srv.URL + "/paykit/webhook", NotificationToken: "tok-e2e"})

	// The payment page: amount, number, time left, and the I-paid button.
	run(t, ctx, chromedp.Navigate(p.PaymentURL))
	if got := textOf(t, ctx, "#amount"); got != "1,500.50 RUB" {
		t.Fatalf("amount %q", got)
	}
	if got := textOf(t, ctx, "#requisites"); got != p.Requisites.Value {
		t.Fatalf("requisites %q, want %q", got, p.Requisites.Value)
	}
	if got := textOf(t, ctx, "#status"); got != "PENDING" {
		t.Fatalf("status %q", got)
	}
	if got := textOf(t, ctx, "#time-left"); got != "(in 20 minutes)" {
		t.Fatalf("time left %q", got)
	}
	// The copy buttons appear once the script has run.
	run(t, ctx, chromedp.WaitVisible(`button[data-what="Card number"]`, chromedp.ByQuery))
	run(t, ctx, chromedp.Click("#paid", chromedp.ByQuery), chromedp.WaitVisible(".note-processing", chromedp.ByQuery))
	if got := textOf(t, ctx, "#status"); got != "PROCESSING" {
		t.Fatalf("after I-paid: status %q", got)
	}

	// The dashboard: PROCESSING, then the tester's verdict.
	row := `#pay-` + p.ID
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"))
	if got := textOf(t, ctx, row+" .st"); got != "PROCESSING" {
		t.Fatalf("dashboard status %q", got)
	}
	if got := textOf(t, ctx, row+" .ext-id"); got != "order-1001" {
		t.Fatalf("dashboard ext_id %q", got)
	}
	num := p.Requisites.Value
	if got := textOf(t, ctx, row+" td:nth-child(4) .mono"); got != "•••• "+num[len(num)-4:] {
		t.Fatalf("dashboard requisites %q", got)
	}
	run(t, ctx,
		chromedp.Click(row+` button[value="completed"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row+`[data-status="COMPLETED"]`, chromedp.ByQuery))
	if got := textOf(t, ctx, row+" .st"); got != "COMPLETED" {
		t.Fatalf("after completed: status %q", got)
	}
	var loc string
	run(t, ctx, chromedp.Location(&loc))
	if loc != w.ts.URL+"/sandbox/ui?refresh=0" {
		t.Fatalf("after the action the browser is at %s", loc)
	}

	// The webhook deliveries: both transitions reached the merchant, whose
	// 200 the page shows.
	w.flush(t)
	if got := strings.Join(m.statuses(), ","); got != "PROCESSING,COMPLETED" {
		t.Fatalf("merchant got %s", got)
	}
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui/webhooks?refresh=0"))
	first := `#deliveries tbody tr:first-child`
	if got := textOf(t, ctx, first+" td:nth-child(1) .ext-id"); got != "order-1001" {
		t.Fatalf("delivery order %q", got)
	}
	if got := textOf(t, ctx, first+" td:nth-child(2)"); got != "payment "+p.ID {
		t.Fatalf("delivery resource %q", got)
	}
	if got := textOf(t, ctx, first+" td:nth-child(3)"); got != "COMPLETED" {
		t.Fatalf("delivery status %q", got)
	}
	if got := textOf(t, ctx, first+" td:nth-child(4)"); got != m.srv.URL+"/paykit/webhook" {
		t.Fatalf("delivery target %q", got)
	}
	if got := textOf(t, ctx, first+" td:nth-child(5)"); got != "delivered" {
		t.Fatalf("delivery state %q", got)
	}
	if got := textOf(t, ctx, first+" .answer"); !strings.HasPrefix(got, "200 OK") {
		t.Fatalf("merchant's answer %q", got)
	}
	var page string
	run(t, ctx, chromedp.OuterHTML("html", &page, chromedp.ByQuery))
	if strings.Contains(page, "tok-e2e") {
		t.Fatal("the notification token is on the page")
	}
}

// A stale page offers an action the payment no longer allows: pressing it
// shows the refusal instead of doing anything.
func TestBrowserIllegalActionShowsError(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{})
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "stale-1", Amount: decimal.RequireFromString("700")})
	if _, err := w.client.ConfirmPayment(context.Background(), p.ID, nil); err != nil {
		t.Fatal(err)
	}
	row := `#pay-` + p.ID
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"),
		chromedp.WaitVisible(row+` button[value="cancelled"]`, chromedp.ByQuery))
	// Someone else (another tab, a test) completes it meanwhile.
	if err := w.sb.VerifyPayment(p.ID, sandbox.OutcomeCompleted); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Click(row+` button[value="cancelled"]`, chromedp.ByQuery))
	got := textOf(t, ctx, "#error-text")
	if !strings.Contains(got, "payment "+p.ID+" is COMPLETED, not PROCESSING") {
		t.Fatalf("error shown: %q", got)
	}
	if got := textOf(t, ctx, row+" .st"); got != "COMPLETED" {
		t.Fatalf("status after the refused action %q", got)
	}
	got2, err := w.client.GetPayment(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got2.Status != paykit.PaymentStatusCompleted {
		t.Fatalf("API status %s", got2.Status)
	}
}

// Markup in an ext_id is text on both pages: no element is created and no
// script runs.
func TestBrowserMarkupIsText(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{})
	ext := `<img src=x onerror="document.title='pwned'"><b id="injected">bold</b>`
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString("300")})
	for _, c := range []struct{ url, sel string }{
		{w.ts.URL + "/sandbox/ui?refresh=0", "#pay-" + p.ID + " .ext-id"},
		{p.PaymentURL, "#ext-id"},
	} {
		run(t, ctx, chromedp.Navigate(c.url))
		if got := textOf(t, ctx, c.sel); got != ext {
			t.Fatalf("%s: ext_id shown as %q", c.url, got)
		}
		var injected bool
		var title string
		run(t, ctx, chromedp.Evaluate(`document.querySelector('#injected, img[src="x"]') !== null`, &injected),
			chromedp.Title(&title))
		if injected || title == "pwned" {
			t.Fatalf("%s: markup became live (element %v, title %q)", c.url, injected, title)
		}
	}
}

// A page of another origin that auto-submits a form to the dashboard is
// refused, even when it somehow knows the form token: the browser's
// Origin and Sec-Fetch-Site give it away.
func TestBrowserCrossSitePostRefused(t *testing.T) {
	ctx := newBrowser(t)
	before := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	w := newWorld(t, sandbox.Config{Now: func() time.Time { return before }})

	// The token, as a page of the sandbox would carry it.
	var token string
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"),
		chromedp.WaitReady(`#reset-form`, chromedp.ByQuery),
		chromedp.Value(`#reset-form input[name="token"]`, &token, chromedp.ByQuery))
	if len(token) != 64 {
		t.Fatalf("token %q", token)
	}

	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!DOCTYPE html><html><body>
<form id="f" method="post" action="%s/sandbox/ui/clock/advance">
<input name="seconds" value="86400"><input name="token" value="%s"><input name="page" value="payments">
</form>
<script>document.getElementById("f").submit();</script>
</body></html>`, w.ts.URL, token)
	}))
	defer evil.Close()

	run(t, ctx, chromedp.Navigate(evil.URL))
	waitLocation(t, ctx, w.ts.URL+"/sandbox/ui/clock/advance")
	var body string
	run(t, ctx, chromedp.Text("body", &body, chromedp.ByQuery))
	if !strings.Contains(body, "cross-site form post refused") {
		t.Fatalf("cross-site post answered: %q", body)
	}
	if now := w.sb.Now(); !now.Equal(before) {
		t.Fatalf("the clock moved: %s -> %s", before, now)
	}

	// The same form from the dashboard itself goes through.
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"),
		chromedp.SetValue("#advance-seconds", "3600", chromedp.ByQuery),
		chromedp.Submit("#advance-seconds", chromedp.ByQuery))
	want := before.Add(time.Hour).Format("2006-01-02 15:04:05 UTC")
	waitJS(t, ctx, fmt.Sprintf(`(document.getElementById("sandbox-now") || {}).textContent === %q`, want))
	if now := w.sb.Now(); !now.Equal(before.Add(time.Hour)) {
		t.Fatalf("the clock did not move by an hour: %s -> %s", before, now)
	}
}

// The payer can do everything from the keyboard: Tab reaches the copy
// buttons and "I have paid" in reading order, and Enter presses them.
func TestBrowserPaymentPageKeyboard(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{})
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "kbd-1", Amount: decimal.RequireFromString("1200"), Method: paykit.MethodSBP})
	run(t, ctx, chromedp.Navigate(p.PaymentURL), chromedp.WaitVisible(`button[data-what="Amount"]`, chromedp.ByQuery))
	var order []string
	for range 3 {
		var label string
		run(t, ctx, chromedp.KeyEvent("\t"),
			chromedp.Evaluate(`document.activeElement.getAttribute("aria-label") || document.activeElement.textContent`, &label))
		order = append(order, label)
	}
	if got := strings.Join(order, " | "); got != "Copy the amount | Copy the phone number | I have paid" {
		t.Fatalf("tab order: %s", got)
	}
	run(t, ctx, chromedp.KeyEvent("\r"), chromedp.WaitVisible(".note-processing", chromedp.ByQuery))
	if got := textOf(t, ctx, "#status"); got != "PROCESSING" {
		t.Fatalf("after Enter: status %q", got)
	}
}

// With auto-refresh on, a payment created after the page loaded appears
// by itself: the tester watches instead of pressing reload.
func TestBrowserAutoRefresh(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{})
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=1"), chromedp.WaitVisible(".empty", chromedp.ByQuery))
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "late-1", Amount: decimal.RequireFromString("450")})
	if got := textOf(t, ctx, "#pay-"+p.ID+" .ext-id"); got != "late-1" {
		t.Fatalf("row shows %q", got)
	}
}

// The screenshot of sandbox/README.md: a dashboard with payments in every state the
// tester acts on. The test always renders and checks it; -update writes
// it to docs/dashboard.png.
func TestBrowserDashboardScreenshot(t *testing.T) {
	ctx := newBrowser(t)
	base := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	m := newMerchant(t)
	w := newWorld(t, sandbox.Config{Now: func() time.Time { return base }})
	mk := func(ext, amount string, method paykit.PaymentMethod, country paykit.Country) *paykit.Payment {
		return w.pay(t, paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString(amount),
			Method: method, Country: country, NotifyURL: m.srv.URL + "/paykit/webhook"})
	}
	bg := context.Background()
	done := mk("order-1001", "1500.50", paykit.MethodCard, "")
	w.sb.Advance(time.Minute)
	_, err := w.client.ConfirmPayment(bg, done.ID, nil)
	mustNil(t, err)
	mustNil(t, w.sb.VerifyPayment(done.ID, sandbox.OutcomeCompleted))
	disputed := mk("order-1002", "2400", paykit.MethodSBP, "")
	_, err = w.client.CancelPayment(bg, disputed.ID)
	mustNil(t, err)
	_, err = w.client.OpenDispute(bg, disputed.ID, paykit.OpenDisputeParams{Comment: "Paid from my wife's card, receipt attached"})
	mustNil(t, err)
	w.sb.Advance(2 * time.Minute)
	waiting := mk("order-1003", "980", paykit.MethodCard, "")
	_, err = w.client.ConfirmPayment(bg, waiting.ID, nil)
	mustNil(t, err)
	w.sb.Advance(3 * time.Minute)
	mk("order-1004", "5000", paykit.MethodCrossBorder, paykit.CountryTJ)
	mk("order-1005", "750", paykit.MethodSIM, "")
	w.sb.Advance(4*time.Minute + 25*time.Second)
	w.flush(t)

	var shot []byte
	run(t, ctx,
		emulation.SetDeviceMetricsOverride(1280, 860, 1, false),
		chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"),
		chromedp.WaitVisible("#pay-"+waiting.ID+` button[value="completed"]`, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&shot))
	img, err := imgpng.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 860 {
		t.Fatalf("screenshot is %v", b)
	}
	if len(shot) >= maxScreenshotBytes {
		t.Fatalf("screenshot is %d bytes, over the %d limit", len(shot), maxScreenshotBytes)
	}
	t.Logf("dashboard screenshot: %d bytes", len(shot))
	if !update() {
		checkCommittedShot(t, "dashboard.png", 1280)
		return
	}
	if err := os.MkdirAll(filepath.Dir(screenshotPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(screenshotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", screenshotPath)
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A shared (remote) sandbox asks the browser for its control token: the
// dashboard sends it to the login form, a wrong token is refused, the
// right one opens the dashboard with a session cookie that page scripts
// cannot read (HttpOnly).
func TestBrowserRemoteDashboardLogin(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{AllowRemote: true, ControlToken: "team-token-42-9f3c2a7b1e8d4c6f0a5b9e2d"})
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "login-1", Amount: decimal.RequireFromString("900")})
	var loc string
	run(t, ctx, chromedp.Navigate(w.ts.URL+"/sandbox/ui?refresh=0"), chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/sandbox/login") {
		t.Fatalf("the dashboard went to %s, want the login form", loc)
	}
	run(t, ctx, chromedp.SendKeys("#token", "wrong", chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(".error", chromedp.ByQuery))
	if got := textOf(t, ctx, ".error"); !strings.Contains(got, "not this sandbox's control token") {
		t.Fatalf("after a wrong token: %q", got)
	}
	run(t, ctx, chromedp.SendKeys("#token", "team-token-42-9f3c2a7b1e8d4c6f0a5b9e2d", chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(`#pay-`+p.ID, chromedp.ByQuery))
	var cookies string
	run(t, ctx, chromedp.Evaluate(`document.cookie`, &cookies))
	if strings.Contains(cookies, "paykit_sandbox_session") || strings.Contains(cookies, "team-token-42-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatalf("a page script can read the session: %q", cookies)
	}
	// What the browser stored: one HttpOnly, SameSite=Strict session, not
	// the token.
	var jar []*network.Cookie
	run(t, ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		jar, err = network.GetCookies().Do(ctx)
		return err
	}))
	if len(jar) != 1 || jar[0].Name != "paykit_sandbox_session" || !jar[0].HTTPOnly ||
		jar[0].SameSite != network.CookieSameSiteStrict || strings.Contains(jar[0].Value, "team-token-42-9f3c2a7b1e8d4c6f0a5b9e2d") {
		t.Fatalf("cookies after the login: %+v", jar)
	}
	// Logged in, the dashboard's forms act: the clock moves by an hour.
	before := w.sb.Now()
	run(t, ctx, chromedp.SetValue("#advance-seconds", "3600", chromedp.ByQuery),
		chromedp.Submit("#advance-seconds", chromedp.ByQuery))
	// The page shows the sandbox's clock when it renders, seconds after
	// before on a loaded machine: an hour on, and less than a minute more.
	// The fixed-width format compares as a string.
	const shown = "2006-01-02 15:04:05 UTC"
	waitJS(t, ctx, fmt.Sprintf(`((t) => t >= %q && t < %q)((document.getElementById("sandbox-now") || {}).textContent || "")`,
		before.Add(time.Hour).Format(shown), before.Add(time.Hour+time.Minute).Format(shown)))
}

// A page of another site that auto-submits the payment page's I-paid form,
// even with the page's own form token, is refused: the payment stays
// PENDING. The payer's own press on the page still works.
func TestBrowserPaymentPageCrossSitePostRefused(t *testing.T) {
	ctx := newBrowser(t)
	w := newWorld(t, sandbox.Config{})
	p := w.pay(t, paykit.CreatePaymentParams{ExtID: "xsite-1", Amount: decimal.RequireFromString("1300")})
	var token string
	run(t, ctx, chromedp.Navigate(p.PaymentURL), chromedp.WaitReady(`#paid`, chromedp.ByQuery),
		chromedp.Value(`input[name="token"]`, &token, chromedp.ByQuery))
	if len(token) != 64 {
		t.Fatalf("token %q", token)
	}
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<!DOCTYPE html><html><body>
<form id="f" method="post" action="%s"><input name="token" value="%s"></form>
<script>document.getElementById("f").submit();</script>
</body></html>`, p.PaymentURL, token)
	}))
	defer evil.Close()
	run(t, ctx, chromedp.Navigate(evil.URL))
	waitLocation(t, ctx, p.PaymentURL)
	var body string
	run(t, ctx, chromedp.Text("body", &body, chromedp.ByQuery))
	if !strings.Contains(body, "cross-site or stale form refused") {
		t.Fatalf("cross-site I-paid answered: %q", body)
	}
	got, err := w.client.GetPayment(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != paykit.PaymentStatusPending {
		t.Fatalf("status %s after a cross-site post, want PENDING", got.Status)
	}
	run(t, ctx, chromedp.Navigate(p.PaymentURL), chromedp.Click("#paid", chromedp.ByQuery),
		chromedp.WaitVisible(".note-processing", chromedp.ByQuery))
	if got := textOf(t, ctx, "#status"); got != "PROCESSING" {
		t.Fatalf("after the payer's own press: status %q", got)
	}
}
